//! Joins the reports of a sharded run (e.g. one CI job per server group) into one report.

use crate::report::{summarize, Report};

/// Joins shards: they must share the schema version, the spec revision and the budgets (so
/// every check was scored the same way). Results are concatenated and sorted by
/// (server, scenario); a server × scenario pair may appear in only one shard. The tool and
/// host are those of the first shard; the summary is recomputed.
pub fn merge(parts: Vec<Report>) -> Result<Report, String> {
    let mut parts = parts.into_iter();
    let mut merged = parts.next().ok_or("no reports to merge")?;
    for (i, p) in parts.enumerate() {
        let n = i + 2;
        if p.schema_version != merged.schema_version {
            return Err(format!(
                "report {n} has schema_version {}, report 1 has {}",
                p.schema_version, merged.schema_version
            ));
        }
        if p.spec != merged.spec {
            return Err(format!(
                "report {n} was scored against spec {}, report 1 against {}: rerun with the same --spec",
                p.spec, merged.spec
            ));
        }
        if p.budgets != merged.budgets {
            return Err(format!(
                "report {n} ran with other budgets than report 1 ({:?} vs {:?})",
                p.budgets, merged.budgets
            ));
        }
        merged.servers.extend(p.servers);
        merged.results.extend(p.results);
    }
    merged
        .results
        .sort_by(|a, b| (&a.server, &a.scenario).cmp(&(&b.server, &b.scenario)));
    if let Some(w) = merged
        .results
        .windows(2)
        .find(|w| (&w[0].server, &w[0].scenario) == (&w[1].server, &w[1].scenario))
    {
        return Err(format!(
            "case {} × {} appears in more than one report",
            w[0].server, w[0].scenario
        ));
    }
    merged.summary = summarize(&merged.results);
    Ok(merged)
}

#[cfg(test)]
mod tests {
    use super::super::fixture;
    use super::*;

    fn shards() -> (Report, Report) {
        let all = fixture::results(fixture::SPEC);
        let (a, b): (Vec<_>, Vec<_>) = all.into_iter().partition(|r| r.server == "timer");
        (
            fixture::report_for(fixture::SPEC, b),
            fixture::report_for(fixture::SPEC, a),
        )
    }

    #[test]
    fn joins_sorts_and_resummarizes() {
        let (a, b) = shards();
        let m = merge(vec![a, b]).unwrap();
        let order: Vec<(&str, &str)> = m
            .results
            .iter()
            .map(|r| (r.server.as_str(), r.scenario.as_str()))
            .collect();
        assert_eq!(
            order,
            [
                ("fixed", "close"),
                ("fixed", "crash"),
                ("mute", "close"),
                ("timer", "close"),
                ("timer", "crash")
            ]
        );
        assert_eq!(m.summary, fixture::report().summary);
        assert_eq!(m.summary.cases, 5);
        // The round trip through JSON (as shards arrive) changes nothing.
        let (a, b) = shards();
        let again: Vec<Report> = [a, b]
            .iter()
            .map(|r| serde_json::from_str(&r.to_json()).unwrap())
            .collect();
        assert_eq!(merge(again).unwrap(), m);
    }

    #[test]
    fn rejects_mismatched_shards() {
        let (a, b) = shards();
        let other = fixture::report_for("2025-06-18", b.results.clone());
        let e = merge(vec![a.clone(), other]).unwrap_err();
        assert!(e.contains("spec 2025-06-18"), "{e}");
        let mut newer = b.clone();
        newer.schema_version = 2;
        assert!(merge(vec![a.clone(), newer])
            .unwrap_err()
            .contains("schema_version"));
        let mut slower = b.clone();
        slower.budgets.grace_ms = 5000;
        assert!(merge(vec![a.clone(), slower])
            .unwrap_err()
            .contains("budgets"));
        assert!(merge(vec![a.clone(), a.clone()])
            .unwrap_err()
            .contains("more than one report"));
        assert!(merge(Vec::new()).is_err());
    }

    #[test]
    fn one_shard_is_itself_sorted() {
        let (a, _) = shards();
        let m = merge(vec![a.clone()]).unwrap();
        assert_eq!(m.results.len(), a.results.len());
        assert_eq!(m.summary, a.summary);
    }
}
