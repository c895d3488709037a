//! Version numbers and version requirements across the ecosystems the kits cover (npm
//! semver, PEP 440, Maven, Go module and Cargo versions), with one ordering for all of them.
//!
//! The kits only need to order an SDK's own releases and test them against ranges, so one
//! lenient scheme serves every registry: a release part of dot-separated numbers, then an
//! optional tag. A tag makes a pre-release (`1.23.0-beta.0`, `2.0.0a1`, `2.0.0-M2`,
//! `1.8.0-pre.1`, `1.2.0rc1`), which sorts before its release; a `post` tag (PEP 440
//! `.post1`) sorts after it. Build metadata (`+...`) is ignored.

use std::cmp::Ordering;
use std::fmt;

/// One parsed version. Compares by meaning, not by text: `1.0` == `1.0.0`, `1.10` > `1.9`.
#[derive(Clone, Debug)]
pub struct Version {
    raw: String,
    release: Vec<u64>,
    tag: Vec<Chunk>,
    post: bool,
}

/// A piece of a pre-release tag: numbers compare numerically and before words (as in semver).
#[derive(Clone, Debug, PartialEq, Eq, PartialOrd, Ord)]
enum Chunk {
    Num(u64),
    Word(String),
}

impl Version {
    /// Parses `1.2.3`, `v1.8.0-pre.1`, `2.0.0a1`, `1.0`, `2.13.0.1`, `2.0.0-RC1`.
    pub fn parse(text: &str) -> Result<Version, String> {
        let raw = text.trim();
        let body = raw.strip_prefix('v').unwrap_or(raw);
        let body = body.split('+').next().unwrap_or_default();
        if body.is_empty() {
            return Err(format!("{raw:?} is not a version"));
        }
        let mut release = Vec::new();
        let mut rest = body;
        loop {
            let digits = rest.len() - rest.trim_start_matches(|c: char| c.is_ascii_digit()).len();
            if digits == 0 {
                break;
            }
            let n = rest[..digits]
                .parse::<u64>()
                .map_err(|_| format!("{raw:?}: number too large"))?;
            release.push(n);
            rest = &rest[digits..];
            // A dot followed by a digit continues the release part; anything else starts the tag.
            match rest.strip_prefix('.') {
                Some(r) if r.starts_with(|c: char| c.is_ascii_digit()) => rest = r,
                _ => break,
            }
        }
        if release.is_empty() {
            return Err(format!(
                "{raw:?} is not a version (it must start with a number)"
            ));
        }
        let tag_text = rest.trim_start_matches(['-', '.', '_']);
        if tag_text
            .split(['.', '-'])
            .any(|t| t.eq_ignore_ascii_case("x"))
        {
            return Err(format!(
                "{raw:?}: wildcards are not versions (write a range such as \">=1.0.0, <2.0.0\")"
            ));
        }
        if !tag_text
            .chars()
            .all(|c| c.is_ascii_alphanumeric() || c == '.' || c == '-' || c == '_')
        {
            return Err(format!("{raw:?} is not a version"));
        }
        let tag = chunks(tag_text);
        let post = matches!(tag.first(), Some(Chunk::Word(w)) if w == "post");
        Ok(Version {
            raw: raw.to_string(),
            release,
            tag,
            post,
        })
    }

    /// The text as written (a leading `v` kept).
    pub fn as_str(&self) -> &str {
        &self.raw
    }

    /// A pre-release (alpha, beta, rc, milestone, `-pre.N`): left out of sweeps.
    pub fn is_prerelease(&self) -> bool {
        !self.tag.is_empty() && !self.post
    }

    /// The release numbers with trailing zeros removed, so that `1.0` and `1.0.0` compare equal.
    fn release_key(&self) -> &[u64] {
        let mut n = self.release.len();
        while n > 1 && self.release[n - 1] == 0 {
            n -= 1;
        }
        &self.release[..n]
    }
}

/// Splits a tag into runs of digits and runs of letters: `beta.0` → [beta, 0], `rc1` → [rc, 1].
fn chunks(tag: &str) -> Vec<Chunk> {
    let mut out = Vec::new();
    let mut cur = String::new();
    let flush = |cur: &mut String, out: &mut Vec<Chunk>| {
        if cur.is_empty() {
            return;
        }
        let c = match cur.parse::<u64>() {
            Ok(n) if cur.chars().all(|c| c.is_ascii_digit()) => Chunk::Num(n),
            _ => Chunk::Word(cur.to_ascii_lowercase()),
        };
        out.push(c);
        cur.clear();
    };
    for ch in tag.chars() {
        if !ch.is_ascii_alphanumeric() {
            flush(&mut cur, &mut out);
            continue;
        }
        let switch = cur
            .chars()
            .last()
            .is_some_and(|last| last.is_ascii_digit() != ch.is_ascii_digit());
        if switch {
            flush(&mut cur, &mut out);
        }
        cur.push(ch);
    }
    flush(&mut cur, &mut out);
    out
}

impl Ord for Version {
    fn cmp(&self, other: &Self) -> Ordering {
        let (a, b) = (self.release_key(), other.release_key());
        let len = a.len().max(b.len());
        for i in 0..len {
            let x = a.get(i).copied().unwrap_or(0);
            let y = b.get(i).copied().unwrap_or(0);
            match x.cmp(&y) {
                Ordering::Equal => {}
                o => return o,
            }
        }
        // Same release numbers: pre-release < release < post-release.
        let rank = |v: &Version| {
            if v.post {
                2
            } else if v.tag.is_empty() {
                1
            } else {
                0
            }
        };
        match rank(self).cmp(&rank(other)) {
            Ordering::Equal => self.tag.cmp(&other.tag),
            o => o,
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
    pub fn parse(text: &str) -> Result<VersionReq, String> {
        let trimmed = text.trim();
        if trimmed.is_empty() {
            return Err("empty version requirement (use \"*\" for every version)".into());
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
                let (op, rest) = if let Some(r) = part.strip_prefix(">=") {
                    (Op::Ge, r)
                } else if let Some(r) = part.strip_prefix("<=") {
                    (Op::Le, r)
                } else if let Some(r) = part.strip_prefix("==") {
                    (Op::Eq, r)
                } else if let Some(r) = part.strip_prefix('>') {
                    (Op::Gt, r)
                } else if let Some(r) = part.strip_prefix('<') {
                    (Op::Lt, r)
                } else if let Some(r) = part.strip_prefix('=') {
                    (Op::Eq, r)
                } else {
                    (Op::Eq, part)
                };
                let v =
                    Version::parse(rest).map_err(|e| format!("in requirement {trimmed:?}: {e}"))?;
                all.push((op, v));
            }
            if all.is_empty() {
                return Err(format!("{trimmed:?}: an alternative of `||` is empty"));
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
        assert!(VersionReq::parse("").unwrap_err().contains("empty"));
        assert!(VersionReq::parse(">=1.x").unwrap_err().contains("1.x"));
        assert!(VersionReq::parse(">=1 ||").unwrap_err().contains("empty"));
    }
}
