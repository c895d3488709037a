"""thread: plain plus a non-daemon thread ticking every second (a cache refresher, a pool
keep-alive). When `run()` returns on EOF the interpreter still waits for the thread at exit,
so the process lives on until a signal ends it."""

import threading
import time

from kit_server import run


def tick() -> None:
    ticks = 0
    while True:
        time.sleep(1)
        ticks += 1


if __name__ == "__main__":
    threading.Thread(target=tick, name="ticker").start()  # daemon=False, the default
    run("{{line}}-{{label}}-thread")
