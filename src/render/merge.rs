//! Joins the reports of a sharded run (e.g. one CI job per server group) into one report.

use crate::model::{CensusRun, Report, WhatIf};

/// Shards that cannot be joined.
#[derive(Debug, PartialEq, Eq, thiserror::Error)]
pub enum MergeError {
    #[error("no reports to merge")]
    Empty,
    #[error("report {n} has schema_version {theirs}, report 1 has {ours}")]
    Schema { n: usize, theirs: u32, ours: u32 },
    #[error("report {n} was scored against spec {theirs}, report 1 against {ours}: rerun with the same --spec")]
    Spec {
        n: usize,
        theirs: String,
        ours: String,
    },
    #[error("report {n} ran with other budgets than report 1 ({theirs} vs {ours})")]
    Budgets {
        n: usize,
        theirs: String,
        ours: String,
    },
    #[error("case {server} × {scenario} appears in more than one report")]
    Duplicate { server: String, scenario: String },
}

/// Joins shards: they must share the schema version, the spec revision and the budgets (so
/// every check was scored the same way). Results are concatenated and sorted by
/// (server, scenario); a server × scenario pair may appear in only one shard. The tool and
/// host are those of the first shard; the summary is recomputed.
pub fn merge(parts: Vec<Report>) -> Result<Report, MergeError> {
    let mut parts = parts.into_iter();
    let mut merged = parts.next().ok_or(MergeError::Empty)?;
    for (i, p) in parts.enumerate() {
        let n = i + 2;
        if p.schema_version != merged.schema_version {
            return Err(MergeError::Schema {
                n,
                theirs: p.schema_version,
                ours: merged.schema_version,
            });
        }
        if p.spec != merged.spec {
            return Err(MergeError::Spec {
                n,
                theirs: p.spec.to_string(),
                ours: merged.spec.to_string(),
            });
        }
        if p.budgets != merged.budgets {
            return Err(MergeError::Budgets {
                n,
                theirs: format!("{:?}", p.budgets),
                ours: format!("{:?}", merged.budgets),
            });
        }
        for (name, info) in p.servers {
            join_server(&mut merged.servers, name, info);
        }
        merged.rules.extend(p.rules);
        merged.profiles.extend(p.profiles);
        merged.results.extend(p.results);
        merged.not_testable.extend(p.not_testable);
        join_census(&mut merged.census, p.census);
        join_with_sdk(&mut merged.with_sdk, p.with_sdk);
    }
    merged
        .results
        .sort_by(|a, b| (&a.server, &a.scenario).cmp(&(&b.server, &b.scenario)));
    if let Some(w) = merged
        .results
        .windows(2)
        .find(|w| (&w[0].server, &w[0].scenario) == (&w[1].server, &w[1].scenario))
    {
        return Err(MergeError::Duplicate {
            server: w[0].server.clone(),
            scenario: w[0].scenario.to_string(),
        });
    }
    // Shards of one sweep each list the versions they could not build.
    merged
        .not_testable
        .sort_by(|a, b| (&a.line, &a.version).cmp(&(&b.line, &b.version)));
    merged.not_testable.dedup();
    merged.resummarize();
    Ok(merged)
}

/// A census's shards each name the removed servers that hash to them: all of them, once.
fn join_census(have: &mut Option<CensusRun>, theirs: Option<CensusRun>) {
    match (have.as_mut(), theirs) {
        (Some(m), Some(c)) => {
            m.dropped.extend(c.dropped);
            m.dropped.sort();
            m.dropped.dedup();
        }
        (None, c) => *have = c,
        (Some(_), None) => {}
    }
}

/// Each shard of a `census --with-sdk` ran the same replacements over its own servers: one
/// what-if per replacement, holding every shard's servers, sorted by name (the listing's
/// order is lost across shards).
fn join_with_sdk(have: &mut Vec<WhatIf>, theirs: Vec<WhatIf>) {
    for w in theirs {
        match have.iter_mut().find(|h| {
            (&h.line, &h.replacement, &h.version) == (&w.line, &w.replacement, &w.version)
        }) {
            Some(h) => {
                h.servers.extend(w.servers);
                h.servers.sort_by(|a, b| a.server.cmp(&b.server));
            }
            None => have.push(w),
        }
    }
}

/// A server two shards both ran keeps the fixes of both: each once, with the rules it answers
/// in either.
fn join_server(
    servers: &mut std::collections::BTreeMap<String, crate::model::ServerInfo>,
    name: String,
    info: crate::model::ServerInfo,
) {
    let Some(have) = servers.get_mut(&name) else {
        servers.insert(name, info);
        return;
    };
    if have.judged.is_none() {
        have.judged = info.judged;
    }
    for fix in info.fixes {
        match have.fixes.iter_mut().find(|f| f.id == fix.id) {
            Some(f) => {
                for r in fix.rules {
                    if !f.rules.contains(&r) {
                        f.rules.push(r);
                    }
                }
            }
            None => have.fixes.push(fix),
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::model::WhatIfServer;
    use crate::test_support as fixture;

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
        let order: Vec<(&str, String)> = m
            .results
            .iter()
            .map(|r| (r.server.as_str(), r.scenario.to_string()))
            .collect();
        assert_eq!(
            order,
            [
                ("fixed", "close".into()),
                ("fixed", "crash".into()),
                ("mute", "close".into()),
                ("timer", "close".into()),
                ("timer", "crash".into())
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
        let e = merge(vec![a.clone(), other]).unwrap_err().to_string();
        assert!(e.contains("spec 2025-06-18"), "{e}");
        let mut newer = b.clone();
        newer.schema_version = 2;
        assert!(merge(vec![a.clone(), newer])
            .unwrap_err()
            .to_string()
            .contains("schema_version"));
        let mut slower = b.clone();
        slower.budgets.grace_ms = 5000;
        assert!(merge(vec![a.clone(), slower])
            .unwrap_err()
            .to_string()
            .contains("budgets"));
        assert!(merge(vec![a.clone(), a.clone()])
            .unwrap_err()
            .to_string()
            .contains("more than one report"));
        assert!(merge(Vec::new()).is_err());
    }

    #[test]
    fn joins_the_what_ifs_of_each_replacement() {
        let what_if = |replacement: &str, servers: &[&str]| WhatIf {
            line: "typescript".into(),
            package: "@modelcontextprotocol/sdk".into(),
            replacement: replacement.into(),
            version: "1.32.2".into(),
            servers: servers.iter().map(|s| WhatIfServer::named(s)).collect(),
        };
        let (mut a, mut b) = shards();
        a.with_sdk = vec![what_if("local:fix", &["b-server"])];
        b.with_sdk = vec![
            what_if("local:fix", &["a-server"]),
            what_if("1.30.0", &["c-server"]),
        ];
        let m = merge(vec![a, b]).unwrap();
        let joined: Vec<(&str, Vec<&str>)> = m
            .with_sdk
            .iter()
            .map(|w| {
                let names = w.servers.iter().map(|s| s.server.as_str()).collect();
                (w.replacement.as_str(), names)
            })
            .collect();
        assert_eq!(
            joined,
            [
                ("local:fix", vec!["a-server", "b-server"]),
                ("1.30.0", vec!["c-server"])
            ]
        );
    }

    #[test]
    fn one_shard_is_itself_sorted() {
        let (a, _) = shards();
        let m = merge(vec![a.clone()]).unwrap();
        assert_eq!(m.results.len(), a.results.len());
        assert_eq!(m.summary, a.summary);
    }
}
