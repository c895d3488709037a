"""slow-tool: plain plus a tool `slow` that answers "done" after 3 s, for the `inflight`
ending (a request still running when stdin closes)."""

from kit_server import run

if __name__ == "__main__":
    run("{{line}}-{{label}}-slow-tool", slow=True)
