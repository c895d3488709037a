"""fixed: the thread server plus the remedy: one guarded `shutdown(reason)` that runs once,
stops the ticker and exits 0, called when `run()` returns (the SDK's stdio loop ended on
stdin EOF) and from the SIGTERM and SIGINT handlers."""

import os
import signal
import sys
import threading
import traceback

from kit_server import run

NAME = "{{line}}-{{label}}-fixed"
stop = threading.Event()
_shutting_down = False


def tick() -> None:
    ticks = 0
    while not stop.wait(1.0):
        ticks += 1


ticker = threading.Thread(target=tick, name="ticker")  # still non-daemon


def shutdown(reason: str, status: int = 0) -> None:
    """Runs once, whoever calls first. Every caller is on the main thread (Python runs signal
    handlers there), so a plain flag is the guard."""
    global _shutting_down
    if _shutting_down:
        return
    _shutting_down = True
    print(f"{NAME}: shutdown: {reason}", file=sys.stderr, flush=True)
    stop.set()
    ticker.join(timeout=1.0)  # bounded: cleanup must never keep the process alive
    sys.stderr.flush()
    # os._exit skips interpreter teardown, so nothing still running (a worker thread, an
    # event loop interrupted by the signal) can hold the process up.
    os._exit(status)


if __name__ == "__main__":
    signal.signal(signal.SIGTERM, lambda signum, frame: shutdown("sigterm"))
    signal.signal(signal.SIGINT, lambda signum, frame: shutdown("sigint"))
    ticker.start()
    try:
        run(NAME)  # returns when the stdio read loop ends on stdin EOF
    except BaseException:
        traceback.print_exc()
        shutdown("error", status=1)
    shutdown("stdin-eof")
