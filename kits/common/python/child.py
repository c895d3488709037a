"""child: plain plus a helper process (`sleep 600`) started at launch and never stopped. Its
stdio is /dev/null, so the server still exits as plain does; the helper is left behind."""

import subprocess
import sys

from kit_server import run

if __name__ == "__main__":
    helper = subprocess.Popen(
        ["sleep", "600"],
        stdin=subprocess.DEVNULL,
        stdout=subprocess.DEVNULL,
        stderr=subprocess.DEVNULL,
    )
    print(f"child: started helper pid {helper.pid}", file=sys.stderr, flush=True)
    run("{{line}}-{{label}}-child")
