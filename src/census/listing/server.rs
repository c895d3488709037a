//! One server object of a listing: its header (name, version, description), its packages,
//! and the typed field accessors every stage uses.

use super::*;

pub(super) type ServerResult = (Vec<Entry>, Vec<Reject>);

/// One server: its name (when it has one) and its entries and rejections.
pub(super) fn read_server(
    index: usize,
    pointer: &str,
    server: &Value,
    options: &ParseOptions,
) -> (Option<String>, ServerResult) {
    let Value::Object(obj) = server else {
        return (
            None,
            (
                vec![],
                vec![invalid(
                    pointer,
                    format!("a server entry must be an object, found {}", kind(server)),
                )],
            ),
        );
    };
    let name = obj.get("name").and_then(Value::as_str).map(str::to_string);
    let header = match server_header(pointer, obj) {
        Ok(h) => h,
        Err(r) => return (name, (vec![], vec![r])),
    };
    let packages = match packages_of(pointer, obj) {
        Ok(p) => p,
        Err(r) => return (name, (vec![], vec![r])),
    };
    let mut entries = vec![];
    let mut rejects = vec![];
    for (j, package) in packages.iter().enumerate() {
        let p = format!("{pointer}/packages/{j}");
        match read_package(&p, package, options) {
            Ok(resolved) => entries.push(resolved.into_entry(index, p, &header)),
            Err(r) => rejects.push(r),
        }
    }
    (name, (entries, rejects))
}

/// A server's packages: at least one, or why it cannot be run (remote-only, none listed,
/// not a list).
fn packages_of<'a>(pointer: &str, obj: &'a Map<String, Value>) -> Result<&'a [Value], Reject> {
    let packages = match obj.get("packages") {
        None | Some(Value::Null) => &[][..],
        Some(Value::Array(p)) => p.as_slice(),
        Some(other) => {
            return Err(invalid(
                format!("{pointer}/packages"),
                format!("`packages` must be an array, found {}", kind(other)),
            ));
        }
    };
    if !packages.is_empty() {
        return Ok(packages);
    }
    let has_remotes = obj
        .get("remotes")
        .and_then(Value::as_array)
        .is_some_and(|r| !r.is_empty());
    Err(if has_remotes {
        unrunnable(
            format!("{pointer}/remotes"),
            "remote-only server (it lists `remotes` and no `packages`; the suite launches \
             stdio packages)",
        )
    } else {
        invalid(
            format!("{pointer}/packages"),
            "the server lists no `packages` to run",
        )
    })
}

pub(super) struct Header {
    pub(super) name: String,
    pub(super) version: String,
    pub(super) description: String,
}

pub(super) fn server_header(pointer: &str, obj: &Map<String, Value>) -> Result<Header, Reject> {
    let name = required_str(pointer, obj, "name")?;
    if !valid_server_name(name) {
        return Err(invalid(
            format!("{pointer}/name"),
            format!(
                "`name` {name:?} is not a reverse-DNS server name such as \
                 `io.github.owner/server`"
            ),
        ));
    }
    let version = required_str(pointer, obj, "version")?;
    let description = optional_str(pointer, obj, "description")?.unwrap_or_default();
    Ok(Header {
        name: name.to_string(),
        version: version.to_string(),
        description: description.to_string(),
    })
}

/// The schema's pattern `^[a-zA-Z0-9.-]+/[a-zA-Z0-9._-]+$`.
pub(super) fn valid_server_name(name: &str) -> bool {
    let Some((ns, rest)) = name.split_once('/') else {
        return false;
    };
    !ns.is_empty()
        && !rest.is_empty()
        && ns
            .chars()
            .all(|c| c.is_ascii_alphanumeric() || c == '.' || c == '-')
        && rest
            .chars()
            .all(|c| c.is_ascii_alphanumeric() || c == '.' || c == '_' || c == '-')
}

pub(super) fn required_str<'a>(
    pointer: &str,
    obj: &'a Map<String, Value>,
    key: &str,
) -> Result<&'a str, Reject> {
    optional_str(pointer, obj, key)?
        .ok_or_else(|| invalid(format!("{pointer}/{key}"), format!("missing `{key}`")))
}

pub(super) fn optional_str<'a>(
    pointer: &str,
    obj: &'a Map<String, Value>,
    key: &str,
) -> Result<Option<&'a str>, Reject> {
    match obj.get(key) {
        None | Some(Value::Null) => Ok(None),
        Some(Value::String(s)) => Ok(Some(s)),
        Some(other) => Err(invalid(
            format!("{pointer}/{key}"),
            format!("`{key}` must be a string, found {}", kind(other)),
        )),
    }
}

pub(super) fn optional_bool(
    pointer: &str,
    obj: &Map<String, Value>,
    key: &str,
) -> Result<bool, Reject> {
    match obj.get(key) {
        None | Some(Value::Null) => Ok(false),
        Some(Value::Bool(b)) => Ok(*b),
        Some(other) => Err(invalid(
            format!("{pointer}/{key}"),
            format!("`{key}` must be a boolean, found {}", kind(other)),
        )),
    }
}

pub(super) fn optional_array<'a>(
    pointer: &str,
    obj: &'a Map<String, Value>,
    key: &str,
) -> Result<&'a [Value], Reject> {
    match obj.get(key) {
        None | Some(Value::Null) => Ok(&[]),
        Some(Value::Array(a)) => Ok(a),
        Some(other) => Err(invalid(
            format!("{pointer}/{key}"),
            format!("`{key}` must be an array, found {}", kind(other)),
        )),
    }
}

pub(super) fn as_object<'a>(
    pointer: &str,
    v: &'a Value,
    what: &str,
) -> Result<&'a Map<String, Value>, Reject> {
    v.as_object().ok_or_else(|| {
        invalid(
            pointer,
            format!("{what} must be an object, found {}", kind(v)),
        )
    })
}
