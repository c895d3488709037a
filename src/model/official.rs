//! How a case is named in the official MCP conformance suite's vocabulary
//! (`@modelcontextprotocol/conformance`): its result directories and its expected-failures
//! baseline both name a scenario by one path segment without a colon. A case of ours is the
//! scenario `<server>+<scenario>`: `node-1.30.0-timer+close-java`.

/// One path segment that every file system and `actions/upload-artifact` accept: characters
/// other than ASCII letters, digits, `.`, `_` and `-` become `-` (so `close:java` is
/// `close-java`), and a segment that would be empty or only dots gets a leading `_`.
pub fn segment(s: &str) -> String {
    let out: String = s
        .chars()
        .map(|c| {
            if c.is_ascii_alphanumeric() || matches!(c, '.' | '_' | '-') {
                c
            } else {
                '-'
            }
        })
        .collect();
    if out.chars().all(|c| c == '.') {
        format!("_{out}")
    } else {
        out
    }
}

/// The official scenario name of a case: `<server>+<scenario>`, each part a [`segment`]
/// (`+` never occurs in one, so the name splits back at its only `+`).
pub fn scenario_name(server: &str, scenario: &str) -> String {
    format!("{}+{}", segment(server), segment(scenario))
}

/// `<server>+<scenario>` → the two segments.
pub fn split_name(name: &str) -> Option<(&str, &str)> {
    name.split_once('+')
        .filter(|(a, b)| !a.is_empty() && !b.is_empty() && !b.contains('+'))
}
