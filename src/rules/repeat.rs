//! Repeated runs of one case (`--repeat N`) made into one judged case: the worst run's
//! observation, each check at its worst status across runs, the distribution of stages,
//! exit-latency percentiles, and a flaky marker when the runs disagree. Pure.

use std::collections::BTreeMap;

use crate::model::{Check, JudgedCase, Latency, Repeat, RuleId, RunOutcome, Status};

/// How bad a status is, for "the worst run" (a miss of a MUST is the worst).
fn badness(s: Status) -> u8 {
    match s {
        Status::Failure => 4,
        Status::Warning => 3,
        Status::Info => 2,
        Status::Success => 1,
        Status::Skipped => 0,
    }
}

fn outcome(r: &JudgedCase) -> RunOutcome {
    RunOutcome {
        stage: r.stage,
        exit_ms: r.exit_ms,
        runqueue_ms: r.runqueue_ms,
        exit_status: r.exit_status,
        error: r.error.as_ref().map(|e| e.kind),
        checks: r.checks.iter().map(|c| (c.id, c.status)).collect(),
        leftovers: r.leftover_count() as usize,
        wall_ms: r.wall_ms,
        machine_bound: r.machine_bound.is_some(),
    }
}

/// The name a run's ending goes by in the distribution: its stage, or its error kind.
pub fn stage_name(o: &RunOutcome) -> String {
    match (o.error, o.stage) {
        (Some(e), _) => e.to_string(),
        (None, Some(s)) => s.to_string(),
        (None, None) => "unknown".into(),
    }
}

/// Nearest-rank percentiles of the exit latencies, `None` when no run exited.
pub fn latency(runs: &[RunOutcome]) -> Option<Latency> {
    let mut v: Vec<f64> = runs.iter().filter_map(|r| r.exit_ms).collect();
    if v.is_empty() {
        return None;
    }
    v.sort_by(f64::total_cmp);
    let rank = |p: f64| v[((p * v.len() as f64).ceil() as usize).clamp(1, v.len()) - 1];
    Some(Latency {
        n: v.len(),
        min: v[0],
        median: rank(0.5),
        p95: rank(0.95),
        max: v[v.len() - 1],
    })
}

/// "eof 3/17, sigterm 14/17", most frequent first.
pub fn distribution(r: &Repeat) -> String {
    let n = r.runs.len();
    let mut v: Vec<(&String, &u32)> = r.stages.iter().collect();
    v.sort_by(|a, b| b.1.cmp(a.1).then(a.0.cmp(b.0)));
    v.iter()
        .map(|(s, k)| format!("{s} {k}/{n}"))
        .collect::<Vec<_>>()
        .join(", ")
}

/// Each rule's statuses over the runs, counted.
fn statuses_per_rule(outcomes: &[RunOutcome]) -> BTreeMap<RuleId, BTreeMap<Status, u32>> {
    let mut per_rule: BTreeMap<RuleId, BTreeMap<Status, u32>> = BTreeMap::new();
    for o in outcomes {
        for (id, s) in &o.checks {
            *per_rule.entry(*id).or_default().entry(*s).or_default() += 1;
        }
    }
    per_rule
}

/// A check whose status flipped over the `n` runs: at its worst status, with the message of
/// a run that had it, prefixed by how often each status came.
fn at_its_worst(c: &mut Check, counts: &BTreeMap<Status, u32>, others: &[JudgedCase], n: usize) {
    let worst_status = *counts.keys().max_by_key(|s| badness(**s)).expect("counts");
    if badness(worst_status) > badness(c.status) {
        if let Some(w) = others
            .iter()
            .flat_map(|r| &r.checks)
            .find(|x| x.id == c.id && x.status == worst_status)
        {
            *c = w.clone();
        }
    }
    let mut seen: Vec<(&Status, &u32)> = counts.iter().collect();
    seen.sort_by_key(|(s, _)| std::cmp::Reverse(badness(**s)));
    let split: Vec<String> = seen.iter().map(|(s, k)| format!("{s} {k}/{n}")).collect();
    c.message = format!("flaky ({}): {}", split.join(", "), c.message);
}

/// One judged case from `runs` of the same case (at least one).
pub fn aggregate(mut runs: Vec<JudgedCase>) -> JudgedCase {
    assert!(!runs.is_empty(), "a repeated case ran at least once");
    let outcomes: Vec<RunOutcome> = runs.iter().map(outcome).collect();
    if runs.len() == 1 {
        return runs.pop().expect("one run");
    }
    let mut stages: BTreeMap<String, u32> = BTreeMap::new();
    for o in &outcomes {
        *stages.entry(stage_name(o)).or_default() += 1;
    }
    let mut flips: Vec<String> = Vec::new();
    if stages.len() > 1 {
        flips.push("stage".into());
    }
    let per_rule = statuses_per_rule(&outcomes);
    for (id, counts) in &per_rule {
        if counts.len() > 1 {
            flips.push(id.to_string());
        }
    }
    // The worst run carries the observation: the worst check, then the strongest stage;
    // ties go to the earliest.
    let worst = (0..runs.len())
        .max_by_key(|&i| {
            let b = runs[i].checks.iter().map(|c| badness(c.status)).max();
            (b, runs[i].stage, std::cmp::Reverse(i))
        })
        .unwrap_or(0);
    let n = runs.len();
    // What the case cost is every run's time, not the worst run's alone.
    let timing = runs.iter().filter_map(|r| r.timing).reduce(|mut a, b| {
        a.absorb(&b);
        a
    });
    let mut case = runs.swap_remove(worst);
    case.timing = timing;
    let others: Vec<JudgedCase> = runs;
    for c in &mut case.checks {
        if let Some(counts) = per_rule.get(&c.id).filter(|m| m.len() > 1) {
            at_its_worst(c, counts, &others, n);
        }
    }
    // A run the machine decided taints the distribution: the case is machine-bound if any
    // run was (with the first such run's window when the worst run was not).
    if case.machine_bound.is_none() {
        case.machine_bound = others.iter().find_map(|r| r.machine_bound.clone());
    }
    let flaky = !flips.is_empty();
    let repeat = Repeat {
        latency_ms: latency(&outcomes),
        runs: outcomes,
        stages,
        flaky,
        flips,
    };
    case.repeat = Some(repeat);
    case
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::model::Stage;
    use crate::test_support::result;

    #[test]
    fn runs_that_agree_are_not_flaky() {
        let runs: Vec<JudgedCase> = [12.0, 30.0, 18.0]
            .iter()
            .map(|t| result("s", "close", Stage::Eof, *t))
            .collect();
        let c = aggregate(runs);
        let r = c.repeat.as_ref().unwrap();
        assert!(!r.flaky, "{:?}", r.flips);
        assert_eq!(distribution(r), "eof 3/3");
        let l = r.latency_ms.unwrap();
        assert_eq!((l.n, l.min, l.median, l.max), (3, 12.0, 18.0, 30.0));
        assert!(c.checks.iter().all(|c| !c.message.starts_with("flaky")));
    }

    #[test]
    fn a_repeated_case_costs_every_run() {
        let runs: Vec<JudgedCase> = [(1000.0, 5.0), (300.0, 7.0)]
            .iter()
            .map(|&(cpu_ms, setup_ms)| {
                let mut r = result("s", "close", Stage::Eof, 12.0);
                r.observation.timing = Some(crate::model::CaseTiming {
                    cpu_ms,
                    setup_ms,
                    startup_ms: 100.0,
                    ..Default::default()
                });
                r
            })
            .collect();
        let t = aggregate(runs).timing.unwrap();
        assert_eq!((t.cpu_ms, t.startup_ms, t.setup_ms), (1300.0, 200.0, 7.0));
    }

    #[test]
    fn a_coin_toss_is_flaky_at_its_worst() {
        let mut runs = vec![result("s", "close", Stage::Eof, 1050.0)];
        for _ in 0..3 {
            runs.push(result("s", "close", Stage::Sigterm, 2004.0));
        }
        runs.push(result("s", "close", Stage::Eof, 30.0));
        let c = aggregate(runs);
        let r = c.repeat.as_ref().unwrap();
        assert!(r.flaky);
        assert_eq!(distribution(r), "sigterm 3/5, eof 2/5");
        assert_eq!(r.flips[0], "stage");
        assert_eq!(c.stage, Some(Stage::Sigterm), "the worst run's observation");
        let eof = c
            .checks
            .iter()
            .find(|x| x.id == RuleId::StdioExitOnEof)
            .unwrap();
        assert_eq!(eof.status, Status::Warning);
        assert!(
            eof.message
                .starts_with("flaky (WARNING 4/5, SUCCESS 1/5): "),
            "{}",
            eof.message
        );
        assert_eq!(r.latency_ms.unwrap().p95, 2004.0);
    }

    #[test]
    fn one_run_is_left_as_it_is() {
        let c = aggregate(vec![result("s", "close", Stage::Eof, 3.0)]);
        assert!(c.repeat.is_none());
    }
}
