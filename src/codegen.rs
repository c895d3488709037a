//! The shape of a generated closed identifier enum (`RuleId`, `Ending`), shared by the codegen
//! of the rule and ending catalogues (`src/rules/codegen.rs`, `src/config/endings_codegen.rs`);
//! `build.rs` and the crate each hold it once at their root. Only `std` here.

use std::fmt::Write as _;

/// A stable id: lowercase ASCII words joined by single hyphens.
pub fn is_id(s: &str) -> bool {
    !s.is_empty()
        && !s.starts_with('-')
        && !s.ends_with('-')
        && !s.contains("--")
        && s.chars()
            .all(|c| c.is_ascii_lowercase() || c.is_ascii_digit() || c == '-')
}

/// `stdio-exit-on-eof` → `StdioExitOnEof`.
pub fn variant(id: &str) -> String {
    id.split('-')
        .map(|w| {
            let mut c = w.chars();
            c.next()
                .map(|f| f.to_ascii_uppercase().to_string() + c.as_str())
                .unwrap_or_default()
        })
        .collect()
}

/// Lines, each ended by a newline.
pub fn lines(parts: &[&str]) -> String {
    parts.iter().map(|l| format!("{l}\n")).collect()
}

/// A closed identifier enum (see `model::ids::ClosedId`): strum derives its names, members
/// and parsing; each variant's name is written out for strum and serde alike.
pub fn closed_enum(name: &str, what: &str, doc: &[&str], variants: &[(String, String)]) -> String {
    let mut s = String::new();
    for d in doc {
        let _ = writeln!(
            s,
            "///{}",
            if d.is_empty() {
                String::new()
            } else {
                format!(" {d}")
            }
        );
    }
    s += &lines(&[
        "#[derive(Clone, Copy, Debug, PartialEq, Eq, PartialOrd, Ord, Hash, Serialize, Deserialize,",
        "    strum::EnumString, strum::IntoStaticStr, strum::Display, strum::VariantArray)]",
    ]);
    let _ = writeln!(
        s,
        "#[strum(parse_err_ty = UnknownId, parse_err_fn = unknown::<{name}>)]"
    );
    let _ = writeln!(s, "pub enum {name} {{");
    for (id, d) in variants {
        let _ = writeln!(s, "    #[doc = {d:?}]");
        let _ = writeln!(s, "    #[serde(rename = {id:?})]");
        let _ = writeln!(s, "    #[strum(serialize = {id:?})]");
        let _ = writeln!(s, "    {},", variant(id));
    }
    let _ = writeln!(s, "}}\n");
    let _ = writeln!(
        s,
        "impl ClosedId for {name} {{\n    const WHAT: &'static str = {what:?};\n}}\n"
    );
    let _ = writeln!(s, "impl {name} {{");
    s += &lines(&["    /// Every member, in declaration order."]);
    let _ = writeln!(
        s,
        "    pub const ALL: &'static [{name}] = <{name} as strum::VariantArray>::VARIANTS;\n"
    );
    s + &lines(&[
        "    pub fn as_str(self) -> &'static str {",
        "        self.into()",
        "    }",
        "}",
    ])
}
