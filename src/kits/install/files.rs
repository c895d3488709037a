//! The files of an instance directory: templates rendered and written where they changed,
//! and the tree walks, copies and hashes of local checkouts.

use super::*;

/// The rendered template files of a variant: relative path → contents.
pub(super) fn render_files(
    kit: &Kit,
    variant: &Variant,
    vars: &BTreeMap<String, String>,
) -> Result<Vec<(PathBuf, Vec<u8>)>, SourceNotTestable> {
    let mut out = Vec::new();
    for (dst, src) in template::files_of(kit, variant) {
        let src_path = kit.dir.join(&src);
        let mut sources = Vec::new();
        walk(&src_path, Path::new(""), &[], &mut sources).map_err(io(&src_path))?;
        for rel in sources {
            let from = join_rel(&src_path, &rel);
            let bytes = fs::read(&from).map_err(io(&from))?;
            let bytes = match String::from_utf8(bytes) {
                Ok(text) => template::render(&text, vars, None)
                    .map_err(|source| SourceNotTestable::Template {
                        line: kit.id.clone(),
                        path: from.clone(),
                        context: String::new(),
                        source,
                    })?
                    .into_bytes(),
                // Binary files are copied as they are.
                Err(e) => e.into_bytes(),
            };
            // A directory mapped to "." lands at the top of the instance directory.
            let dst = if dst == "." {
                PathBuf::new()
            } else {
                PathBuf::from(&dst)
            };
            out.push((join_rel(&dst, &rel), bytes));
        }
    }
    Ok(out)
}

/// `base/rel`, where an empty `rel` is `base` itself (`Path::join("")` would add a
/// trailing slash, which makes a file path fail with ENOTDIR).
pub(super) fn join_rel(base: &Path, rel: &Path) -> PathBuf {
    if rel.as_os_str().is_empty() {
        base.to_path_buf()
    } else {
        base.join(rel)
    }
}

/// Files under `root` (or `root` itself when it is a file, as an empty relative path),
/// sorted, skipping entries named in `exclude` at any depth.
pub(super) fn walk(
    root: &Path,
    rel: &Path,
    exclude: &[String],
    out: &mut Vec<PathBuf>,
) -> std::io::Result<()> {
    let here = join_rel(root, rel);
    let meta = fs::symlink_metadata(&here)?;
    if !meta.is_dir() {
        out.push(rel.to_path_buf());
        return Ok(());
    }
    let mut names: Vec<_> = fs::read_dir(&here)?
        .filter_map(|e| e.ok().map(|e| e.file_name()))
        .filter(|n| !exclude.iter().any(|x| n.to_str() == Some(x.as_str())))
        .collect();
    names.sort();
    for n in names {
        walk(root, &rel.join(n), exclude, out)?;
    }
    Ok(())
}

/// The templates are written every time (only where they changed): an edited shape
/// reaches an installed directory even when nothing needs reinstalling.
pub(super) fn write_templates(
    dir: &Path,
    files: &[(PathBuf, Vec<u8>)],
) -> Result<(), SourceNotTestable> {
    for (rel, bytes) in files {
        let p = dir.join(rel);
        if fs::read(&p).is_ok_and(|old| &old == bytes) {
            continue;
        }
        if let Some(parent) = p.parent() {
            fs::create_dir_all(parent).map_err(io(parent))?;
        }
        fs::write(&p, bytes).map_err(io(&p))?;
    }
    Ok(())
}

// ---- local sources ------------------------------------------------------------------------

/// Content hash of a checkout (file names and contents, excluded names skipped) or of an
/// artifact file.
pub(super) fn content_hash(path: &Path, exclude: &[String]) -> std::io::Result<String> {
    let mut files = Vec::new();
    walk(path, Path::new(""), exclude, &mut files)?;
    let mut h = Fnv::new();
    for rel in files {
        let p = join_rel(path, &rel);
        let meta = fs::symlink_metadata(&p)?;
        h = h.add(rel.as_os_str().as_encoded_bytes());
        if meta.file_type().is_symlink() {
            h = h.add(fs::read_link(&p)?.as_os_str().as_encoded_bytes());
        } else {
            h = h.add(&fs::read(&p)?);
        }
    }
    Ok(h.hex())
}

/// Copies a checkout, skipping excluded names; symlinks are copied as links.
pub(super) fn copy_tree(from: &Path, to: &Path, exclude: &[String]) -> std::io::Result<()> {
    let mut files = Vec::new();
    walk(from, Path::new(""), exclude, &mut files)?;
    for rel in files {
        let (src, dst) = (join_rel(from, &rel), join_rel(to, &rel));
        if let Some(p) = dst.parent() {
            fs::create_dir_all(p)?;
        }
        let meta = fs::symlink_metadata(&src)?;
        if meta.file_type().is_symlink() {
            crate::os::command::symlink(&fs::read_link(&src)?, &dst)?;
        } else {
            fs::copy(&src, &dst)?;
        }
    }
    Ok(())
}

/// Makes `to` a copy of `from` (excluded names skipped) touching only what differs: files
/// whose contents are equal keep their times, so the build tools of a checkout built there
/// before (tsc, npm, cargo) see only the edit; files gone from `from` are removed, except
/// under excluded names (`node_modules`, `dist`: the previous build's products, reused).
pub(super) fn sync_tree(from: &Path, to: &Path, exclude: &[String]) -> std::io::Result<usize> {
    let mut files = Vec::new();
    walk(from, Path::new(""), exclude, &mut files)?;
    let mut changed = 0;
    for rel in &files {
        let (src, dst) = (join_rel(from, rel), join_rel(to, rel));
        let meta = fs::symlink_metadata(&src)?;
        if meta.file_type().is_symlink() {
            let target = fs::read_link(&src)?;
            if fs::read_link(&dst).is_ok_and(|t| t == target) {
                continue;
            }
            let _ = fs::remove_file(&dst);
            if let Some(p) = dst.parent() {
                fs::create_dir_all(p)?;
            }
            crate::os::command::symlink(&target, &dst)?;
        } else {
            if fs::symlink_metadata(&dst).is_ok_and(|d| d.is_file() && d.len() == meta.len())
                && fs::read(&src)? == fs::read(&dst)?
            {
                continue;
            }
            if let Some(p) = dst.parent() {
                fs::create_dir_all(p)?;
            }
            let _ = fs::remove_file(&dst);
            fs::copy(&src, &dst)?;
        }
        changed += 1;
    }
    let mut present = Vec::new();
    if to.exists() {
        walk(to, Path::new(""), exclude, &mut present)?;
    }
    let keep: std::collections::BTreeSet<&PathBuf> = files.iter().collect();
    for rel in present.iter().filter(|r| !keep.contains(r)) {
        fs::remove_file(join_rel(to, rel))?;
        changed += 1;
    }
    Ok(changed)
}

/// The one file in `dir` matching `pattern` (a name with at most one `*`); the newest when
/// several do.
pub(super) fn find_artifact(dir: &Path, pattern: &str) -> Option<PathBuf> {
    let (pre, post) = pattern.split_once('*').unwrap_or((pattern, ""));
    let exact = !pattern.contains('*');
    fs::read_dir(dir)
        .ok()?
        .filter_map(|e| e.ok())
        .filter(|e| {
            let n = e.file_name();
            let n = n.to_string_lossy();
            if exact {
                n == pattern
            } else {
                n.len() >= pre.len() + post.len() && n.starts_with(pre) && n.ends_with(post)
            }
        })
        .max_by_key(|e| e.metadata().and_then(|m| m.modified()).ok())
        .map(|e| e.path())
}
