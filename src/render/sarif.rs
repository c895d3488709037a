//! SARIF 2.1.0 for GitHub code scanning: the rules that judged the report (from the
//! catalogue, with the change any server makes as their help), and a result per server and
//! missed rule (an `error` for a MUST, a `warning` for a SHOULD) naming the endings that
//! missed it, what held the server and its own fixes, with their lines.

use std::collections::BTreeMap;

use serde_json::{json, Value};

use super::github::Location;
use super::present::{first_held, fix_heading, fixes_of};
use crate::model::{Outcome, Report, RuleId, Status};
use crate::rules::fixes::{Fixes, Server};

/// Where the rules are explained, for `helpUri`.
const RULES_PAGE: &str =
    "https://github.com/mcp-shutdown-conformance/mcp-shutdown-conformance/blob/main/docs/book/src/rules.md";

/// The report as a SARIF log, each result pointing at `at` when given (code scanning needs a
/// file of the repository: the workflow or manifest that names the server), else at the
/// server by name only.
pub fn render(report: &Report, at: Option<&Location>) -> String {
    let rules: Vec<RuleId> = report.rules.keys().copied().collect();
    let log = json!({
        "$schema": "https://json.schemastore.org/sarif-2.1.0.json",
        "version": "2.1.0",
        "runs": [{
            "tool": { "driver": {
                "name": report.tool.name,
                "version": report.tool.version,
                "semanticVersion": report.tool.version,
                "informationUri": RULES_PAGE,
                "rules": rules.iter().map(|r| rule(report, *r)).collect::<Vec<_>>(),
            }},
            "results": results(report, &rules, at),
            "properties": { "spec": report.spec.to_string() },
        }],
    });
    serde_json::to_string_pretty(&log).expect("SARIF serializes")
}

/// A rule's descriptor: its title, level and the change any server makes.
fn rule(report: &Report, id: RuleId) -> Value {
    let info = report.rules.get(&id);
    let title = info.map_or_else(|| id.to_string(), |i| i.title.clone());
    let level = report
        .results
        .iter()
        .flat_map(|r| &r.checks)
        .find(|c| c.id == id)
        .map_or("warning", |c| level_of(c.status, c.level));
    let help: Vec<String> = Fixes::bundled()
        .choose(&[id], Server::default())
        .into_iter()
        .map(|f| f.text)
        .collect();
    json!({
        "id": id.as_str(),
        "name": title,
        "shortDescription": { "text": title },
        "fullDescription": { "text": format!("{title} ({id})") },
        "helpUri": format!("{RULES_PAGE}#{id}"),
        "help": { "text": help.join("\n\n"), "markdown": help.join("\n\n") },
        "defaultConfiguration": { "level": level },
    })
}

/// `error` for a MUST, `warning` for a SHOULD, `note` for the rest.
fn level_of(status: Status, level: crate::model::Level) -> &'static str {
    match (status, level) {
        (Status::Failure, _) | (_, crate::model::Level::Must) => "error",
        (Status::Warning, _) | (_, crate::model::Level::Should) => "warning",
        _ => "note",
    }
}

/// One result per server and missed rule.
fn results(report: &Report, rules: &[RuleId], at: Option<&Location>) -> Vec<Value> {
    let mut missed: BTreeMap<(&str, RuleId), (Status, Vec<String>, &str)> = BTreeMap::new();
    for r in &report.results {
        if r.is_machine_bound() {
            continue;
        }
        for c in &r.checks {
            if !c.status.is_miss() || c.outcome == Outcome::NotTestable {
                continue;
            }
            let m = missed
                .entry((&r.server, c.id))
                .or_insert((c.status, Vec::new(), &c.message));
            if c.status == Status::Failure && m.0 != Status::Failure {
                (m.0, m.2) = (Status::Failure, &c.message);
            }
            m.1.push(r.scenario.to_string());
        }
    }
    missed
        .into_iter()
        .map(|((server, id), (status, endings, message))| {
            let (text, markdown) = message_of(report, server, id, &endings, message);
            let index = rules.iter().position(|r| *r == id).unwrap_or(0);
            json!({
                "ruleId": id.as_str(),
                "ruleIndex": index,
                "level": if status == Status::Failure { "error" } else { "warning" },
                "message": { "text": text, "markdown": markdown },
                "locations": [location(server, at)],
                "partialFingerprints": { "server/rule": format!("{server}/{id}") },
                "properties": { "server": server, "endings": endings },
            })
        })
        .collect()
}

fn location(server: &str, at: Option<&Location>) -> Value {
    let logical = json!([{ "name": server, "kind": "module" }]);
    match at {
        Some(at) => {
            let mut physical = json!({ "artifactLocation": { "uri": at.file } });
            if let Some(line) = at.line {
                physical["region"] = json!({ "startLine": line });
            }
            json!({ "physicalLocation": physical, "logicalLocations": logical })
        }
        None => json!({ "logicalLocations": logical }),
    }
}

/// The result's message, as text and as Markdown: what was missed where, what held the
/// server, and its fixes for this rule.
fn message_of(
    report: &Report,
    server: &str,
    id: RuleId,
    endings: &[String],
    message: &str,
) -> (String, String) {
    let mut text = format!(
        "{server} missed {id} under {}: {message}",
        endings.join(", ")
    );
    let mut md = text.clone();
    if let Some((_, line)) = first_held(report, server) {
        text.push_str(&format!("\nHeld by: {line}"));
        md.push_str(&format!("\n\n**What held it**: {line}"));
    }
    for f in fixes_of(report, server)
        .iter()
        .filter(|f| f.rules.contains(&id))
    {
        text.push_str(&format!("\nFix: {}", f.text));
        md.push_str(&format!("\n\n**Fix: {}**\n\n{}", fix_heading(f), f.text));
        if let Some(code) = &f.code {
            text.push_str(&format!("\nAs in {}:\n{}", code.source, code.lines));
            md.push_str(&format!(
                "\n\n```{}\n{}\n```\n\nAs in `{}`.",
                code.fence, code.lines, code.source
            ));
        }
    }
    (text, md)
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::test_support as fixture;

    #[test]
    fn one_result_per_server_and_missed_rule_with_its_fix() {
        let rep = fixture::report();
        let at: Location = "servers/timer.toml:3".parse().unwrap();
        let log: Value = serde_json::from_str(&render(&rep, Some(&at))).unwrap();
        let run = &log["runs"][0];
        let rules: Vec<&str> = run["tool"]["driver"]["rules"]
            .as_array()
            .unwrap()
            .iter()
            .map(|r| r["id"].as_str().unwrap())
            .collect();
        assert_eq!(rules.len(), rep.rules.len());
        let results = run["results"].as_array().unwrap();
        let mut keys: Vec<(String, String)> = results
            .iter()
            .map(|r| {
                let server = r["properties"]["server"].as_str().unwrap().to_string();
                (server, r["ruleId"].as_str().unwrap().to_string())
            })
            .collect();
        let n = keys.len();
        keys.dedup();
        assert_eq!(keys.len(), n);
        let eof = results
            .iter()
            .find(|r| r["ruleId"] == "stdio-exit-on-eof")
            .expect("timer missed stdio-exit-on-eof");
        assert_eq!(eof["level"], "warning");
        assert_eq!(
            rules[eof["ruleIndex"].as_u64().unwrap() as usize],
            "stdio-exit-on-eof"
        );
        let text = eof["message"]["text"].as_str().unwrap();
        assert!(
            text.starts_with("timer missed stdio-exit-on-eof under close: "),
            "{text}"
        );
        assert!(text.contains("\nHeld by: pid 4242"), "{text}");
        assert!(text.contains("process.stdin.on(\"end\""), "{text}");
        let loc = &eof["locations"][0]["physicalLocation"];
        assert_eq!(loc["artifactLocation"]["uri"], "servers/timer.toml");
        assert_eq!(loc["region"]["startLine"], 3);
        let help = run["tool"]["driver"]["rules"][eof["ruleIndex"].as_u64().unwrap() as usize]
            ["help"]["text"]
            .as_str()
            .unwrap();
        assert!(help.contains("end-of-file"), "{help}");
    }
}
