//! Version numbers and version requirements across the ecosystems the kits cover, with one
//! ordering for all of them.
//!
//! A version is parsed as semver (`semver`: npm, crates.io, Go modules without their `v`,
//! Maven's `2.0.0-M2`) and, when it is not semver, as PEP 440 (`pep440_rs`: `2.0.0a1`,
//! `2026.10.19.post1`, and the shorter or longer release parts `1.0`, `2.13.0.1` that Maven
//! and PyPI also publish). Two versions of one scheme compare by that scheme's rules; a
//! semver and a PEP 440 version (`1.0.0` against `1.0`, `1.23.0` against the bound
//! `2.0.0a0`) compare by release numbers, then pre-release < release < post-release. Build
//! metadata and PEP 440 local labels (`+...`) are ignored.
//!
//! Requirements keep the kits' own small syntax (`>=1.3.0, <1.12.0 || =0.7.0`), each
//! comparator tested in plain version order: the crates' own requirement types give
//! pre-releases special treatment (semver's `<2.0.0` never admits `1.23.0-beta.0`, PEP 440's
//! specifiers leave pre-releases out unless named), which would change which template a
//! pre-release is instantiated with.

use std::cmp::Ordering;
use std::fmt;
use std::str::FromStr;

/// Why a text is not a version or a requirement.
#[derive(Clone, Debug, PartialEq, Eq, thiserror::Error)]
pub enum VersionError {
    #[error("{0:?} is not a version")]
    NotAVersion(String),
    #[error("{0:?} is not a version (it must start with a number)")]
    NoNumber(String),
    #[error("{0:?}: wildcards are not versions (write a range such as \">=1.0.0, <2.0.0\")")]
    Wildcard(String),
    #[error("empty version requirement (use \"*\" for every version)")]
    EmptyRequirement,
    #[error("{0:?}: an alternative of `||` is empty")]
    EmptyAlternative(String),
    #[error("in requirement {requirement:?}: {source}")]
    InRequirement {
        requirement: String,
        #[source]
        source: Box<VersionError>,
    },
}

/// The scheme a version parsed under.
#[derive(Clone, Debug)]
enum Parsed {
    Semver(semver::Version),
    Pep440(pep440_rs::Version),
}

/// One parsed version. Compares by meaning, not by text: `1.0` == `1.0.0`, `1.10` > `1.9`.
#[derive(Clone, Debug)]
pub struct Version {
    raw: String,
    parsed: Parsed,
}

impl Version {
    /// Parses `1.2.3`, `v1.8.0-pre.1`, `2.0.0a1`, `1.0`, `2.13.0.1`, `2.0.0-RC1`.
    pub fn parse(text: &str) -> Result<Version, VersionError> {
        let raw = text.trim();
        let body = raw.strip_prefix('v').unwrap_or(raw);
        if body.is_empty() {
            return Err(VersionError::NotAVersion(raw.to_string()));
        }
        if !body.starts_with(|c: char| c.is_ascii_digit()) {
            return Err(VersionError::NoNumber(raw.to_string()));
        }
        if body
            .split(['.', '-', '+'])
            .any(|t| t.eq_ignore_ascii_case("x") || t == "*")
        {
            return Err(VersionError::Wildcard(raw.to_string()));
        }
        let parsed = if let Ok(mut v) = semver::Version::parse(body) {
            v.build = semver::BuildMetadata::EMPTY;
            Parsed::Semver(v)
        } else if let Ok(v) = pep440_rs::Version::from_str(body) {
            Parsed::Pep440(v.without_local())
        } else {
            return Err(VersionError::NotAVersion(raw.to_string()));
        };
        Ok(Version {
            raw: raw.to_string(),
            parsed,
        })
    }

    /// The text as written (a leading `v` kept).
    pub fn as_str(&self) -> &str {
        &self.raw
    }

    /// A pre-release (alpha, beta, rc, milestone, `-pre.N`, `.devN`): left out of sweeps.
    pub fn is_prerelease(&self) -> bool {
        match &self.parsed {
            Parsed::Semver(v) => !v.pre.is_empty(),
            Parsed::Pep440(v) => v.any_prerelease(),
        }
    }

    /// The compatible line it belongs to, as semver reads a caret: its major release, or
    /// `0.minor` before 1.0 (`1.30.0` and `1.2.0` share one; `2.3.0` and `0.6.2` are others).
    pub fn major_line(&self) -> (u64, u64) {
        let (release, _) = self.cross_key();
        match release.as_slice() {
            [0, minor, ..] => (0, *minor),
            [major, ..] => (*major, 0),
            [] => (0, 0),
        }
    }

    /// Release numbers and rank (0 pre-release, 1 release, 2 post-release), for comparing
    /// across schemes.
    fn cross_key(&self) -> (Vec<u64>, u8) {
        match &self.parsed {
            Parsed::Semver(v) => (
                vec![v.major, v.minor, v.patch],
                if v.pre.is_empty() { 1 } else { 0 },
            ),
            Parsed::Pep440(v) => (
                v.release().to_vec(),
                if v.any_prerelease() {
                    0
                } else if v.is_post() {
                    2
                } else {
                    1
                },
            ),
        }
    }
}

/// Release numbers compared with missing parts as zeros: `1.0` == `1.0.0`.
fn cmp_release(a: &[u64], b: &[u64]) -> Ordering {
    (0..a.len().max(b.len()))
        .map(|i| a.get(i).unwrap_or(&0).cmp(b.get(i).unwrap_or(&0)))
        .find(|o| o.is_ne())
        .unwrap_or(Ordering::Equal)
}

impl Ord for Version {
    fn cmp(&self, other: &Self) -> Ordering {
        match (&self.parsed, &other.parsed) {
            (Parsed::Semver(a), Parsed::Semver(b)) => a.cmp(b),
            (Parsed::Pep440(a), Parsed::Pep440(b)) => a.cmp(b),
            _ => {
                let ((ra, ka), (rb, kb)) = (self.cross_key(), other.cross_key());
                // Pre-releases of one release in two schemes (a rare `1.0.0-rc.1` against
                // `1.0.0rc1`): the lowercased text decides, so the order stays total.
                let lower = |v: &Version| v.raw.to_ascii_lowercase();
                cmp_release(&ra, &rb).then(ka.cmp(&kb)).then_with(|| {
                    if ka == 0 {
                        lower(self).cmp(&lower(other))
                    } else {
                        Ordering::Equal
                    }
                })
            }
        }
    }
}

impl PartialOrd for Version {
    fn partial_cmp(&self, other: &Self) -> Option<Ordering> {
        Some(self.cmp(other))
    }
}

impl PartialEq for Version {
    fn eq(&self, other: &Self) -> bool {
        self.cmp(other) == Ordering::Equal
    }
}

impl Eq for Version {}

impl fmt::Display for Version {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(&self.raw)
    }
}

/// Orders two version texts the way the kits do; what is not a version sorts first, by text.
/// For views that order versions from a report (e.g. an SDK's history).
pub fn compare(a: &str, b: &str) -> Ordering {
    match (Version::parse(a), Version::parse(b)) {
        (Ok(x), Ok(y)) => x.cmp(&y).then_with(|| a.cmp(b)),
        (Ok(_), Err(_)) => Ordering::Greater,
        (Err(_), Ok(_)) => Ordering::Less,
        (Err(_), Err(_)) => a.cmp(b),
    }
}

#[derive(Clone, Copy, Debug, PartialEq, Eq)]
enum Op {
    Eq,
    Lt,
    Le,
    Gt,
    Ge,
}

/// A version requirement: `*`, or alternatives separated by `||`, each a list of comparators
/// (`>=1.3.0, <1.12.0`, `=0.7.0`, `1.2.3`) that must all hold. Ordering is plain version
/// order, so `<2.0.0` admits `2.0.0a1`; write `<2.0.0a0` to keep 2.0 pre-releases out.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct VersionReq {
    text: String,
    any_of: Vec<Vec<(Op, Version)>>,
}

impl VersionReq {
    pub fn parse(text: &str) -> Result<VersionReq, VersionError> {
        let trimmed = text.trim();
        if trimmed.is_empty() {
            return Err(VersionError::EmptyRequirement);
        }
        let mut any_of = Vec::new();
        for alt in trimmed.split("||") {
            let alt = alt.trim();
            if alt == "*" {
                any_of.push(Vec::new());
                continue;
            }
            let mut all = Vec::new();
            for part in alt.split([',', ' ']).filter(|p| !p.trim().is_empty()) {
                let part = part.trim();
                let (op, rest) = [
                    (">=", Op::Ge),
                    ("<=", Op::Le),
                    ("==", Op::Eq),
                    (">", Op::Gt),
                    ("<", Op::Lt),
                    ("=", Op::Eq),
                ]
                .into_iter()
                .find_map(|(p, op)| part.strip_prefix(p).map(|r| (op, r)))
                .unwrap_or((Op::Eq, part));
                let v = Version::parse(rest).map_err(|e| VersionError::InRequirement {
                    requirement: trimmed.to_string(),
                    source: Box::new(e),
                })?;
                all.push((op, v));
            }
            if all.is_empty() {
                return Err(VersionError::EmptyAlternative(trimmed.to_string()));
            }
            any_of.push(all);
        }
        Ok(VersionReq {
            text: trimmed.to_string(),
            any_of,
        })
    }

    pub fn matches(&self, v: &Version) -> bool {
        self.any_of.iter().any(|all| {
            all.iter().all(|(op, bound)| match op {
                Op::Eq => v == bound,
                Op::Lt => v < bound,
                Op::Le => v <= bound,
                Op::Gt => v > bound,
                Op::Ge => v >= bound,
            })
        })
    }

    pub fn as_str(&self) -> &str {
        &self.text
    }
}

impl fmt::Display for VersionReq {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(&self.text)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn v(s: &str) -> Version {
        Version::parse(s).unwrap()
    }

    #[test]
    fn orders_numerically_not_textually() {
        assert!(v("1.10.0") > v("1.9.0"));
        assert!(v("1.32.2") > v("1.4.1"));
        assert_eq!(v("1.0"), v("1.0.0"));
        assert!(v("2.13.0.1") > v("2.13.0"));
        assert!(v("v1.8.0") == v("1.8.0"));
    }

    #[test]
    fn prereleases_sort_before_their_release_and_post_after() {
        assert!(v("1.23.0-beta.0") < v("1.23.0"));
        assert!(v("1.23.0-beta.0") > v("1.22.0"));
        assert!(v("2.0.0a1") < v("2.0.0a2"));
        assert!(v("2.0.0a3") < v("2.0.0b1"));
        assert!(v("2.0.0b2") < v("2.0.0rc1"));
        assert!(v("2.0.0-M2") < v("2.0.0-RC1"));
        assert!(v("1.8.0-pre.1") < v("1.8.0-pre.2"));
        assert!(v("2026.10.19.post1") > v("2026.10.19"));
        assert!(v("1.23.0-beta.0").is_prerelease());
        assert!(v("2.0.0rc1").is_prerelease());
        assert!(!v("1.23.0").is_prerelease());
        assert!(!v("2026.10.19.post1").is_prerelease());
    }

    #[test]
    fn rejects_what_is_not_a_version() {
        assert!(Version::parse("").is_err());
        assert!(Version::parse("latest").is_err());
        assert!(Version::parse("1.0 beta").is_err());
        assert!(Version::parse("v").is_err());
    }

    #[test]
    fn requirements_and_alternatives() {
        let r = VersionReq::parse(">=1.3.0, <1.11.4").unwrap();
        assert!(r.matches(&v("1.3.0")));
        assert!(r.matches(&v("1.11.3")));
        assert!(!r.matches(&v("1.11.4")));
        assert!(!r.matches(&v("1.2.0")));
        let r = VersionReq::parse("=0.7.0 || >=0.8.0 <0.13.0").unwrap();
        assert!(r.matches(&v("0.7.0")));
        assert!(r.matches(&v("0.12.1")));
        assert!(!r.matches(&v("0.7.1")));
        assert!(VersionReq::parse("*").unwrap().matches(&v("0.0.1")));
        assert!(VersionReq::parse("1.2.3").unwrap().matches(&v("1.2.3")));
    }

    #[test]
    fn prerelease_bounds_are_explicit() {
        // `<2.0.0` admits 2.0 pre-releases (plain ordering); `<2.0.0a0` keeps them out.
        assert!(VersionReq::parse("<2.0.0").unwrap().matches(&v("2.0.0b1")));
        assert!(!VersionReq::parse("<2.0.0a0")
            .unwrap()
            .matches(&v("2.0.0b1")));
        assert!(VersionReq::parse(">=2.0.0a0")
            .unwrap()
            .matches(&v("2.0.0a1")));
    }

    #[test]
    fn bad_requirements_say_why() {
        let e = |r: &str| VersionReq::parse(r).unwrap_err().to_string();
        assert!(e("").contains("empty"));
        assert!(e(">=1.x").contains("1.x"));
        assert!(e(">=1 ||").contains("empty"));
    }

    #[test]
    fn schemes_compare_with_each_other_and_texts_compare_totally() {
        // semver against PEP 440: the release numbers, then pre < release < post.
        assert!(v("1.23.0") < v("2.0.0a0"));
        assert!(v("2.0.0a1") > v("1.99.0-rc.1"));
        assert!(v("2.0.0") > v("2.0.0a1"));
        assert!(v("1.0.0+build.5") == v("1.0.0"));
        assert_eq!(compare("1.10.0", "1.9.0"), Ordering::Greater);
        assert_eq!(compare("next", "0.1.0"), Ordering::Less);
        assert_eq!(
            compare("1.0", "1.0.0"),
            Ordering::Less,
            "equal versions: by text"
        );
    }
}
