"""Run mcp-shutdown-conformance on an MCP stdio server and read its verdict.

A thin layer over the `mcp-shutdown` binary: `check()` runs `mcp-shutdown check --format json
-- COMMAND`, keeps the JSON report, and renders the report's own text (the matrix, every missed
rule, what held the server and the fix) with `mcp-shutdown report render`. Nothing is judged
here: the binary's exit code is the verdict, and the report's keys are read as they are.
"""

from __future__ import annotations

import json
import os
import shlex
import shutil
import signal
import subprocess
import sys
import tempfile
from dataclasses import dataclass, field
from typing import Any, Dict, List, Mapping, Optional, Sequence, Union

__all__ = ["check", "find_binary", "Missed", "Result", "NonConformance", "CannotCheck"]

# The binary's exit codes (README, "Exit codes").
CONFORMS, MISSED, USAGE_OR_HARNESS, INTERRUPTED = 0, 1, 2, 130
# 128 + signal: SIGHUP, SIGINT, SIGTERM.
INTERRUPTED_CODES = (129, INTERRUPTED, 143)


class CannotCheck(Exception):
    """The check could not give a verdict: the binary is missing, the command cannot start
    (a usage error), the harness failed, or the machine's load decided a case (exit 2)."""


class NonConformance(AssertionError):
    """The server missed a rule; the message is the report's text and the fix."""


@dataclass(frozen=True)
class Missed:
    """One missed rule of one case, as the report has it."""

    server: str
    scenario: str
    rule: str
    status: str  # FAILURE (a MUST) or WARNING (a SHOULD)
    message: str


@dataclass
class Result:
    """What one `mcp-shutdown check` said."""

    command: List[str]
    exit_code: int
    report: Optional[Dict[str, Any]]
    text: str
    stderr: str
    argv: List[str] = field(default_factory=list)

    @property
    def conforms(self) -> bool:
        """No rule was missed at the binary's `--fail-on` level (exit code 0)."""
        return self.exit_code == CONFORMS

    @property
    def missed(self) -> List[Missed]:
        """Every missed check, in report order."""
        out = []
        for r in (self.report or {}).get("results", []):
            for c in r.get("checks", []):
                if c.get("status") in ("FAILURE", "WARNING"):
                    out.append(
                        Missed(r["server"], r["scenario"], c["id"], c["status"], c.get("message", ""))
                    )
        return out

    @property
    def hints(self) -> List[str]:
        """The fixes the report gives for what held the server, each once."""
        seen: List[str] = []
        for r in (self.report or {}).get("results", []):
            hint = (r.get("diagnostics") or {}).get("hint")
            if hint and hint not in seen:
                seen.append(hint)
        return seen

    @property
    def fixes(self) -> List[dict]:
        """Every fix the report gives for what a server missed, its SDK's lines where known:
        dicts with `title`, `sdk`, `rules`, `text` and `code` (`lines`, `source`)."""
        servers = (self.report or {}).get("servers") or {}
        return [f for s in servers.values() for f in s.get("fixes", [])]

    def rule_held(self, rule: str) -> bool:
        """The rule was judged in some case and never missed."""
        judged = [
            c
            for r in (self.report or {}).get("results", [])
            for c in r.get("checks", [])
            if c.get("id") == rule
        ]
        return bool(judged) and not any(c.get("status") in ("FAILURE", "WARNING") for c in judged)

    def explain(self) -> str:
        """The report's text and what the binary said on stderr, for a failed test."""
        # The run's time line is for a person watching a terminal, not a failed test.
        said = "\n".join(
            l for l in self.stderr.splitlines() if l.strip() and not l.startswith("mcp-shutdown: time:")
        )
        head = f"{shlex.join(self.argv)} exited {self.exit_code}"
        parts = [head, self.text.rstrip()]
        if said:
            parts.append(said)
        return "\n\n".join(p for p in parts if p)

    def assert_conforms(self) -> "Result":
        """Raises NonConformance (exit 1) or CannotCheck (exit 2) with the report's text."""
        __tracebackhide__ = True
        if self.exit_code == MISSED:
            raise NonConformance(self.explain())
        if self.exit_code != CONFORMS:
            raise CannotCheck(self.explain())
        return self


def find_binary(explicit: Optional[str] = None) -> str:
    """The mcp-shutdown binary: `explicit`, else $MCP_SHUTDOWN_BIN, else `mcp-shutdown` beside
    this Python (the mcp-shutdown-conformance wheel installs it there) or on PATH."""
    for candidate in (explicit, os.environ.get("MCP_SHUTDOWN_BIN")):
        if candidate:
            return candidate
    beside = os.path.join(os.path.dirname(sys.executable), "mcp-shutdown")
    if os.access(beside, os.X_OK):
        return beside
    found = shutil.which("mcp-shutdown")
    if found:
        return found
    raise CannotCheck(
        "mcp-shutdown is not installed: pip install mcp-shutdown-conformance (or pass "
        "--mcp-shutdown-bin / set MCP_SHUTDOWN_BIN)"
    )


def _run(argv: Sequence[str], cwd: Optional[str], env: Optional[Mapping[str, str]]) -> subprocess.CompletedProcess:
    """Runs the binary; on Ctrl-C it is given its own SIGINT (it stops every server it started
    and exits 130) before the KeyboardInterrupt goes on."""
    proc = subprocess.Popen(
        list(argv),
        cwd=cwd,
        env=dict(env) if env is not None else None,
        stdin=subprocess.DEVNULL,
        stdout=subprocess.PIPE,
        stderr=subprocess.PIPE,
        text=True,
    )
    try:
        out, err = proc.communicate()
    except BaseException:
        proc.send_signal(signal.SIGINT)
        try:
            proc.wait(timeout=10)
        except subprocess.TimeoutExpired:
            proc.kill()
            proc.wait()
        raise
    return subprocess.CompletedProcess(proc.args, proc.returncode, out, err)


def check(
    command: Union[str, Sequence[str]],
    *,
    scenarios: Sequence[str] = (),
    args: Sequence[str] = (),
    cwd: Optional[str] = None,
    env: Optional[Mapping[str, str]] = None,
    binary: Optional[str] = None,
) -> Result:
    """Checks how the server `command` (shell words or an argv list) behaves when its session
    ends. `scenarios` limits the endings (default: the binary's); `args` are further flags of
    `mcp-shutdown check` (`--hosts`, `--fail-on must`, `--grace-ms 3000`)."""
    cmd = shlex.split(command) if isinstance(command, str) else list(command)
    if not cmd:
        raise CannotCheck("no server command given")
    exe = find_binary(binary)
    argv = [exe, "check", "--format", "json"]
    for s in scenarios:
        argv += ["--scenario", s]
    argv += list(args)
    argv += ["--", *cmd]
    try:
        done = _run(argv, cwd, env)
    except FileNotFoundError as e:
        raise CannotCheck(f"cannot run {exe}: {e.strerror}") from None
    if done.returncode in INTERRUPTED_CODES:
        raise KeyboardInterrupt
    report = None
    text = ""
    if done.returncode in (CONFORMS, MISSED) or done.stdout.lstrip().startswith("{"):
        try:
            report = json.loads(done.stdout)
        except ValueError:
            report = None
    if report is not None:
        text = _render_text(exe, report)
    return Result(cmd, done.returncode, report, text, done.stderr, argv)


def _render_text(exe: str, report: Dict[str, Any]) -> str:
    """The report's own text rendering (`mcp-shutdown report render --format text`)."""
    with tempfile.NamedTemporaryFile("w", suffix=".json", delete=False) as f:
        json.dump(report, f)
        path = f.name
    try:
        done = subprocess.run(
            [exe, "report", "render", "--format", "text", "--from", path],
            stdin=subprocess.DEVNULL,
            capture_output=True,
            text=True,
        )
        return done.stdout if done.returncode == 0 else done.stderr
    finally:
        os.unlink(path)
