#!/usr/bin/env python3
"""Runs a composite action's `run:` steps on this machine, the way a GitHub runner would, for
testing `action.yml` where `act` (which needs Docker) cannot run.

What it does as the runner does: input defaults from `action.yml` and the given inputs (also
as `INPUT_<NAME>` variables); `${{ ... }}` expressions in `env:`, `run:`, `working-directory:`,
`with:` and the action's `outputs:`; `if:` conditions (`always()`, `success()`, `failure()`,
`==`, `!=`, `&&`, `||`, `!`, parentheses, `inputs.*`, `steps.<id>.outputs.*`, `env.*`,
`runner.*`, `github.*`); `shell: bash` as `bash --noprofile --norc -eo pipefail FILE`; the
files `GITHUB_OUTPUT`, `GITHUB_ENV`, `GITHUB_PATH`, `GITHUB_STEP_SUMMARY` (both `name=value` and
`name<<DELIMITER` forms); `RUNNER_TEMP`, `RUNNER_OS`, `RUNNER_ARCH`, `GITHUB_ACTION_PATH`,
`GITHUB_WORKSPACE`; a failed step skips the later steps that are not `always()`.

What it does not: `uses:` steps are not run; each is reported with its evaluated `with:` (so
a test can check, say, that the path an upload step names exists). No other expression
functions, no contexts beyond those above, no `shell:` other than bash, no masking, no
workflow commands (`::error::` lines are printed as they are).

Usage: local_runner.py ACTION_DIR WORKSPACE TEMP [--input NAME=VALUE ...]
Prints one JSON object: {"result", "steps": [...], "outputs": {...}, "summary"}; exits 0 when
every step that ran succeeded, 1 otherwise.
"""

from __future__ import annotations

import argparse
import json
import os
import re
import subprocess
import sys
from pathlib import Path

import yaml

EXPR = re.compile(r"\$\{\{(.*?)\}\}", re.S)
TOKEN = re.compile(
    r"\s*(?:(?P<str>'(?:[^']|'')*')|(?P<op>==|!=|&&|\|\||!|\(|\))"
    r"|(?P<fn>(?:always|success|failure|cancelled)\(\))"
    r"|(?P<ref>[A-Za-z_][\w-]*(?:\.[\w-]+)*)|(?P<num>\d+))"
)


class Context:
    def __init__(self, inputs: dict[str, str], env: dict[str, str]):
        self.inputs = inputs
        self.env = env
        self.steps: dict[str, dict[str, str]] = {}
        self.failed = False

    def lookup(self, ref: str) -> str:
        parts = ref.split(".")
        if parts[0] == "inputs" and len(parts) == 2:
            return self.inputs.get(parts[1], "")
        if parts[0] == "steps" and len(parts) == 4 and parts[2] == "outputs":
            return self.steps.get(parts[1], {}).get(parts[3], "")
        if parts[0] == "env" and len(parts) == 2:
            return self.env.get(parts[1], "")
        if parts[0] == "runner" and len(parts) == 2:
            return self.env.get(f"RUNNER_{parts[1].upper()}", "")
        if parts[0] == "github" and len(parts) == 2:
            return self.env.get(f"GITHUB_{parts[1].upper()}", "")
        if ref in ("true", "false"):
            return ref
        raise ValueError(f"unsupported expression reference `{ref}`")

    def evaluate(self, expr: str) -> object:
        """Translates the expression to Python over quoted values and evaluates that."""
        out: list[str] = []
        pos = 0
        expr = expr.strip()
        while pos < len(expr):
            m = TOKEN.match(expr, pos)
            if not m or m.end() == pos:
                raise ValueError(f"cannot parse expression `{expr}` at {pos}")
            pos = m.end()
            if m["str"] is not None:
                out.append(repr(m["str"][1:-1].replace("''", "'")))
            elif m["op"] is not None:
                out.append({"&&": " and ", "||": " or ", "!": " not "}.get(m["op"], m["op"]))
            elif m["fn"] is not None:
                out.append(
                    {
                        "always()": "True",
                        "success()": repr(not self.failed),
                        "failure()": repr(self.failed),
                        "cancelled()": "False",
                    }[m["fn"]]
                )
            elif m["num"] is not None:
                out.append(repr(m["num"]))
            else:
                out.append(repr(self.lookup(m["ref"])))
        return eval(" ".join(out), {"__builtins__": {}}, {})  # noqa: S307 - our own tokens only

    def substitute(self, text: object) -> str:
        return EXPR.sub(lambda m: str(self.evaluate(m.group(1))), str(text))

    def condition(self, step: dict) -> bool:
        cond = step.get("if")
        if cond is None:
            return not self.failed
        cond = str(cond).strip()
        if cond.startswith("${{") and cond.endswith("}}"):
            cond = cond[3:-2]
        # GitHub adds success() to a condition that names no status function.
        if not re.search(r"\b(always|success|failure|cancelled)\(\)", cond):
            cond = f"success() && ({cond})"
        return bool(self.evaluate(cond))


def read_kv_file(path: Path) -> dict[str, str]:
    """The `name=value` and `name<<DELIMITER` lines of GITHUB_OUTPUT / GITHUB_ENV."""
    values: dict[str, str] = {}
    lines = path.read_text().splitlines() if path.exists() else []
    i = 0
    while i < len(lines):
        line = lines[i]
        if "<<" in line and ("=" not in line or line.index("<<") < line.index("=")):
            name, delim = line.split("<<", 1)
            body = []
            i += 1
            while i < len(lines) and lines[i] != delim:
                body.append(lines[i])
                i += 1
            values[name] = "\n".join(body)
        elif "=" in line:
            name, value = line.split("=", 1)
            values[name] = value
        i += 1
    return values


def run(action_dir: Path, workspace: Path, temp: Path, given: dict[str, str]) -> dict:
    action = yaml.safe_load((action_dir / "action.yml").read_text())
    if action["runs"]["using"] != "composite":
        raise SystemExit("local_runner: only composite actions are supported")
    inputs = {name: str(spec.get("default", "")) for name, spec in action.get("inputs", {}).items()}
    unknown = sorted(set(given) - set(inputs))
    if unknown:
        raise SystemExit(f"local_runner: unknown inputs {unknown}")
    inputs.update(given)

    temp.mkdir(parents=True, exist_ok=True)
    summary = temp / "step_summary.md"
    summary.write_text("")
    env = dict(os.environ)
    env.update(
        {
            "CI": "true",
            "GITHUB_ACTIONS": "true",
            "GITHUB_ACTION_PATH": str(action_dir),
            "GITHUB_WORKSPACE": str(workspace),
            "GITHUB_STEP_SUMMARY": str(summary),
            "RUNNER_TEMP": str(temp),
            "RUNNER_OS": "Linux",
            "RUNNER_ARCH": "X64",
        }
    )
    # What GitHub sets for JavaScript actions; a composite action must map its inputs itself.
    for name, value in inputs.items():
        env[f"INPUT_{name.upper().replace(' ', '_')}"] = value
    ctx = Context(inputs, env)
    report = []
    for n, step in enumerate(action["runs"]["steps"]):
        sid = step.get("id", f"__step{n}")
        entry = {"id": sid, "name": step.get("name", sid)}
        report.append(entry)
        if not ctx.condition(step):
            entry["outcome"] = "skipped"
            continue
        if "uses" in step:
            entry["outcome"] = "not-run"
            entry["uses"] = step["uses"]
            entry["with"] = {k: ctx.substitute(v) for k, v in step.get("with", {}).items()}
            continue
        if step.get("shell") != "bash":
            raise SystemExit(f"local_runner: step {sid}: only shell: bash is supported")
        step_env = dict(ctx.env)
        for k, v in step.get("env", {}).items():
            step_env[k] = ctx.substitute(v)
        output = temp / f"output-{n}"
        envfile = temp / f"env-{n}"
        pathfile = temp / f"path-{n}"
        for f in (output, envfile, pathfile):
            f.write_text("")
        step_env.update(
            {"GITHUB_OUTPUT": str(output), "GITHUB_ENV": str(envfile), "GITHUB_PATH": str(pathfile)}
        )
        script = temp / f"step-{n}.sh"
        script.write_text(ctx.substitute(step["run"]))
        cwd = workspace / ctx.substitute(step.get("working-directory", "."))
        proc = subprocess.run(
            ["bash", "--noprofile", "--norc", "-eo", "pipefail", str(script)],
            cwd=cwd,
            env=step_env,
            stdin=subprocess.DEVNULL,
            capture_output=True,
            text=True,
        )
        sys.stderr.write(f"--- step {sid} ---\n{proc.stdout}{proc.stderr}")
        entry["exit_code"] = proc.returncode
        entry["stdout"] = proc.stdout
        entry["outcome"] = "success" if proc.returncode == 0 else "failure"
        ctx.steps[sid] = read_kv_file(output)
        ctx.env.update(read_kv_file(envfile))
        for p in reversed(pathfile.read_text().splitlines()):
            ctx.env["PATH"] = f"{p}{os.pathsep}{ctx.env['PATH']}"
        if proc.returncode != 0:
            ctx.failed = True
    outputs = {
        name: ctx.substitute(spec.get("value", "")) for name, spec in action.get("outputs", {}).items()
    }
    return {
        "result": "failure" if ctx.failed else "success",
        "steps": report,
        "outputs": outputs,
        "summary": summary.read_text(),
    }


def main(argv: list[str]) -> int:
    p = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    p.add_argument("action_dir", type=Path)
    p.add_argument("workspace", type=Path)
    p.add_argument("temp", type=Path)
    p.add_argument("--input", action="append", default=[], metavar="NAME=VALUE")
    a = p.parse_args(argv)
    given = dict(i.split("=", 1) for i in a.input)
    result = run(a.action_dir.resolve(), a.workspace.resolve(), a.temp.resolve(), given)
    print(json.dumps(result, indent=2))
    return 0 if result["result"] == "success" else 1


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
