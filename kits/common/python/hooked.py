"""hooked: the thread server with the SDK's own session end wired to exit: when `run()`
returns (the SDK's stdio loop ended), `os._exit(0)`; nothing else watches for the end (no
fd 0 watch, no signal handlers). It exits on EOF exactly when the SDK's `run()` returns on
EOF: not in mcp 1.6.0 - 1.7.1, whose `run()` never returns. Otherwise the thread keeps it."""

import os
import sys
import threading
import time

from kit_server import run

NAME = "{{line}}-{{label}}-hooked"


def tick() -> None:
    while True:
        time.sleep(1)


if __name__ == "__main__":
    threading.Thread(target=tick, name="ticker").start()  # daemon=False, the default
    run(NAME)
    print(f"{NAME}: run() returned; exiting", file=sys.stderr, flush=True)
    os._exit(0)
