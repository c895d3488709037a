//! Arguments and environment variables: `{variable}` substitution, defaults, caller values,
//! and placeholders for required secrets.

use super::*;

/// The value of an input: absent, deliberately left out (an optional variable had no value),
/// or resolved.
#[derive(Debug, PartialEq, Eq)]
pub(super) enum Resolution {
    Absent,
    Omit,
    Value(String),
}

/// `value` with its `{variables}` substituted, else `default`.
pub(super) fn resolve_input(
    pointer: &str,
    obj: &Map<String, Value>,
    options: &ParseOptions,
    placeholders: &mut Vec<String>,
) -> Result<Resolution, Reject> {
    if let Some(template) = optional_str(pointer, obj, "value")? {
        let variables = match obj.get("variables") {
            None | Some(Value::Null) => None,
            Some(v) => Some(as_object(
                &format!("{pointer}/variables"),
                v,
                "`variables`",
            )?),
        };
        return substitute(pointer, template, variables, options, placeholders);
    }
    Ok(match optional_str(pointer, obj, "default")? {
        Some(d) => Resolution::Value(d.to_string()),
        None => Resolution::Absent,
    })
}

/// Replaces each `{name}` with the caller's value, the variable's `value` or `default`, or the
/// placeholder for a secret. A name no variable defines is an error here (the schema would
/// leave it in place, which would hand the server a literal `{name}`).
pub(super) fn substitute(
    pointer: &str,
    template: &str,
    variables: Option<&Map<String, Value>>,
    options: &ParseOptions,
    placeholders: &mut Vec<String>,
) -> Result<Resolution, Reject> {
    let mut out = String::with_capacity(template.len());
    let mut rest = template;
    while let Some(start) = rest.find('{') {
        out.push_str(&rest[..start]);
        let after = &rest[start + 1..];
        let name_len = after
            .find(|c: char| !(c.is_ascii_alphanumeric() || matches!(c, '_' | '-' | '.')))
            .unwrap_or(after.len());
        let name = &after[..name_len];
        let is_ref = !name.is_empty()
            && name.starts_with(|c: char| c.is_ascii_alphabetic() || c == '_')
            && after[name_len..].starts_with('}');
        if !is_ref {
            // Not a `{variable}` (JSON in a value, a lone brace): kept verbatim.
            out.push('{');
            rest = after;
            continue;
        }
        match variable_value(pointer, name, variables, options, placeholders)? {
            Resolution::Value(v) => out.push_str(&v),
            Resolution::Omit => return Ok(Resolution::Omit),
            Resolution::Absent => unreachable!("variable_value never returns Absent"),
        }
        rest = &after[name_len + 1..];
    }
    out.push_str(rest);
    Ok(Resolution::Value(out))
}

pub(super) fn variable_value(
    pointer: &str,
    name: &str,
    variables: Option<&Map<String, Value>>,
    options: &ParseOptions,
    placeholders: &mut Vec<String>,
) -> Result<Resolution, Reject> {
    if let Some(v) = options.variables.get(name) {
        return Ok(Resolution::Value(v.clone()));
    }
    let Some(def) = variables.and_then(|vars| vars.get(name)) else {
        return Err(invalid(
            format!("{pointer}/value"),
            format!("`{{{name}}}` is used in `value` but not defined in `variables`"),
        ));
    };
    let p = format!("{pointer}/variables/{}", escape_token(name));
    let def = as_object(&p, def, "a variable")?;
    if let Some(v) = optional_str(&p, def, "value")? {
        return Ok(Resolution::Value(v.to_string()));
    }
    if let Some(d) = optional_str(&p, def, "default")? {
        return Ok(Resolution::Value(d.to_string()));
    }
    let required = optional_bool(&p, def, "isRequired")?;
    if optional_bool(&p, def, "isSecret")? {
        if required {
            placeholders.push(format!("{{{name}}}"));
            return Ok(Resolution::Value(PLACEHOLDER.to_string()));
        }
        return Ok(Resolution::Omit);
    }
    if required {
        return Err(invalid(
            p,
            format!("required variable `{{{name}}}` has no value or default"),
        ));
    }
    Ok(Resolution::Omit)
}

/// RFC 6901: `~` and `/` in a key.
pub(super) fn escape_token(key: &str) -> String {
    key.replace('~', "~0").replace('/', "~1")
}

/// One runtime or package argument as argv words (none when an optional one has no value).
pub(super) fn resolve_argument(
    pointer: &str,
    arg: &Value,
    options: &ParseOptions,
    placeholders: &mut Vec<String>,
) -> Result<Vec<String>, Reject> {
    let obj = as_object(pointer, arg, "an argument")?;
    let required = optional_bool(pointer, obj, "isRequired")?;
    let secret = optional_bool(pointer, obj, "isSecret")?;
    match required_str(pointer, obj, "type")? {
        "positional" => positional(pointer, obj, (required, secret), options, placeholders),
        "named" => named(pointer, obj, (required, secret), options, placeholders),
        other => Err(invalid(
            format!("{pointer}/type"),
            format!("unknown argument type `{other}` (expected positional or named)"),
        )),
    }
}

/// A positional argument: its value, else its hint's variable, a placeholder for a required
/// secret, or the hint itself. `(required, secret)` as the argument says.
fn positional(
    pointer: &str,
    obj: &Map<String, Value>,
    (required, secret): (bool, bool),
    options: &ParseOptions,
    placeholders: &mut Vec<String>,
) -> Result<Vec<String>, Reject> {
    let hint = optional_str(pointer, obj, "valueHint")?;
    match resolve_input(pointer, obj, options, placeholders)? {
        Resolution::Value(v) => Ok(vec![v]),
        Resolution::Omit if required => Err(invalid(
            pointer,
            "required argument left without a value by its variables",
        )),
        Resolution::Omit => Ok(vec![]),
        Resolution::Absent => {
            if let Some(v) = hint.and_then(|h| options.variables.get(h)) {
                return Ok(vec![v.clone()]);
            }
            if secret && required {
                placeholders.push(hint.unwrap_or("positional argument").to_string());
                return Ok(vec![PLACEHOLDER.to_string()]);
            }
            // As hosts show and run it: a positional without a value is its hint.
            match hint {
                Some(h) => Ok(vec![h.to_string()]),
                None => Err(invalid(
                    pointer,
                    "a positional argument needs `value` or `valueHint`",
                )),
            }
        }
    }
}

/// A named argument: the flag and its value, a placeholder for a required secret, or the
/// flag alone (a switch). `(required, secret)` as the argument says.
fn named(
    pointer: &str,
    obj: &Map<String, Value>,
    (required, secret): (bool, bool),
    options: &ParseOptions,
    placeholders: &mut Vec<String>,
) -> Result<Vec<String>, Reject> {
    let name = required_str(pointer, obj, "name")?;
    if name.is_empty() || name.chars().any(char::is_whitespace) {
        return Err(invalid(
            format!("{pointer}/name"),
            format!("`name` {name:?} is not a command-line flag"),
        ));
    }
    match resolve_input(pointer, obj, options, placeholders)? {
        Resolution::Value(v) => Ok(named_words(name, v)),
        Resolution::Omit if required => Err(invalid(
            pointer,
            format!("required argument `{name}` left without a value by its variables"),
        )),
        Resolution::Omit => Ok(vec![]),
        Resolution::Absent if secret && required => {
            placeholders.push(name.to_string());
            Ok(named_words(name, PLACEHOLDER.to_string()))
        }
        Resolution::Absent if secret => Ok(vec![]),
        // A named argument without a value is a switch (`--stdio`, `--read-only`).
        Resolution::Absent => Ok(vec![name.to_string()]),
    }
}

/// `--flag value` as two words, as hosts pass it; joined as `--flag=value` when the name
/// already ends in `=` or the value starts with `-` (which a parser would take for a flag).
pub(super) fn named_words(name: &str, value: String) -> Vec<String> {
    if let Some(stem) = name.strip_suffix('=') {
        vec![format!("{stem}={value}")]
    } else if value.starts_with('-') {
        vec![format!("{name}={value}")]
    } else {
        vec![name.to_string(), value]
    }
}

pub(super) fn resolve_env(
    pointer: &str,
    var: &Value,
    options: &ParseOptions,
    placeholders: &mut Vec<String>,
) -> Result<Option<(String, String)>, Reject> {
    let obj = as_object(pointer, var, "an environment variable")?;
    let name = required_str(pointer, obj, "name")?;
    let valid = name.starts_with(|c: char| c.is_ascii_alphabetic() || c == '_')
        && name.chars().all(|c| c.is_ascii_alphanumeric() || c == '_');
    if !valid {
        return Err(invalid(
            format!("{pointer}/name"),
            format!("{name:?} is not an environment variable name"),
        ));
    }
    let required = optional_bool(pointer, obj, "isRequired")?;
    let secret = optional_bool(pointer, obj, "isSecret")?;
    if let Some(v) = options.variables.get(name) {
        return Ok(Some((name.to_string(), v.clone())));
    }
    match resolve_input(pointer, obj, options, placeholders)? {
        Resolution::Value(v) => Ok(Some((name.to_string(), v))),
        Resolution::Omit if required => Err(invalid(
            pointer,
            format!("required environment variable `{name}` left without a value by its variables"),
        )),
        Resolution::Omit => Ok(None),
        Resolution::Absent if secret && required => {
            placeholders.push(name.to_string());
            Ok(Some((name.to_string(), PLACEHOLDER.to_string())))
        }
        Resolution::Absent if required => Err(invalid(
            pointer,
            format!("required environment variable `{name}` has no value or default"),
        )),
        Resolution::Absent => Ok(None),
    }
}
