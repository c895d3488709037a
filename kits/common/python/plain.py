"""plain: one `ping` tool over stdio and nothing else. Whether the process ends when stdin
reaches EOF is up to the SDK: `run()` returning lets the interpreter exit."""

from kit_server import run

if __name__ == "__main__":
    run("{{line}}-{{label}}-plain")
