//! The template language of the catalogue's wording (minijinja): `{{ field }}` of a finding,
//! `{{ x | ms }}` for milliseconds (`?` when unknown), nothing escaped, and a name a finding
//! does not have is an error. The catalogue checks its templates with it when it is read; the
//! wording renders them.

use std::sync::LazyLock;

use minijinja::value::Serde;
use minijinja::{AutoEscape, Environment, UndefinedBehavior, Value};
use serde_json::{Map, Value as Json};

/// The keys of `[wording.ending]`: every stage, and `none` for a case that never ran.
pub const ENDING_KEYS: &[&str] = &[
    "eof", "sigint", "sigterm", "sighup", "sigkill", "survived", "none",
];

fn ms(v: Option<f64>) -> String {
    v.map_or_else(|| "?".into(), |v| format!("{v:.0} ms"))
}

fn environment<'s>() -> Environment<'s> {
    let mut env = Environment::new();
    env.set_undefined_behavior(UndefinedBehavior::Strict);
    env.set_auto_escape_callback(|_| AutoEscape::None);
    env.add_filter("ms", ms);
    env
}

static ENV: LazyLock<Environment<'static>> = LazyLock::new(environment);

/// What is wrong with a template's syntax, if anything (checked when the catalogue is read).
pub fn template_problem(template: &str) -> Option<String> {
    environment()
        .template_from_str(template)
        .err()
        .map(|e| e.to_string())
}

/// What is wrong with an expression's syntax, if anything.
pub fn expression_problem(expression: &str) -> Option<String> {
    environment()
        .compile_expression(expression)
        .err()
        .map(|e| e.to_string())
}

pub(super) fn render(
    template: &str,
    values: &Map<String, Json>,
) -> Result<String, minijinja::Error> {
    ENV.render_str(template, Value::from(Serde(values)))
}

/// Whether a label's `when` holds of a case.
pub(super) fn holds(when: &str, case: &Value) -> Result<bool, minijinja::Error> {
    let e = ENV.compile_expression_owned(when.to_string())?;
    Ok(e.eval(case.clone())?.is_true())
}
