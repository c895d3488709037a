#!/usr/bin/env python3
"""Measures the close ladder of each real MCP SDK client against the recorder server.

For every client fixture under fixtures/clients/<sdk>-<version>/ (a directory with a
client.toml), runs the client against fixtures/recorder/recorder.py, a server that ignores
stdin EOF, SIGTERM, SIGINT and SIGHUP and logs everything done to it, and derives from the
recorder's log and the processes' deaths what the client's close() did:

  steps    [{do: close-stdin|sigterm|sigint|sighup|sigkill|nothing, to: process|group|tree,
             at_ms}], at_ms counted from "close start" as the client itself printed it
  waits_ms the time between consecutive steps
  close_returned_ms, stdin_closed, unbounded (close() had not returned by the bound)

The setup is bounded and has no subreaper: the client leads a session of its own, the
recorder processes _exit after their lifetime, and whatever is still alive at the end is
SIGKILLed by pidfd. The measuring window is [close start, release): release is when this
script closes the client's stdin to let it exit (after close() returned and the server died,
or `--settle` seconds after close() returned), or when the bound ran out; what happens after
(the client's exit closing its pipes) is reported separately, never as a step.

Output: a Markdown table on stdout, `--json PATH` (or `-` for stdout, then no table) and
`--md PATH`. `--sweep-ts DIR` also installs every published 1.x release of
@modelcontextprotocol/sdk into DIR (npm install --before <its release time + 1 h>, sharing
npm's cache) and measures the TypeScript client of each. Python 3.11 standard library only.
"""

import argparse
import concurrent.futures
import datetime
import json
import os
import re
import select
import shutil
import signal
import subprocess
import sys
import tempfile
import time
import tomllib

ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
RECORDER = os.path.join(ROOT, "fixtures", "recorder", "recorder.py")
CLIENTS = os.path.join(ROOT, "fixtures", "clients")
TS_CLIENT = os.path.join(CLIENTS, "typescript-1.32.2", "client.mjs")
SIGNAL_NAMES = {1: "sighup", 2: "sigint", 15: "sigterm"}
MATCH_NS = 1_000_000_000  # a group/tree signal reaches every member within this of the server


def now_ns() -> int:
    return time.clock_gettime_ns(time.CLOCK_MONOTONIC)


# ---- the pure part: from what was observed to the ladder -------------------------------

def _ms(t_ns: int, t0_ns: int) -> float:
    return round((t_ns - t0_ns) / 1e6, 1)


def derive(events: list, deaths: dict, obs: dict) -> dict:
    """The measured ladder.

    events: the recorder log (dicts with t_ns, role, ev, ...).
    deaths: role -> CLOCK_MONOTONIC ns of its exit as seen by pidfd (None: gone unseen).
    obs: close_start_ns, close_returned_ns (or None), release_ns, client_pid, bound_hit.
    """
    t0, end = obs["close_start_ns"], obs["release_ns"]
    in_window = lambda t: t is not None and t0 <= t <= end  # noqa: E731
    pids = {e["role"]: e["pid"] for e in events if e["ev"] == "start"}
    steps, notes = [], []
    lifetime_roles = {e["role"] for e in events if e["ev"] == "lifetime"}

    eof = [e for e in events if e["role"] == "server" and e["ev"] == "stdin_eof"]
    stdin_at = eof[0]["t_ns"] if eof else None
    if in_window(stdin_at):
        steps.append({"do": "close-stdin", "to": "process", "at_ns": stdin_at,
                      "how": eof[0].get("how"), "stdin": eof[0].get("stdin")})
    elif stdin_at is not None and stdin_at < t0:
        notes.append("stdin reached EOF before close start")

    sigs = [e for e in events if e["ev"] == "signal"]
    used = set()
    for s in [e for e in sigs if e["role"] == "server" and in_window(e["t_ns"])]:
        reached = {"server"}
        for role in ("child", "grandchild"):
            for i, o in enumerate(sigs):
                if (i not in used and o["role"] == role and o["signo"] == s["signo"]
                        and o["si_pid"] == s["si_pid"] and abs(o["t_ns"] - s["t_ns"]) <= MATCH_NS):
                    used.add(i)
                    reached.add(role)
                    break
        steps.append({"do": SIGNAL_NAMES.get(s["signo"], f"sig{s['signo']}"),
                      "to": target(reached), "at_ns": s["t_ns"],
                      "sender": sender(s["si_pid"], obs["client_pid"], pids),
                      "si_code": s.get("code_name")})
    for i, o in enumerate(sigs):
        if i not in used and o["role"] != "server" and in_window(o["t_ns"]):
            notes.append(f"{o['name']} reached the {o['role']} only (from pid {o['si_pid']})")

    died = {r: t for r, t in deaths.items() if in_window(t) and r not in lifetime_roles}
    if "server" in died:
        steps.append({"do": "sigkill", "to": target(set(died)), "at_ns": died["server"],
                      "seen_as": "exit of the recorder (it ignores every catchable signal)",
                      "exit_status": obs.get("server_exit_status")})
    elif died:
        notes.append(f"killed without the server: {sorted(died)}")
    if any(deaths.get(r, 0) is None for r in ("server", "child", "grandchild")):
        notes.append("a recorder process was gone before it could be watched")

    steps = order_steps(steps)
    if not steps or steps[0]["do"] != "close-stdin":
        steps.insert(0, {"do": "nothing", "to": "process", "at_ns": t0})
    out_steps = []
    for s in steps:
        d = {k: v for k, v in s.items() if k != "at_ns" and v is not None}
        d["at_ms"] = _ms(s["at_ns"], t0)
        out_steps.append(d)
    waits = [max(0.0, round(b["at_ms"] - a["at_ms"], 1)) for a, b in zip(out_steps, out_steps[1:])]
    returned = obs.get("close_returned_ns")
    unwritable = [e for e in events if e["role"] == "server" and e["ev"] == "stdout_unwritable"]
    return {
        "steps": out_steps,
        "waits_ms": waits,
        "close_returned_ms": _ms(returned, t0) if returned is not None else None,
        "unbounded": returned is None and obs.get("bound_hit", False) and "server" not in died,
        "stdin_closed": in_window(stdin_at),
        "stdin_closed_after_release_ms": _ms(stdin_at, t0) if stdin_at and stdin_at > end else None,
        "stdin_kind": eof[0].get("stdin") if eof else next(
            (e.get("stdin") for e in events if e["ev"] == "start" and e["role"] == "server"), None),
        "stdout_unwritable_ms": _ms(unwritable[0]["t_ns"], t0) if unwritable else None,
        "release_ms": _ms(end, t0),
        "server_left_running": "server" not in died,
        "notes": notes,
    }


# Two steps closer together than this are one instant: the recorder's threads time them,
# and their order within a few milliseconds is the scheduler's, not the client's. Within an
# instant they are put in a fixed order (signals, then close-stdin, then the SIGKILL seen as
# an exit), the order of Java's Process.destroy(): signal first, then close the pipes. No
# client known waits less than 100 ms on purpose between two different actions.
INSTANT_NS = 50_000_000
RANK = {"sigterm": 0, "sigint": 0, "sighup": 0, "close-stdin": 1, "sigkill": 2}


def order_steps(steps: list) -> list:
    """Time order, with steps of one instant in the fixed order RANK."""
    steps = sorted(steps, key=lambda s: s["at_ns"])
    out, group = [], []
    for s in steps:
        if group and s["at_ns"] - group[0]["at_ns"] > INSTANT_NS:
            out += sorted(group, key=lambda g: RANK.get(g["do"], 1))
            group = []
        group.append(s)
    return out + sorted(group, key=lambda g: RANK.get(g["do"], 1))


def target(reached: set) -> str:
    """A signal that reached the grandchild (own session) went to the whole tree; one that
    reached the child (same group) went to the group."""
    if "grandchild" in reached:
        return "tree"
    if "child" in reached:
        return "group"
    return "process"


def sender(si_pid: int, client_pid: int, pids: dict) -> str:
    if si_pid == client_pid:
        return "client"
    for role, pid in pids.items():
        if pid == si_pid:
            return role
    return f"pid {si_pid}"


def ladder_text(steps: list) -> str:
    """`close-stdin` → 2002 ms → `sigterm` → ... in one line."""
    parts = []
    for i, s in enumerate(steps):
        if i:
            parts.append(f"{max(0.0, s['at_ms'] - steps[i - 1]['at_ms']):.0f} ms")
        to = "" if s["to"] == "process" else f" ({s['to']})"
        parts.append(f"`{s['do']}`{to}")
    return " → ".join(parts)


def profile_text(profile: dict) -> str:
    parts = []
    for s in profile.get("steps", []):
        to = s.get("to", "process")
        parts.append(f"`{s['do']}`" + ("" if to == "process" else f" ({to})"))
        parts.append(f"{s['wait_ms']} ms")
    text = " → ".join(parts[:-1]) if parts else ""
    return text + (" → waits forever" if profile.get("unbounded") else "")


# ---- the impure part: running a client against the recorder ---------------------------

def proc_exit_status(pid: int):
    """Wait status of a zombie (field 52 of /proc/pid/stat), if the parent has not reaped it."""
    try:
        with open(f"/proc/{pid}/stat") as f:
            fields = f.read().rsplit(")", 1)[1].split()
    except (OSError, IndexError):
        return None
    if fields[0] != "Z" or len(fields) < 50:
        return None
    status = int(fields[49])
    if status & 0x7F:
        return {"signal": status & 0x7F}
    return {"exit_code": (status >> 8) & 0xFF}


def measure(client_dir: str, command: list, bound_s: float, settle_s: float,
            startup_s: float = 60.0) -> dict:
    """Runs one client against the recorder and returns what derive() makes of it."""
    tmp = tempfile.mkdtemp(prefix="ladder-")
    log_path = os.path.join(tmp, "recorder.jsonl")
    server_cmd = [sys.executable, RECORDER, "--log", log_path]
    # The log path is also on the recorder's command line: several SDK clients give the
    # server only a filtered environment.
    env = dict(os.environ, RECORDER_LOG=log_path)
    stderr = open(os.path.join(tmp, "client.stderr"), "wb")
    p = subprocess.Popen(command + ["--"] + server_cmd, cwd=client_dir, env=env,
                         stdin=subprocess.PIPE, stdout=subprocess.PIPE, stderr=stderr,
                         start_new_session=True)
    os.set_blocking(p.stdout.fileno(), False)
    started = now_ns()
    pidfds = {"client": os.pidfd_open(p.pid)}
    deaths, events, out_lines = {}, [], []
    obs = {"client_pid": p.pid, "close_start_ns": None, "close_returned_ns": None,
           "release_ns": None, "bound_hit": False}
    log_buf, out_buf, log_pos, tree = b"", b"", 0, None
    error = None
    released_exit_deadline = None

    def read_log() -> None:
        nonlocal log_buf, log_pos, tree
        try:
            with open(log_path, "rb") as f:
                f.seek(log_pos)
                chunk = f.read()
        except FileNotFoundError:
            return
        log_pos += len(chunk)
        log_buf += chunk
        *lines, log_buf = log_buf.split(b"\n")
        for line in lines:
            if line.strip():
                e = json.loads(line)
                events.append(e)
                if e["ev"] == "tree" and tree is None:
                    tree = e
                    watch("server", e["pid"])
                    for role in ("child", "grandchild"):
                        if e.get(role):
                            watch(role, e[role])

    def watch(role: str, pid: int) -> None:
        try:
            pidfds[role] = os.pidfd_open(pid)
        except ProcessLookupError:
            deaths[role] = None

    def release(t: int) -> None:
        nonlocal released_exit_deadline
        obs["release_ns"] = t
        try:
            p.stdin.close()
        except OSError:
            pass
        released_exit_deadline = t + 10_000_000_000

    try:
        while True:
            poller = select.poll()
            fd_role = {}
            for role, fd in pidfds.items():
                if role not in deaths:
                    poller.register(fd, select.POLLIN)
                    fd_role[fd] = role
            if not p.stdout.closed:
                poller.register(p.stdout.fileno(), select.POLLIN)
            ready = poller.poll(2 if tree is None else 10)
            t = now_ns()
            for fd, _ in ready:
                if fd in fd_role:
                    role = fd_role[fd]
                    deaths[role] = t
                    if role == "server" and tree:
                        obs["server_exit_status"] = proc_exit_status(tree["pid"])
                elif not p.stdout.closed:
                    chunk = os.read(fd, 65536)
                    if not chunk:
                        p.stdout.close()
                    out_buf += chunk
                    *lines, out_buf = out_buf.split(b"\n")
                    for line in lines:
                        try:
                            msg = json.loads(line)
                        except ValueError:
                            continue
                        out_lines.append(msg)
                        if msg.get("event") == "close_start":
                            obs["close_start_ns"] = int(msg["t_ns"])
                        elif msg.get("event") == "close_returned":
                            obs["close_returned_ns"] = int(msg["t_ns"])
            read_log()
            if obs["release_ns"] is None:
                if obs["close_start_ns"] is None:
                    if "client" in deaths:
                        error = "the client exited before close start"
                        obs["release_ns"] = t
                        break
                    if t - started > startup_s * 1e9:
                        error = f"no close start within {startup_s:.0f} s"
                        obs["release_ns"] = t
                        break
                elif obs["close_returned_ns"] is not None:
                    if "server" in deaths or t - obs["close_returned_ns"] >= settle_s * 1e9:
                        release(t)
                elif "client" in deaths:
                    release(t)
                elif t - obs["close_start_ns"] >= bound_s * 1e9:
                    obs["bound_hit"] = True
                    release(t)
                    os.killpg(p.pid, signal.SIGKILL)
            elif "client" in deaths:
                # Let a stdin EOF caused by the client's exit land in the log, then stop.
                time.sleep(0.2)
                read_log()
                break
            elif t >= released_exit_deadline:
                os.killpg(p.pid, signal.SIGKILL)
                released_exit_deadline = t + 10_000_000_000
    finally:
        for role in ("server", "child", "grandchild", "client"):
            fd = pidfds.get(role)
            if fd is not None and role not in deaths:
                try:
                    signal.pidfd_send_signal(fd, signal.SIGKILL)
                except ProcessLookupError:
                    pass
        try:
            os.killpg(p.pid, signal.SIGKILL)
        except (ProcessLookupError, PermissionError):
            pass
        p.wait(timeout=30)
        for role, fd in pidfds.items():
            select.select([fd], [], [], 5)
            os.close(fd)
        stderr.close()
    with open(os.path.join(tmp, "client.stderr"), "rb") as f:
        client_stderr = f.read().decode(errors="replace")[-4000:]
    shutil.rmtree(tmp, ignore_errors=True)
    if error or obs["close_start_ns"] is None:
        return {"error": error or "no close start", "stderr_tail": client_stderr,
                "client_stdout": out_lines}
    result = derive(events, deaths, obs)
    result["server_pid_seen_by_client"] = next(
        (m.get("server_pid") for m in out_lines if m.get("event") == "listed"), None)
    if result["close_returned_ms"] is None and not result["unbounded"]:
        result["notes"].append("the client exited without printing close_returned")
        result["stderr_tail"] = client_stderr
    return result


# ---- fixtures, setup, sweep -------------------------------------------------------------

def load_clients(names: list) -> list:
    out = []
    for name in sorted(os.listdir(CLIENTS)):
        path = os.path.join(CLIENTS, name, "client.toml")
        if not os.path.isfile(path) or (names and name not in names):
            continue
        with open(path, "rb") as f:
            meta = tomllib.load(f)
        meta["name"] = name
        meta["dir"] = os.path.join(CLIENTS, name)
        out.append(meta)
    return out


def setup(meta: dict) -> str:
    """Runs the fixture's setup (idempotent: each script keeps its own stamp)."""
    missing = [p for p in meta.get("setup", {}).get("requires", []) if not shutil.which(p)]
    if missing:
        return f"not installed: needs {', '.join(missing)}"
    cmd = meta.get("setup", {}).get("command")
    if not cmd:
        return ""
    r = subprocess.run(cmd, cwd=meta["dir"], stdin=subprocess.DEVNULL,
                       stdout=subprocess.PIPE, stderr=subprocess.STDOUT)
    if r.returncode:
        return "setup failed: " + r.stdout.decode(errors="replace")[-2000:]
    return ""


def semver_key(v: str) -> tuple:
    return tuple(int(x) for x in v.split("."))


def sweep_clients(sweep_dir: str, only: list) -> list:
    times = json.loads(subprocess.run(
        ["npm", "view", "@modelcontextprotocol/sdk", "time", "--json"],
        check=True, stdout=subprocess.PIPE).stdout)
    versions = sorted((v for v in times if re.fullmatch(r"1\.\d+\.\d+", v)), key=semver_key)
    if only:
        versions = [v for v in versions if v in only]
    out = []
    for v in versions:
        d = os.path.join(sweep_dir, v)
        os.makedirs(d, exist_ok=True)
        shutil.copy(TS_CLIENT, os.path.join(d, "client.mjs"))
        installed = os.path.join(d, "node_modules", "@modelcontextprotocol", "sdk", "package.json")
        ok = os.path.isfile(installed) and json.load(open(installed))["version"] == v
        err = ""
        if not ok:
            with open(os.path.join(d, "package.json"), "w") as f:
                json.dump({"name": "ladder-sweep", "version": "0.0.0", "private": True,
                           "type": "module",
                           "dependencies": {"@modelcontextprotocol/sdk": v}}, f, indent=2)
            published = datetime.datetime.fromisoformat(times[v].replace("Z", "+00:00"))
            before = (published + datetime.timedelta(hours=1)).strftime("%Y-%m-%dT%H:%M:%SZ")
            r = subprocess.run(["npm", "install", "--no-audit", "--no-fund", "--before", before],
                               cwd=d, stdin=subprocess.DEVNULL, stdout=subprocess.PIPE,
                               stderr=subprocess.STDOUT)
            if r.returncode:
                err = "npm install failed: " + r.stdout.decode(errors="replace")[-1000:]
        out.append({"name": f"typescript-{v}", "sdk": "typescript", "version": v,
                    "released": times[v], "dir": d, "command": ["node", "client.mjs"],
                    "setup_error": err})
    return out


def run_all(clients: list, bound_s: float, settle_s: float, jobs: int) -> list:
    def one(meta: dict) -> dict:
        row = {k: meta.get(k) for k in ("name", "sdk", "version", "profile", "released")
               if meta.get(k) is not None}
        if meta.get("setup_error"):
            row["error"] = meta["setup_error"]
            return row
        row.update(measure(meta["dir"], meta["command"], bound_s, settle_s))
        return row

    with concurrent.futures.ThreadPoolExecutor(max_workers=jobs) as pool:
        return list(pool.map(one, clients))


def load_profiles() -> dict:
    with open(os.path.join(ROOT, "conformance", "profiles.toml"), "rb") as f:
        return {p["id"]: p for p in tomllib.load(f).get("profile", [])}


def markdown(rows: list, profiles: dict) -> str:
    lines = ["| client | measured ladder (from close start) | close() returned | stdin closed "
             "| server after close() | profile in profiles.toml |",
             "|---|---|---|---|---|---|"]
    for r in rows:
        prof = profiles.get(r.get("profile", ""))
        ptext = f"`{r['profile']}`: {profile_text(prof)}" if prof else (
            f"`{r['profile']}` (none)" if r.get("profile") else "–")
        if "error" in r:
            lines.append(f"| {r['name']} | {r['error'].splitlines()[0][:120]} | – | – | – | {ptext} |")
            continue
        ret = ("never (bound)" if r["unbounded"] else
               f"{r['close_returned_ms']:.0f} ms" if r["close_returned_ms"] is not None else "–")
        stdin = "yes" if r["stdin_closed"] else (
            "only by client exit" if r.get("stdin_closed_after_release_ms") is not None else "no")
        left = "left running" if r["server_left_running"] else "killed"
        lines.append(f"| {r['name']} | {ladder_text(r['steps'])} | {ret} | {stdin} | {left} "
                     f"| {ptext} |")
    return "\n".join(lines) + "\n"


def shape_of(row: dict) -> str:
    """A ladder with its waits rounded to 0.5 s: the clients' timers, without the jitter."""
    if "error" in row:
        return "error: " + row["error"].splitlines()[0][:80]
    steps = [dict(s) for s in row["steps"]]
    parts = []
    for i, s in enumerate(steps):
        if i:
            wait = max(0.0, s["at_ms"] - steps[i - 1]["at_ms"])
            parts.append(f"{round(wait / 500) * 0.5:g} s")
        parts.append(f"`{s['do']}`" + ("" if s["to"] == "process" else f" ({s['to']})"))
    left = "server left running" if row["server_left_running"] else "server killed"
    return " → ".join(parts) + f"; {left}"


def sweep_summary(rows: list) -> str:
    """Consecutive versions with the same ladder shape, one line per run of them."""
    runs = []
    for r in rows:
        shape = shape_of(r)
        if runs and runs[-1][2] == shape:
            runs[-1][1] = r["version"]
            runs[-1][3] += 1
        else:
            runs.append([r["version"], r["version"], shape, 1])
    lines = ["| versions | releases | ladder (waits rounded to 0.5 s) |", "|---|---|---|"]
    for first, last, shape, n in runs:
        span = first if first == last else f"{first} – {last}"
        lines.append(f"| {span} | {n} | {shape} |")
    return "\n".join(lines) + "\n"


def main() -> int:
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("clients", nargs="*", help="client fixture names (default: all)")
    ap.add_argument("--json", help="write the results as JSON here (`-`: stdout, no table)")
    ap.add_argument("--md", help="write the Markdown table here")
    ap.add_argument("--no-setup", action="store_true", help="do not run the setup scripts")
    ap.add_argument("--bound", type=float, default=25.0,
                    help="seconds after close start before close() counts as unbounded")
    ap.add_argument("--settle", type=float, default=1.0,
                    help="seconds to keep watching after close() returned with the server alive")
    ap.add_argument("--jobs", type=int, default=4)
    ap.add_argument("--sweep-ts", metavar="DIR",
                    help="also measure every published 1.x TypeScript SDK, installed into DIR")
    ap.add_argument("--sweep-versions", default="", help="comma-separated subset for --sweep-ts")
    ap.add_argument("--sweep-only", action="store_true", help="measure only the sweep")
    a = ap.parse_args()

    clients = [] if a.sweep_only else load_clients(a.clients)
    for meta in clients:
        if not a.no_setup:
            meta["setup_error"] = setup(meta)
    if a.sweep_ts:
        only = [v for v in a.sweep_versions.split(",") if v]
        clients += sweep_clients(os.path.abspath(a.sweep_ts), only)
    rows = run_all(clients, a.bound, a.settle, a.jobs)
    profiles = load_profiles()
    doc = {"recorder": os.path.relpath(RECORDER, ROOT), "bound_s": a.bound,
           "settle_s": a.settle, "clients": rows}
    if a.json == "-":
        json.dump(doc, sys.stdout, indent=1)
        sys.stdout.write("\n")
    elif a.json:
        with open(a.json, "w") as f:
            json.dump(doc, f, indent=1)
    table = markdown(rows, profiles)
    swept = [r for r in rows if r.get("released")]
    if swept:
        table += "\nTypeScript SDK, every published 1.x release in version order:\n\n"
        table += sweep_summary(swept)
    if a.md:
        with open(a.md, "w") as f:
            f.write(table)
    if a.json != "-":
        sys.stdout.write(table)
    return 0


if __name__ == "__main__":
    sys.exit(main())
