"""stubborn: plain plus an idle non-daemon thread and a SIGTERM handler that "cleans up" and
never exits: after EOF the thread holds the interpreter, SIGTERM is logged and ignored, and
only SIGKILL ends it."""

import signal
import sys
import threading
import time

from kit_server import run

NAME = "{{line}}-{{label}}-stubborn"


def idle() -> None:
    while True:
        time.sleep(60)


def on_sigterm(signum: int, frame: object) -> None:
    print(f"{NAME}: SIGTERM: cleaning up (and not exiting)", file=sys.stderr, flush=True)


if __name__ == "__main__":
    signal.signal(signal.SIGTERM, on_sigterm)
    threading.Thread(target=idle, name="idle").start()  # daemon=False, the default
    run(NAME)
