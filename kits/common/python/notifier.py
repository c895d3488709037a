"""notifier: plain plus a task that sends a log notification (`notifications/message`) through
the SDK's own write stream every 200 ms. Python ignores SIGPIPE, so once the client died a
write to stdout fails with BrokenPipeError inside the SDK's writer; whether that ends the
server, and how, is the SDK's doing. A failed send is logged to stderr and the task goes on."""

from kit_server import run

if __name__ == "__main__":
    run("{{line}}-{{label}}-notifier", notify=True)
