"""fixed: the thread server plus the remedy: one guarded `shutdown(reason)` that runs once,
stops the ticker and exits 0, called when
- `run()` returns (the SDK's stdio loop ended on stdin EOF): "stdin-eof";
- stdin's pipe reports hang-up (every writer closed it), watched without reading, for the SDK
  releases whose `run()` does not return on EOF (mcp 1.6.0 and 1.7.0 among them): "stdin-hup";
- SIGTERM and SIGINT: "sigterm", "sigint".
"""

import os
import select
import signal
import sys
import threading
import traceback

from kit_server import run

NAME = "{{line}}-{{label}}-fixed"
stop = threading.Event()
_guard = threading.Lock()


def tick() -> None:
    ticks = 0
    while not stop.wait(1.0):
        ticks += 1


ticker = threading.Thread(target=tick, name="ticker")  # still non-daemon


def shutdown(reason: str, status: int = 0) -> None:
    """Runs once, whoever calls first (the main thread, a signal handler or the watcher)."""
    if not _guard.acquire(blocking=False):
        return
    print(f"{NAME}: shutdown: {reason}", file=sys.stderr, flush=True)
    stop.set()
    if threading.current_thread() is not ticker:
        ticker.join(timeout=1.0)  # bounded: cleanup must never keep the process alive
    sys.stderr.flush()
    # os._exit skips interpreter teardown, so nothing still running (a worker thread, an
    # event loop interrupted by the signal) can hold the process up.
    os._exit(status)


def watch_stdin() -> None:
    """Blocks until fd 0 reports POLLHUP. An empty event mask: poll reports only hang-up and
    errors, so this never competes with the SDK for the data."""
    p = select.poll()
    p.register(0, 0)
    while True:
        for _, ev in p.poll():
            if ev & (select.POLLHUP | select.POLLERR | select.POLLNVAL):
                shutdown("stdin-hup")
                return


if __name__ == "__main__":
    signal.signal(signal.SIGTERM, lambda signum, frame: shutdown("sigterm"))
    signal.signal(signal.SIGINT, lambda signum, frame: shutdown("sigint"))
    ticker.start()
    threading.Thread(target=watch_stdin, name="stdin-watch", daemon=True).start()
    try:
        run(NAME)  # returns when the stdio read loop ends on stdin EOF
    except BaseException:
        traceback.print_exc()
        shutdown("error", status=1)
    shutdown("stdin-eof")
