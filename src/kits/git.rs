//! A local checkout's history, for bisecting down to the commit: the tags of two releases,
//! the commits between them, and a clone of its own where each commit is checked out (the
//! user's checkout is only read: `git clone --shared` borrows its objects).

use std::path::{Path, PathBuf};

use crate::os::command::{run_captured, Stderr};

/// A git command that failed, with what it said.
#[derive(Debug, thiserror::Error)]
#[error("`git {args}` in {}: {said}", dir.display())]
pub struct GitError {
    pub args: String,
    pub dir: PathBuf,
    pub said: String,
}

fn git(dir: &Path, args: &[&str]) -> Result<String, GitError> {
    let argv: Vec<String> = args.iter().map(|a| a.to_string()).collect();
    let fail = |said: String| GitError {
        args: args.join(" "),
        dir: dir.to_path_buf(),
        said,
    };
    let out = run_captured(
        "git".as_ref(),
        &argv,
        dir,
        [("GIT_OPTIONAL_LOCKS", "0")],
        Stderr::Separate,
    )
    .map_err(|e| fail(e.to_string()))?;
    if !out.status.success() {
        return Err(fail(
            String::from_utf8_lossy(&out.stderr).trim().to_string(),
        ));
    }
    Ok(String::from_utf8_lossy(&out.stdout).trim().to_string())
}

/// The tag of release `version` in a checkout: `v1.6.0`, `1.6.0`, or a tag ending in either
/// after a package prefix (`rmcp-v3.6.0`); the shortest such tag when several match.
pub fn tag_of(checkout: &Path, version: &str) -> Result<Option<String>, GitError> {
    let tags = git(checkout, &["tag", "--list"])?;
    let mut found: Vec<&str> = tags
        .lines()
        .filter(|t| {
            t.strip_suffix(version).is_some_and(|head| {
                head.is_empty() || head == "v" || head.ends_with("-v") || head.ends_with('@')
            })
        })
        .collect();
    found.sort_by_key(|t| t.len());
    Ok(found.first().map(|t| t.to_string()))
}

/// The commits after `from` up to `to` on the first-parent line, oldest first, each with its
/// subject: (full hash, subject).
pub fn commits_between(
    checkout: &Path,
    from: &str,
    to: &str,
) -> Result<Vec<(String, String)>, GitError> {
    let range = format!("{from}..{to}");
    let text = git(
        checkout,
        &[
            "log",
            "--first-parent",
            "--reverse",
            "--format=%H %s",
            &range,
        ],
    )?;
    Ok(text
        .lines()
        .filter_map(|l| l.split_once(' '))
        .map(|(h, s)| (h.to_string(), s.to_string()))
        .collect())
}

/// A clone of `origin` at `dir` (made once, borrowing its objects), checked out at `commit`.
pub fn checkout_at(origin: &Path, dir: &Path, commit: &str) -> Result<(), GitError> {
    if !dir.join(".git").exists() {
        let parent = dir.parent().unwrap_or(dir);
        std::fs::create_dir_all(parent).map_err(|e| GitError {
            args: "clone".into(),
            dir: parent.to_path_buf(),
            said: e.to_string(),
        })?;
        let (o, d) = (origin.display().to_string(), dir.display().to_string());
        git(
            parent,
            &["clone", "--quiet", "--shared", "--no-checkout", &o, &d],
        )?;
    }
    git(dir, &["checkout", "--quiet", "--force", "--detach", commit])?;
    git(dir, &["clean", "--quiet", "-fdx"])?;
    Ok(())
}
