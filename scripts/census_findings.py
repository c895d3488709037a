#!/usr/bin/env python3
"""Prints the census findings paragraph (and, with --leaderboard, the close column of the
leaderboard) from a census JSON report, so that nothing in them is written by hand.

Usage: scripts/census_findings.py CENSUS.json [--leaderboard]

It states the run's machine (CPUs, load average over the cases) and its --repeat, and
publishes only what the report can defend:
  - a verdict that held on every run (a repeated case that is not flaky, or a single run,
    which the paragraph then says was run once);
  - a case marked FLAKY, with its distribution ("eof 3/5, sigterm 2/5");
  - never a machine-bound case (the machine's load decided it): those are listed as
    "re-run", apart from the findings.
Exit status: 0; 1 when the report has no census cases."""
import json
import sys

CLOSE = "close"


def runs(case):
    rep = case.get("repeat")
    return len(rep["runs"]) if rep else 1


def flaky(case):
    rep = case.get("repeat")
    return bool(rep and rep.get("flaky"))


def distribution(case):
    rep = case["repeat"]
    n = len(rep["runs"])
    parts = sorted(rep["stages"].items(), key=lambda kv: (-kv[1], kv[0]))
    return ", ".join(f"{s} {k}/{n}" for s, k in parts)


def has_verdict(case):
    """Ran and was judged: no error that is not the server's, not marked not testable."""
    if case.get("not_testable"):
        return False
    err = case.get("error")
    return not err or err.get("owner") == "server"


def verdict(case):
    """What may be published of one case: ("re-run", why) | ("flaky", dist) | (stage, ms)."""
    if case.get("machine_bound"):
        return ("re-run", case["machine_bound"])
    if flaky(case):
        return ("flaky", distribution(case))
    return (case.get("stage"), latency(case))


def latency(case):
    rep = case.get("repeat") or {}
    lat = rep.get("latency_ms")
    if lat:
        return lat["median"]
    return case.get("exit_ms")


def seconds(ms):
    return f"{ms / 1000:.1f} s" if ms is not None else "no exit"


def display(report, server):
    info = report.get("servers", {}).get(server) or {}
    package = info.get("package") or {}
    return package.get("identifier") or server


def machine_line(report, cases):
    host = report.get("host", {})
    loads = [c["load_avg"] for c in cases if c.get("load_avg") is not None]
    load = (
        f"load average {min(loads):.1f}–{max(loads):.1f} during the run"
        if loads
        else "load not recorded (a report from before machine-bound cases were judged: re-run it)"
    )
    reps = sorted({runs(c) for c in cases})
    rep = f"--repeat {reps[0]}" if len(reps) == 1 else f"--repeat {reps[0]}–{reps[-1]}"
    once = " (each case ran once: a verdict is what one run showed)" if reps == [1] else ""
    return (
        f"{len(cases)} cases, spec {report.get('spec')}, on Linux {host.get('kernel', '?')} "
        f"with {host.get('cpus', '?')} CPUs, {load}, {rep}{once}"
    )


def names(items):
    return ", ".join(items) if items else "none"


def status(case, rule):
    """The case's status for one rule, or None when the rule was not checked."""
    for k in case.get("checks", []):
        if k["id"] == rule:
            return k["status"]
    return None


def published(judged, scenario):
    """The cases of a scenario that carry a verdict of the server's (not machine-bound)."""
    return [
        c
        for c in judged
        if c["scenario"] == scenario and not c.get("error") and not c.get("machine_bound")
    ]


def launcher(report, server):
    info = report.get("servers", {}).get(server) or {}
    return (info.get("package") or {}).get("launcher") or "direct"


LEAK_SCENARIOS = [
    ("sigterm", "SIGTERM to the launcher's pid"),
    ("close:ts-legacy", "the `ts-legacy` ladder"),
    ("close:zed-legacy", "the `zed-legacy` ladder"),
    ("close:claude-code-legacy", "the `claude-code-legacy` ladder (SIGKILL to the direct child)"),
]


def left_by_launcher(case):
    """The launcher ended and left the server behind it running: the harness then signalled
    the server itself (`launcher_left`), or, in a report from before it did, the server's own
    process (or, recorded before `npm exec @scope/pkg` was known as npx's title, anything
    behind that launcher) is among what was left."""
    if case.get("launcher_left"):
        return True
    proc = case.get("server_process") or {}
    left = case.get("leftovers") or []
    if not left or not proc:
        return False
    if proc.get("launchers"):
        return any(l["pid"] == proc["pid"] for l in left)
    return proc.get("cmdline", "").startswith("npm exec ")


def by_launcher(report, cases):
    by = {}
    for c in cases:
        k = launcher(report, c["server"])
        by[k] = by.get(k, 0) + 1
    return ", ".join(f"{n} {k}" for k, n in sorted(by.items()))


def leaks(report, judged):
    """Under ladders that signal only the launcher's pid: servers that left their own
    processes running; apart, launchers that did not pass the signal on (never the server's
    doing: the server is judged on the signal the harness then sends it itself); and apart
    again, in a report from before the process behind a launcher was recorded, what was left
    running without saying whose it is."""
    own, launchers, unknown = [], [], []
    for scenario, what in LEAK_SCENARIOS:
        cases = published(judged, scenario)
        if not cases:
            continue
        missed = [
            c for c in cases
            if status(c, "process-no-leaked-descendants") in ("WARNING", "FAILURE")
        ]
        behind = [c for c in cases if left_by_launcher(c)]
        blind = [c for c in missed if not c.get("server_process") and not c.get("launcher_left")]
        mine = [c for c in missed if c not in blind and not (c in behind and not c.get("launcher_left"))]
        if len(blind) < len(missed) or not missed:
            own.append(f"under {what} {len(mine)} of {len(cases)}")
        if behind:
            launchers.append(f"under {what} {len(behind)} of {len(cases)} ({by_launcher(report, behind)})")
        if blind:
            unknown.append(f"under {what} {len(blind)} of {len(cases)} ({by_launcher(report, blind)})")
    lines = []
    if own:
        lines.append(
            "- **Processes the server left running** (its own, after its own end): "
            + "; ".join(own)
            + "."
        )
    if launchers:
        lines.append(
            "- **Launchers that did not pass the signal on** (the launcher's doing, never "
            "scored against the server; the server is judged on the signal sent to it itself, "
            "and where a report did not send it, not judged on that ending's exit): "
            + "; ".join(launchers)
            + "."
        )
    if unknown:
        lines.append(
            "- **Processes left running** (a launcher ended, the server behind it not, or the "
            "server's own: this report did not record which process was the server): "
            + "; ".join(unknown)
            + "."
        )
    return lines


RULE_LINES = [
    ("sigint", "process-exit-on-sigint", "did not exit promptly on SIGINT to their group"),
    ("ctrl-c", "process-exit-on-ctrl-c", "did not exit promptly after Ctrl-C in a terminal"),
]


def rule_counts(report, judged):
    lines = []
    for scenario, rule, what in RULE_LINES:
        cases = published(judged, scenario)
        bad = [c for c in cases if status(c, rule) in ("WARNING", "FAILURE")]
        if cases:
            lines.append(f"- **`{scenario}`**: {len(bad)} of {len(cases)} servers {what}.")
    stdout = sorted(
        {
            display(report, c["server"])
            for c in judged
            if status(c, "stdio-stdout-only-mcp") == "FAILURE"
            and not c.get("error")
            and not c.get("machine_bound")
        }
    )
    lines.append(
        f"- **Stdout** (MUST: only MCP messages): {len(stdout)} server(s) wrote something else: "
        f"{names([f'`{n}`' for n in stdout])}."
    )
    return lines


def not_testable(cases):
    """Servers none of whose cases could be judged, by whose the reason is (the owner)."""
    why = {}
    for c in cases:
        nt = c.get("not_testable")
        why.setdefault(c["server"], set()).add((nt.get("owner"), nt["reason"]) if nt else None)
    by = {}
    for server, reasons in why.items():
        if None not in reasons and len(reasons) == 1:
            (owner, reason), = reasons
            by.setdefault((owner, reason), []).append(server)
    if not by:
        return []
    label = {"needs-credentials": "refused placeholder credentials",
             "launch-not-in-package": "the listing's launch command is not in the package"}
    parts = [f"{len(v)}: {label.get(reason, reason)} (owner: {owner or '?'})"
             for (owner, reason), v in sorted(by.items())]
    return [f"- **Not testable**: {'; '.join(parts)}."]


def paragraph(report):
    cases = report["results"]
    servers = sorted({c["server"] for c in cases})
    judged = [c for c in cases if has_verdict(c)]
    ran = sorted({c["server"] for c in judged})
    lines = [f"Census: {machine_line(report, cases)}.", ""]
    lines.append(f"- **{len(ran)} of {len(servers)} servers ran** and were judged.")
    lines += not_testable(cases)
    close = [c for c in judged if c["scenario"] == CLOSE and not c.get("error")]
    if close:
        eof, sigterm, other, flakies, rerun = [], [], [], [], []
        for c in close:
            kind, what = verdict(c)
            name = f"`{display(report, c['server'])}`"
            if kind == "re-run":
                rerun.append(name)
            elif kind == "flaky":
                flakies.append(f"{name} (FLAKY: {what})")
            elif kind == "eof":
                eof.append(name)
            elif kind == "sigterm":
                sigterm.append(f"{name} ({seconds(what)})")
            else:
                other.append(f"{name} ({kind}, {seconds(what)})")
        settled = len(close) - len(rerun)
        slow = [
            f"`{display(report, c['server'])}` ({seconds(latency(c))})"
            for c in close
            if verdict(c)[0] == "eof" and status(c, "stdio-exit-on-eof") == "WARNING"
        ]
        lines.append(
            f"- **Under `close`**, {len(eof)} of {settled} exit on end of input alone on every run "
            f"({len(slow)} of them later than the prompt budget: {names(slow)}); "
            f"{len(sigterm)} need SIGTERM after the grace period on every run: {names(sigterm)}."
        )
        if other:
            lines.append(f"- Under `close`, ended otherwise on every run: {names(other)}.")
        if flakies:
            lines.append(f"- Under `close`, the runs disagreed: {names(flakies)}.")
        if rerun:
            lines.append(
                f"- Not published (machine-bound: the machine's load decided them; re-run on a "
                f"quieter machine): {names(rerun)}."
            )
    lines += leaks(report, judged)
    lines += rule_counts(report, judged)
    bound = [c for c in judged if c.get("machine_bound")]
    if bound:
        lines.append(
            f"- {len(bound)} of {len(judged)} judged cases were machine-bound and are shown as "
            f"\"re-run\", never as a verdict."
        )
    return "\n".join(lines)


def leaderboard(report):
    """The `close` column per server, with only what may be published."""
    rows = ["| server | close |", "|---|---|"]
    for c in sorted(report["results"], key=lambda c: c["server"]):
        if c["scenario"] != CLOSE:
            continue
        if not has_verdict(c):
            cell = "could not run" if not c.get("not_testable") else "not testable"
        else:
            kind, what = verdict(c)
            if kind == "re-run":
                cell = "re-run (machine-bound)"
            elif kind == "flaky":
                cell = f"FLAKY {what}"
            elif c.get("error"):
                cell = c["error"]["kind"]
            else:
                cell = f"{kind} {what:.0f} ms ×{runs(c)}" if what is not None else f"{kind} ×{runs(c)}"
        rows.append(f"| `{display(report, c['server'])}` | {cell} |")
    return "\n".join(rows)


def main(argv):
    if len(argv) < 2:
        print(__doc__, file=sys.stderr)
        return 2
    report = json.load(open(argv[1]))
    if not report.get("results"):
        print("census_findings: the report has no cases", file=sys.stderr)
        return 1
    print(paragraph(report))
    if "--leaderboard" in argv[2:]:
        print()
        print(leaderboard(report))
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv))
