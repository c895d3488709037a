//! The server behind its launcher, read from `/proc`: each process's executable, arguments,
//! working directory and stdio, and where the server's packages are installed; and an
//! installed package's version and requirements, read from its metadata. What is a launcher
//! and which process is the server is decided in `model::identity`.

use std::fs;
use std::path::{Path, PathBuf};

use super::procfs::children;
use crate::model::identity::{behind_launchers, ProcView};
use crate::model::{Runtime, ServerProcess};

fn argv(pid: i32) -> Vec<String> {
    fs::read(format!("/proc/{pid}/cmdline"))
        .map(|b| {
            b.split(|c| *c == 0)
                .filter(|a| !a.is_empty())
                .map(|a| String::from_utf8_lossy(a).into_owned())
                .collect()
        })
        .unwrap_or_default()
}

fn link(path: String) -> Option<String> {
    fs::read_link(path)
        .ok()
        .map(|p| p.to_string_lossy().into_owned())
}

/// One process as the decisions see it; `None` once it is gone.
pub fn view(pid: i32) -> Option<ProcView> {
    Some(ProcView {
        pid,
        exe: link(format!("/proc/{pid}/exe"))?,
        argv: argv(pid),
    })
}

/// What a process's stdout (else stdin) is: a pipe or socket inode.
fn stdio_of(pid: i32) -> Option<String> {
    [1, 0]
        .into_iter()
        .filter_map(|fd| link(format!("/proc/{pid}/fd/{fd}")))
        .find(|t| t.starts_with("pipe:") || t.starts_with("socket:"))
}

/// The process that speaks MCP in the tree launched as `root`, behind any launchers: the
/// launchers' children that share root's stdio. `None` when root is gone or no server has
/// been started behind its launcher yet.
pub fn server_process(root: i32) -> Option<ServerProcess> {
    let stdio = stdio_of(root)?;
    let on_stdio = |pid: i32| -> Vec<ProcView> {
        children(pid)
            .into_iter()
            .filter(|c| stdio_of(c.pid).as_deref() == Some(stdio.as_str()))
            .filter_map(|c| view(c.pid))
            .collect()
    };
    let (server, launchers) = behind_launchers(&view(root)?, &on_stdio)?;
    let runtime = Runtime::of_exe(&server.exe);
    Some(ServerProcess {
        pid: server.pid,
        cmdline: server.argv.join(" "),
        runtime,
        launchers,
        package_dirs: package_dirs(&server, runtime),
    })
}

/// The launcher that started a process, by name and version, as it told the process's
/// environment: npm's `npm_config_user_agent` (`npm/11.6.2 node/v22.20.0 linux x64 …`) →
/// `npm/11.6.2`.
pub fn launcher_agent(pid: i32) -> Option<String> {
    let environ = fs::read(format!("/proc/{pid}/environ")).ok()?;
    let agent = environ
        .split(|c| *c == 0)
        .find_map(|e| e.strip_prefix(b"npm_config_user_agent="))?;
    let agent = String::from_utf8_lossy(agent);
    agent.split_whitespace().next().map(str::to_string)
}

/// Where a server's packages are installed, nearest first.
fn package_dirs(p: &ProcView, runtime: Option<Runtime>) -> Vec<PathBuf> {
    let cwd = fs::read_link(format!("/proc/{}/cwd", p.pid)).unwrap_or_default();
    let mut dirs: Vec<PathBuf> = Vec::new();
    let mut add = |d: PathBuf| {
        if d.is_dir() && !dirs.contains(&d) {
            dirs.push(d);
        }
    };
    match runtime {
        Some(Runtime::Node) => {
            // Its script (the first argument that is a file), through any `.bin` symlink.
            let script = p
                .argv
                .iter()
                .skip(1)
                .map(|a| cwd.join(a))
                .find(|f| f.is_file())
                .and_then(|f| fs::canonicalize(f).ok());
            let starts = script
                .iter()
                .filter_map(|s| s.parent().map(Path::to_path_buf));
            for start in starts.chain([cwd.clone()]) {
                for d in start.ancestors() {
                    add(d.join("node_modules"));
                }
            }
        }
        Some(Runtime::Python) => {
            for d in site_packages(p, &cwd) {
                add(d);
            }
        }
        _ => {}
    }
    dirs
}

/// A Python process's `site-packages`: those its loaded extension modules come from, its
/// interpreter's virtual environment (argv[0] is the venv's path; `exe` is the base
/// interpreter it links to), and `$VIRTUAL_ENV`.
fn site_packages(p: &ProcView, cwd: &Path) -> Vec<PathBuf> {
    let mut out: Vec<PathBuf> = Vec::new();
    let maps = fs::read_to_string(format!("/proc/{}/maps", p.pid)).unwrap_or_default();
    for line in maps.lines() {
        if let Some(i) = line.find("/site-packages/") {
            let path = line[..i + "/site-packages".len()].trim_start();
            if let Some(start) = path.find('/') {
                out.push(PathBuf::from(&path[start..]));
            }
        }
    }
    let environ = fs::read(format!("/proc/{}/environ", p.pid)).unwrap_or_default();
    let venv = environ
        .split(|c| *c == 0)
        .find_map(|e| e.strip_prefix(b"VIRTUAL_ENV="))
        .map(|v| PathBuf::from(String::from_utf8_lossy(v).into_owned()));
    let interpreter = p.argv.first().map(|a| cwd.join(a));
    let prefixes = interpreter
        .and_then(|i| i.parent()?.parent().map(Path::to_path_buf))
        .into_iter()
        .chain(venv);
    for prefix in prefixes.filter(|x| x.join("pyvenv.cfg").is_file()) {
        let lib = fs::read_dir(prefix.join("lib")).into_iter().flatten();
        out.extend(lib.filter_map(|e| Some(e.ok()?.path().join("site-packages"))));
    }
    out
}

/// A package installed in a `node_modules` or `site-packages` directory: its version, the
/// packages it requires, and the metadata file they were read from.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Installed {
    pub version: String,
    pub requires: Vec<String>,
    pub metadata: PathBuf,
}

/// `name` in a `node_modules` directory, from its `package.json`.
pub fn npm_package(dir: &Path, name: &str) -> Option<Installed> {
    let metadata = dir.join(name).join("package.json");
    let json: serde_json::Value = serde_json::from_slice(&fs::read(&metadata).ok()?).ok()?;
    let requires = json
        .get("dependencies")
        .and_then(|d| d.as_object())
        .map(|d| d.keys().cloned().collect())
        .unwrap_or_default();
    Some(Installed {
        version: json.get("version")?.as_str()?.to_string(),
        requires,
        metadata,
    })
}

/// `name` in a `site-packages` directory, from its `*.dist-info/METADATA`.
pub fn pypi_package(dir: &Path, name: &str) -> Option<Installed> {
    let norm = |s: &str| s.to_lowercase().replace(['-', '.'], "_");
    let want = norm(name);
    let info = fs::read_dir(dir).ok()?.filter_map(Result::ok).find(|e| {
        let f = e.file_name().to_string_lossy().into_owned();
        f.strip_suffix(".dist-info")
            .and_then(|s| s.rsplit_once('-'))
            .is_some_and(|(n, _)| norm(n) == want)
    })?;
    let metadata = info.path().join("METADATA");
    let text = fs::read_to_string(&metadata).ok()?;
    let field = |key: &'static str| {
        text.lines()
            .take_while(|l| !l.is_empty())
            .filter_map(move |l| l.strip_prefix(key))
            .map(str::trim)
    };
    let requires = field("Requires-Dist:")
        // `mcp>=1.0; extra == "x"`: only what it always requires.
        .filter(|r| !r.contains("extra =="))
        .map(|r| {
            let end = r.find(|c: char| !(c.is_alphanumeric() || "-_.".contains(c)));
            norm(&r[..end.unwrap_or(r.len())])
        })
        .collect();
    Some(Installed {
        version: field("Version:").next()?.to_string(),
        requires,
        metadata,
    })
}

#[cfg(test)]
mod tests {
    use super::*;

    /// This test process is no launcher: it is its own server.
    #[test]
    fn a_process_without_launcher_is_itself() {
        let me = crate::os::procfs::own_pid();
        let v = view(me).expect("this process");
        assert!(v.exe.contains('/'));
        if let Some(p) = server_process(me) {
            assert_eq!(p.pid, me);
            assert!(p.launchers.is_empty());
        }
    }

    #[test]
    fn package_metadata_is_read_from_both_layouts() {
        let dir = tempfile::tempdir().unwrap();
        let npm = dir.path().join("@scope/pkg");
        fs::create_dir_all(&npm).unwrap();
        fs::write(
            npm.join("package.json"),
            r#"{"name":"@scope/pkg","version":"1.2.3","dependencies":{"dep":"^1"}}"#,
        )
        .unwrap();
        let got = npm_package(dir.path(), "@scope/pkg").unwrap();
        assert_eq!(
            (got.version.as_str(), got.requires),
            ("1.2.3", vec!["dep".to_string()])
        );
        let info = dir.path().join("fast_mcp-2.1.0.dist-info");
        fs::create_dir_all(&info).unwrap();
        fs::write(
            info.join("METADATA"),
            "Metadata-Version: 2.1\nName: fast-mcp\nVersion: 2.1.0\nRequires-Dist: mcp>=1.0\nRequires-Dist: rich; extra == \"x\"\n\nbody\n",
        )
        .unwrap();
        let got = pypi_package(dir.path(), "Fast-MCP").unwrap();
        assert_eq!(
            (got.version.as_str(), got.requires),
            ("2.1.0", vec!["mcp".to_string()])
        );
        assert!(pypi_package(dir.path(), "mcp").is_none());
    }
}
