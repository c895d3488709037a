#!/usr/bin/env python3
"""Reads the reports of scripts/stability/run.sh (unloaded.json, and loaded.json if it ran) and
says, per case, whether its runs disagreed and why, and whether load changed its verdict.

A case whose repeated runs disagreed (`repeat.flaky`) is put down to:
- harness: a run could not run for a reason of the harness's (error kind harness,
  handshake-timeout, setup-failed); the suite should not produce these;
- load: the runs with the worse outcome waited for a CPU far longer than the others
  (median runqueue_ms > 100 ms and 4x the better runs'): the run-queue accounting should
  have absorbed it, so this too points at the harness;
- server: neither; the runs differ in the server's own timing (its exits cluster at
  different moments), which is what a flaky verdict is for.
Between the unloaded and the loaded report, a case whose worst-run check statuses differ
is a load flip: a verdict that depends on the machine, a harness bug.

Usage: stability_compare.py DIR   (exit code 0 whatever it finds)
"""

import json
import os
import statistics
import sys

HARNESS_ERRORS = {"harness", "handshake-timeout", "setup-failed"}
BADNESS = {"FAILURE": 4, "WARNING": 3, "INFO": 2, "SUCCESS": 1, "SKIPPED": 0}


def load(path):
    try:
        with open(path) as f:
            return json.load(f)
    except (OSError, ValueError):
        return None


def stage_of(run):
    return run.get("error") or run.get("stage") or "unknown"


def worst(run):
    return max((BADNESS.get(s, 0) for s in run.get("checks", {}).values()), default=0)


def cause(case):
    runs = case["repeat"]["runs"]
    if any(r.get("error") in HARNESS_ERRORS for r in runs):
        return "harness"
    bad = max(worst(r) for r in runs)
    rq = lambda rs: statistics.median([r.get("runqueue_ms") or 0.0 for r in rs]) if rs else 0.0
    worse = [r for r in runs if worst(r) == bad]
    better = [r for r in runs if worst(r) < bad]
    if better and rq(worse) > 100 and rq(worse) > 4 * max(rq(better), 1.0):
        return "load"
    return "server"


def distribution(case):
    rep = case["repeat"]
    n = len(rep["runs"])
    return ", ".join(f"{k} {v}/{n}" for k, v in sorted(rep["stages"].items(), key=lambda kv: -kv[1]))


def verdicts(case):
    return {c["id"]: c["status"] for c in case.get("checks", [])}


def main(d):
    reports = {name: load(os.path.join(d, f"{name}.json")) for name in ("unloaded", "loaded")}
    reports = {k: v for k, v in reports.items() if v}
    if not reports:
        print(f"no report in {d}")
        return
    counts = {"server": 0, "load": 0, "harness": 0}
    cases = len(next(iter(reports.values()))["results"])
    for name, rep in reports.items():
        for c in rep["results"]:
            if not (c.get("repeat") or {}).get("flaky"):
                continue
            why = cause(c)
            counts[why] += 1
            print(f"{name:8} FLAKY ({why}) {c['server']} {c['scenario']}: {distribution(c)}; differed: {', '.join(c['repeat'].get('flips', []))}")
    flips = 0
    if len(reports) == 2:
        loaded = {(c["server"], c["scenario"]): c for c in reports["loaded"]["results"]}
        for c in reports["unloaded"]["results"]:
            other = loaded.get((c["server"], c["scenario"]))
            if other is None or verdicts(c) == verdicts(other):
                continue
            # A case that is flaky by itself is expected to differ.
            if (c.get("repeat") or {}).get("flaky") or (other.get("repeat") or {}).get("flaky"):
                continue
            flips += 1
            changed = [f"{k}: {v} -> {verdicts(other).get(k)}" for k, v in verdicts(c).items() if verdicts(other).get(k) != v]
            print(f"LOAD FLIP {c['server']} {c['scenario']}: {'; '.join(changed)}")
    runs = next(iter(reports.values()))["results"]
    per = len((runs[0].get("repeat") or {}).get("runs", [1])) if runs else 0
    print(
        f"{cases} case(s) x {per} run(s), in {' and '.join(reports)}: "
        f"{sum(counts.values())} flaky (server {counts['server']}, load {counts['load']}, harness {counts['harness']}); "
        + (f"{flips} verdict flip(s) between unloaded and loaded" if len(reports) == 2 else "no loaded run to compare")
    )


if __name__ == "__main__":
    main(sys.argv[1] if len(sys.argv) > 1 else ".")
