#!/usr/bin/env bash
# The SDK fixes the book's `census --with-sdk` sections measure, built from the published
# releases so anyone can run the same before → after:
#   OUT/eof-close-1.32.2.tgz  @modelcontextprotocol/sdk 1.32.2 whose StdioServerTransport
#                             closes on stdin `end`/`close` (typescript-sdk#2002, the approach
#                             of PRs #2003/#2473)
#   OUT/mcp-1.30.0, OUT/mcp-2.3.0  the `mcp` sdists as git checkouts (tagged, so `--sdk`
#                             names them by release) whose stdio transport exits the process
#                             1 s after stdin's EOF, whatever user code still holds it
#                             (python-sdk#2231)
# Usage: scripts/sdk-fix-builds.sh OUT
# then:  mcp-shutdown census --listing conformance/census/servers.json \
#          --with-sdk typescript@local:eof-close=OUT/eof-close-1.32.2.tgz \
#          --with-sdk python@local:exit-on-eof=OUT/mcp-1.30.0 \
#          --with-sdk python@local:exit-on-eof-2=OUT/mcp-2.3.0 \
#          --scenario close --scenario exit --scenario crash --scenario stdin-null
set -euo pipefail
out=${1:?usage: scripts/sdk-fix-builds.sh OUT}
mkdir -p "$out"
out=$(cd "$out" && pwd)
tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT

(cd "$tmp" && npm pack -q @modelcontextprotocol/sdk@1.32.2 >/dev/null && tar xzf modelcontextprotocol-sdk-1.32.2.tgz)
python3 - "$tmp/package" <<'EOF'
import sys
root = sys.argv[1]
for p in (f"{root}/dist/esm/server/stdio.js", f"{root}/dist/cjs/server/stdio.js"):
    s = open(p).read()
    onerror = "        this._onerror = (error) => {\n            this.onerror?.(error);\n        };\n"
    listen = "        this._stdin.on('error', this._onerror);\n    }"
    unlisten = "        this._stdin.off('error', this._onerror);\n"
    assert onerror in s and listen in s and unlisten in s, p
    s = s.replace(onerror, onerror + (
        "        this._onend = () => {\n"
        "            if (this._started && !this._closed) {\n"
        "                this.close().catch(() => { });\n"
        "            }\n"
        "        };\n"), 1)
    s = s.replace(listen, (
        "        this._stdin.on('error', this._onerror);\n"
        "        this._stdin.on('end', this._onend);\n"
        "        this._stdin.on('close', this._onend);\n"
        "    }"), 1)
    s = s.replace(unlisten, unlisten + (
        "        this._stdin.off('end', this._onend);\n"
        "        this._stdin.off('close', this._onend);\n"
        "        if (this._closed) {\n"
        "            return;\n"
        "        }\n"
        "        this._closed = true;\n"), 1)
    open(p, "w").write(s)
EOF
tar czf "$out/eof-close-1.32.2.tgz" -C "$tmp" package

for v in 1.30.0 2.3.0; do
  rm -rf "${out:?}/mcp-$v"
  python3 -m pip download -q --no-deps --no-binary :all: "mcp==$v" -d "$tmp"
  tar xzf "$tmp/mcp-$v.tar.gz" -C "$out"
  git -C "$out/mcp-$v" init -q
  git -C "$out/mcp-$v" add -A
  git -C "$out/mcp-$v" -c user.name=sdk-fix -c user.email=sdk-fix@localhost commit -qm "mcp $v as published"
  git -C "$out/mcp-$v" tag "v$v"
  python3 - "$out/mcp-$v/src/mcp/server/stdio.py" <<'EOF'
import re, sys
p = sys.argv[1]
s = open(p).read()
helper = '''def _exit_after_grace(grace_s: float = 1.0) -> None:
    """python-sdk#2231: stdin's EOF ends the session, and whatever user code still holds the
    process (non-daemon threads, a lifespan that never returns) keeps it alive no longer than
    a grace for a clean exit."""
    import os as _os
    import threading as _threading
    import time as _time

    def _exit() -> None:
        _time.sleep(grace_s)
        try:
            sys.stdout.flush()
            sys.stderr.flush()
        finally:
            _os._exit(0)

    _threading.Thread(target=_exit, name="mcp-eof-exit", daemon=True).start()


'''
reader = re.search(r"\n( *)async def stdin_reader\(\):\n", s)
end = s.index("except anyio.ClosedResourceError", reader.end())
loop = re.search(r"\n( *)async for line in stdin:", s[reader.end():end])
at = s.rindex("\n", 0, end) + 1
s = s[:at] + loop.group(1) + "_exit_after_grace()\n" + s[at:]
at = s.index("@asynccontextmanager\nasync def stdio_server")
s = s[:at] + helper + s[at:]
open(p, "w").write(s)
EOF
  git -C "$out/mcp-$v" -c user.name=sdk-fix -c user.email=sdk-fix@localhost commit -qam "exit 1 s after stdin's EOF (python-sdk#2231)"
done
echo "built in $out: eof-close-1.32.2.tgz mcp-1.30.0 mcp-2.3.0"
