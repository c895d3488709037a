//! The `--sdk` argument: `LINE@VERSION`, `LINE@all`, `LINE@latest`, `LINE@FROM..TO` (either
//! end may be left open), `LINE=PATH` (a local checkout or a packed artifact),
//! `LINE@local:NAME=PATH` (the same, named), or a bare `LINE` (its latest release).

use std::path::PathBuf;

use super::version::{Version, VersionError};
use super::KitError;

/// What `--sdk` asked for.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct SdkRequest {
    /// The kit id (`typescript`, `python`, ...).
    pub line: String,
    pub target: KitTarget,
}

#[derive(Clone, Debug, PartialEq, Eq)]
pub enum KitTarget {
    /// Published releases from the registry.
    Registry(VersionSel),
    /// A local checkout (directory) or a packed artifact (file); relative to the caller's cwd.
    /// Named by `name` when given (`LINE@local:NAME=PATH`), else by the checkout's
    /// `git describe` or the file's name.
    Local { path: PathBuf, name: Option<String> },
}

/// Which published releases.
#[derive(Clone, Debug, PartialEq, Eq)]
pub enum VersionSel {
    /// The newest release that is not a pre-release.
    Latest,
    /// Every release that is not a pre-release.
    All,
    /// Exactly this version (a pre-release is fine when named).
    Exact(String),
    /// Releases from `from` to `to`, both inclusive, pre-releases left out; `None` is open.
    Range {
        from: Option<String>,
        to: Option<String>,
    },
}

/// What is wrong with an `--sdk` argument.
#[derive(Clone, Debug, PartialEq, Eq, thiserror::Error)]
pub enum ArgError {
    #[error("the SDK line is missing (e.g. typescript@1.24.0)")]
    NoLine,
    #[error("{0:?} is not an SDK line id (lowercase letters, digits and '-')")]
    BadLine(String),
    #[error("the path after '=' is empty")]
    EmptyPath,
    #[error("{0:?} is not a local build's name (lowercase letters, digits, '.', '_' and '-')")]
    BadName(String),
    #[error("the version after '@' is empty")]
    EmptyVersion,
    #[error("a range needs at least one end (e.g. 1.10.0..1.32.2)")]
    OpenRange,
    #[error("the range is empty: {from} is after {to}")]
    EmptyRange { from: String, to: String },
    #[error("{what}: {source}")]
    Version {
        what: &'static str,
        #[source]
        source: VersionError,
    },
}

fn bad(arg: &str, reason: ArgError) -> KitError {
    KitError::Arg {
        arg: arg.to_string(),
        reason,
    }
}

/// A kit id: lowercase letters, digits and `-`, starting with a letter.
pub fn valid_line(id: &str) -> bool {
    id.starts_with(|c: char| c.is_ascii_lowercase())
        && id
            .chars()
            .all(|c| c.is_ascii_lowercase() || c.is_ascii_digit() || c == '-')
}

fn version_text(text: &str, what: &'static str) -> Result<String, ArgError> {
    Version::parse(text).map_err(|source| ArgError::Version { what, source })?;
    Ok(text.to_string())
}

/// `NAME` or `NAME@SEL`, SEL being a version, `all`, `latest` or `FROM..TO` (either end may
/// be left open): the one grammar `--sdk LINE@...` and `host measure HOST@...` share. The
/// name is the caller's to check (a kit line, a host id); `None` when no `@` was written.
pub fn parse_named(arg: &str) -> Result<(String, Option<VersionSel>), ArgError> {
    let arg = arg.trim();
    match arg.split_once('@') {
        None => Ok((arg.to_string(), None)),
        Some((name, sel)) => Ok((name.to_string(), Some(parse_sel(sel)?))),
    }
}

/// Parses one `--sdk` argument. Pure: whether the line exists is checked against the loaded
/// kits ([`super::find_kit`]), whether the version exists against the registry.
pub fn parse_sdk_arg(s: &str) -> Result<SdkRequest, KitError> {
    let arg = s.trim();
    // The line id contains neither '@' nor '=', so the first of them ends it; a path after
    // '=' may contain '@'.
    let local = match arg.find(['@', '=']) {
        Some(i) if arg[i..].starts_with('=') => Some((&arg[..i], None, &arg[i + 1..])),
        Some(i) => arg[i + 1..]
            .strip_prefix("local:")
            .and_then(|s| s.split_once('='))
            .map(|(name, path)| (&arg[..i], Some(name), path)),
        None => None,
    };
    let (line, target) = match local {
        Some((line, name, path)) => (line.to_string(), local_target(arg, path, name)),
        None => {
            let line = arg.split_once('@').map_or(arg, |(line, _)| line);
            let target = parse_named(arg)
                .map(|(_, sel)| KitTarget::Registry(sel.unwrap_or(VersionSel::Latest)))
                .map_err(|reason| bad(arg, reason));
            (line.to_string(), target)
        }
    };
    // The line is checked first: its mistake is named before the version's or the path's.
    if line.is_empty() {
        return Err(bad(arg, ArgError::NoLine));
    }
    if !valid_line(&line) {
        return Err(bad(arg, ArgError::BadLine(line)));
    }
    Ok(SdkRequest {
        line,
        target: target?,
    })
}

/// A local build's name: it becomes part of server names (`typescript-local-NAME-timer`).
pub fn valid_name(name: &str) -> bool {
    !name.is_empty()
        && name
            .chars()
            .all(|c| c.is_ascii_lowercase() || c.is_ascii_digit() || matches!(c, '.' | '_' | '-'))
}

fn local_target(arg: &str, path: &str, name: Option<&str>) -> Result<KitTarget, KitError> {
    if path.is_empty() {
        return Err(bad(arg, ArgError::EmptyPath));
    }
    if let Some(n) = name.filter(|n| !valid_name(n)) {
        return Err(bad(arg, ArgError::BadName(n.to_string())));
    }
    Ok(KitTarget::Local {
        path: PathBuf::from(path),
        name: name.map(str::to_string),
    })
}

fn parse_sel(sel: &str) -> Result<VersionSel, ArgError> {
    match sel {
        "" => Err(ArgError::EmptyVersion),
        "all" => Ok(VersionSel::All),
        "latest" => Ok(VersionSel::Latest),
        _ => match sel.split_once("..") {
            None => Ok(VersionSel::Exact(version_text(sel, "version")?)),
            Some((from, to)) => {
                if from.is_empty() && to.is_empty() {
                    return Err(ArgError::OpenRange);
                }
                let from = (!from.is_empty())
                    .then(|| version_text(from, "range start"))
                    .transpose()?;
                let to = (!to.is_empty())
                    .then(|| version_text(to, "range end"))
                    .transpose()?;
                if let (Some(a), Some(b)) = (&from, &to) {
                    if Version::parse(a).ok() > Version::parse(b).ok() {
                        return Err(ArgError::EmptyRange {
                            from: a.clone(),
                            to: b.clone(),
                        });
                    }
                }
                Ok(VersionSel::Range { from, to })
            }
        },
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn reg(line: &str, sel: VersionSel) -> SdkRequest {
        SdkRequest {
            line: line.into(),
            target: KitTarget::Registry(sel),
        }
    }

    #[test]
    fn every_form_parses() {
        assert_eq!(
            parse_sdk_arg("typescript@1.24.0").unwrap(),
            reg("typescript", VersionSel::Exact("1.24.0".into()))
        );
        assert_eq!(
            parse_sdk_arg("typescript@all").unwrap(),
            reg("typescript", VersionSel::All)
        );
        assert_eq!(
            parse_sdk_arg("python").unwrap(),
            reg("python", VersionSel::Latest)
        );
        assert_eq!(
            parse_sdk_arg("typescript@1.10.0..1.32.2").unwrap(),
            reg(
                "typescript",
                VersionSel::Range {
                    from: Some("1.10.0".into()),
                    to: Some("1.32.2".into())
                }
            )
        );
        assert_eq!(
            parse_sdk_arg("go@1.4.0..").unwrap(),
            reg(
                "go",
                VersionSel::Range {
                    from: Some("1.4.0".into()),
                    to: None
                }
            )
        );
        assert_eq!(
            parse_sdk_arg("typescript=../sdk@v1").unwrap(),
            SdkRequest {
                line: "typescript".into(),
                target: KitTarget::Local {
                    path: PathBuf::from("../sdk@v1"),
                    name: None
                }
            }
        );
        assert_eq!(
            parse_sdk_arg("typescript@local:eof-fix=../sdk").unwrap(),
            SdkRequest {
                line: "typescript".into(),
                target: KitTarget::Local {
                    path: PathBuf::from("../sdk"),
                    name: Some("eof-fix".into())
                }
            }
        );
        assert_eq!(
            parse_sdk_arg("python@2.0.0b1").unwrap(),
            reg("python", VersionSel::Exact("2.0.0b1".into()))
        );
    }

    #[test]
    fn a_name_and_its_releases_parse_alone() {
        assert_eq!(parse_named("codex"), Ok(("codex".into(), None)));
        assert_eq!(
            parse_named("codex@latest"),
            Ok(("codex".into(), Some(VersionSel::Latest)))
        );
        assert_eq!(
            parse_named("codex@all"),
            Ok(("codex".into(), Some(VersionSel::All)))
        );
        assert_eq!(
            parse_named("claude-code@2.0.1..2.1.3"),
            Ok((
                "claude-code".into(),
                Some(VersionSel::Range {
                    from: Some("2.0.1".into()),
                    to: Some("2.1.3".into())
                })
            ))
        );
        assert_eq!(parse_named("codex@"), Err(ArgError::EmptyVersion));
    }

    #[test]
    fn mistakes_are_explained() {
        let msg = |s: &str| parse_sdk_arg(s).unwrap_err().to_string();
        assert!(msg("@1.0.0").contains("line is missing"));
        assert!(msg("typescript@").contains("empty"));
        assert!(msg("typescript=").contains("path"));
        assert!(msg("TypeScript@1.0.0").contains("not an SDK line id"));
        assert!(msg("typescript@1.x").contains("wildcards"));
        assert!(msg("typescript@..").contains("at least one end"));
        assert!(msg("typescript@2.0.0..1.0.0").contains("range is empty"));
        assert!(msg("typescript@next").contains("version"));
        assert!(msg("typescript@1.0..x").contains("range end"));
        assert!(msg("typescript@local:Fix=../sdk").contains("local build's name"));
        assert!(msg("typescript@local:fix=").contains("path"));
    }
}
