//! One package: its registry, launcher, transport, identifier and exact version checked, and
//! the argv and stable id of the entry it becomes.

use super::*;

/// A package that passed every check, with its argv and environment resolved.
pub(super) struct Resolved {
    pub(super) registry: Registry,
    pub(super) runtime: Launcher,
    pub(super) identifier: String,
    pub(super) version: String,
    pub(super) runtime_args: Vec<String>,
    pub(super) package_args: Vec<String>,
    pub(super) env: BTreeMap<String, String>,
    pub(super) placeholders: Vec<String>,
}

impl Resolved {
    pub(super) fn into_entry(self, index: usize, pointer: String, header: &Header) -> Entry {
        let args = build_args(
            self.runtime,
            &self.runtime_args,
            &self.identifier,
            &self.version,
            &self.package_args,
        );
        Entry {
            id: entry_id(&self.identifier, &self.version),
            index,
            pointer,
            server_name: header.name.clone(),
            server_version: header.version.clone(),
            registry: self.registry,
            identifier: self.identifier,
            version: self.version,
            runtime: self.runtime,
            runtime_args: self.runtime_args,
            args,
            env: self.env,
            placeholders: self.placeholders,
            description: header.description.clone(),
        }
    }
}

/// argv after the launcher. npx gets `-y` (as every README writes it) unless the runtime
/// arguments already say it; the package spec pins the exact version in each ecosystem's
/// own syntax.
pub fn build_args(
    runtime: Launcher,
    runtime_args: &[String],
    identifier: &str,
    version: &str,
    package_args: &[String],
) -> Vec<String> {
    let mut args = vec![];
    match runtime {
        Launcher::Npx => {
            if !runtime_args.iter().any(|a| a == "-y" || a == "--yes") {
                args.push("-y".to_string());
            }
            args.extend(runtime_args.iter().cloned());
            args.push(format!("{identifier}@{version}"));
        }
        Launcher::Uvx => {
            args.extend(runtime_args.iter().cloned());
            args.push(format!("{identifier}=={version}"));
        }
    }
    args.extend(package_args.iter().cloned());
    args
}

/// A stable name for reports and file names: lowercase, `[a-z0-9._-]`, starting with an
/// alphanumeric.
pub fn entry_id(identifier: &str, version: &str) -> String {
    let raw = format!("{identifier}-{version}").to_ascii_lowercase();
    let mut id = String::with_capacity(raw.len());
    for c in raw.chars() {
        let c = if c.is_ascii_alphanumeric() || c == '.' || c == '_' || c == '-' {
            c
        } else {
            '-'
        };
        if c == '-' && (id.is_empty() || id.ends_with('-')) {
            continue;
        }
        id.push(c);
    }
    let id = id.trim_start_matches(['.', '_', '-']).trim_end_matches('-');
    if id.is_empty() {
        "package".to_string()
    } else {
        id.to_string()
    }
}

pub(super) fn unique_id(taken: &mut BTreeSet<String>, id: &str) -> String {
    let mut candidate = id.to_string();
    let mut n = 2;
    while taken.contains(&candidate) {
        candidate = format!("{id}-{n}");
        n += 1;
    }
    taken.insert(candidate.clone());
    candidate
}

pub(super) fn read_package(
    pointer: &str,
    package: &Value,
    options: &ParseOptions,
) -> Result<Resolved, Reject> {
    let obj = as_object(pointer, package, "a package")?;
    let registry = registry_of(pointer, obj)?;
    let runtime = runtime_for(pointer, obj, registry)?;
    check_transport(pointer, obj)?;
    let identifier = required_str(pointer, obj, "identifier")?;
    check_identifier(pointer, registry, identifier)?;
    let version = match obj.get("version") {
        None | Some(Value::Null) => {
            return Err(invalid(
                format!("{pointer}/version"),
                "missing `version`: the census installs each package at an exact version",
            ))
        }
        Some(_) => required_str(pointer, obj, "version")?,
    };
    check_version(pointer, version)?;

    let mut placeholders = vec![];
    let mut runtime_args = vec![];
    for (i, arg) in optional_array(pointer, obj, "runtimeArguments")?
        .iter()
        .enumerate()
    {
        let p = format!("{pointer}/runtimeArguments/{i}");
        runtime_args.extend(resolve_argument(&p, arg, options, &mut placeholders)?);
    }
    let mut package_args = vec![];
    for (i, arg) in optional_array(pointer, obj, "packageArguments")?
        .iter()
        .enumerate()
    {
        let p = format!("{pointer}/packageArguments/{i}");
        package_args.extend(resolve_argument(&p, arg, options, &mut placeholders)?);
    }
    let mut env = BTreeMap::new();
    for (i, var) in optional_array(pointer, obj, "environmentVariables")?
        .iter()
        .enumerate()
    {
        let p = format!("{pointer}/environmentVariables/{i}");
        if let Some((name, value)) = resolve_env(&p, var, options, &mut placeholders)? {
            env.insert(name, value);
        }
    }
    Ok(Resolved {
        registry,
        runtime,
        identifier: identifier.to_string(),
        version: version.to_string(),
        runtime_args,
        package_args,
        env,
        placeholders,
    })
}

/// The registry a package comes from, if the census can install from it.
pub(super) fn registry_of(pointer: &str, obj: &Map<String, Value>) -> Result<Registry, Reject> {
    Ok(match required_str(pointer, obj, "registryType")? {
        "npm" => Registry::Npm,
        "pypi" => Registry::Pypi,
        "oci" => {
            return Err(unrunnable(
                format!("{pointer}/registryType"),
                "registryType `oci` (a container image, run with docker)",
            ))
        }
        "nuget" => {
            return Err(unrunnable(
                format!("{pointer}/registryType"),
                "registryType `nuget` (a .NET tool, run with dnx; .NET is not available)",
            ))
        }
        "mcpb" => {
            return Err(unrunnable(
                format!("{pointer}/registryType"),
                "registryType `mcpb` (an MCP bundle that a host unpacks, not a registry package)",
            ))
        }
        other => {
            return Err(invalid(
                format!("{pointer}/registryType"),
                format!("unknown registryType `{other}` (expected npm, pypi, oci, nuget or mcpb)"),
            ))
        }
    })
}

pub(super) fn runtime_for(
    pointer: &str,
    obj: &Map<String, Value>,
    registry: Registry,
) -> Result<Launcher, Reject> {
    let expected = match registry {
        Registry::Npm => Launcher::Npx,
        Registry::Pypi => Launcher::Uvx,
    };
    let Some(hint) = optional_str(pointer, obj, "runtimeHint")? else {
        return Ok(expected);
    };
    if hint == expected.program() {
        return Ok(expected);
    }
    let p = format!("{pointer}/runtimeHint");
    Err(match hint {
        "docker" => unrunnable(p, "runtimeHint `docker` (containers are not run here)"),
        "dnx" => unrunnable(p, "runtimeHint `dnx` (.NET tools are not run here)"),
        other => unrunnable(
            p,
            format!(
                "runtimeHint `{other}` for a {registry} package (the census runs {registry} \
                 packages with {})",
                expected.program()
            ),
        ),
    })
}

pub(super) fn check_transport(pointer: &str, obj: &Map<String, Value>) -> Result<(), Reject> {
    let p = format!("{pointer}/transport");
    let transport = obj
        .get("transport")
        .ok_or_else(|| invalid(&p, "missing `transport`"))?;
    let transport = as_object(&p, transport, "`transport`")?;
    match required_str(&p, transport, "type")? {
        "stdio" => Ok(()),
        t @ ("streamable-http" | "sse") => Err(unrunnable(
            format!("{p}/type"),
            format!("transport `{t}` (the suite tests stdio servers)"),
        )),
        other => Err(invalid(
            format!("{p}/type"),
            format!("unknown transport type `{other}` (expected stdio, streamable-http or sse)"),
        )),
    }
}

/// Package names as the registries allow them; in particular never starting with `-`, which
/// npx or uvx would read as an option.
pub(super) fn check_identifier(
    pointer: &str,
    registry: Registry,
    identifier: &str,
) -> Result<(), Reject> {
    let ok = match registry {
        Registry::Npm => {
            let bare = match identifier.strip_prefix('@') {
                Some(scoped) => match scoped.split_once('/') {
                    Some((scope, name)) if npm_part(scope) => name,
                    _ => "",
                },
                None => identifier,
            };
            npm_part(bare)
        }
        Registry::Pypi => {
            identifier
                .chars()
                .all(|c| c.is_ascii_alphanumeric() || matches!(c, '.' | '_' | '-'))
                && identifier.starts_with(|c: char| c.is_ascii_alphanumeric())
                && identifier.ends_with(|c: char| c.is_ascii_alphanumeric())
        }
    };
    if ok {
        Ok(())
    } else {
        Err(invalid(
            format!("{pointer}/identifier"),
            format!("`identifier` {identifier:?} is not a valid {registry} package name"),
        ))
    }
}

pub(super) fn npm_part(s: &str) -> bool {
    !s.is_empty()
        && !s.starts_with(['.', '_', '-'])
        && s.chars()
            .all(|c| c.is_ascii_alphanumeric() || matches!(c, '-' | '.' | '_' | '~'))
}

/// An exact version: no ranges, tags or wildcards, which would make "install once" ambiguous.
pub(super) fn check_version(pointer: &str, version: &str) -> Result<(), Reject> {
    let p = format!("{pointer}/version");
    if version.is_empty() || version == "latest" {
        return Err(invalid(
            p,
            format!("`version` {version:?} is not an exact version"),
        ));
    }
    let exact = version.starts_with(|c: char| c.is_ascii_digit())
        && version
            .chars()
            .all(|c| c.is_ascii_alphanumeric() || matches!(c, '.' | '+' | '-' | '_' | '!'))
        && !version
            .split(['.', '+', '-'])
            .any(|part| matches!(part, "x" | "X" | "*" | ""));
    if exact {
        Ok(())
    } else {
        Err(invalid(
            p,
            format!(
                "`version` {version:?} is not an exact version (ranges and tags are not installed)"
            ),
        ))
    }
}
