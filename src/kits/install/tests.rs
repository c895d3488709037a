//! Tests of instantiating: stamps, locks, retries, local sources, on a kit whose installs are shell scripts.

use super::*;
use crate::kits::spec;

/// A kit whose "install" is a shell script: exercises stamps, locks and local copies
/// without any registry.
fn demo_kit(root: &Path) -> Kit {
    let dir = root.join("demo");
    fs::create_dir_all(dir.join("t")).unwrap();
    fs::write(
        dir.join("t/server.sh"),
        "#!/bin/sh\n# {{line}} {{label}} {{variant}}\nexec sleep 600\n",
    )
    .unwrap();
    fs::write(
        dir.join("t/deps.in"),
        "sdk=={{spec}}\n# before {{before}}\n",
    )
    .unwrap();
    let text = r#"
id = "demo"
name = "Demo SDK"
ecosystem = "npm"
package = "demo"
requires = ["sh"]

[files]
"server.sh" = "t/server.sh"
"deps.in" = "t/deps.in"

[release]
vars = { spec = "{{version}}" }
lock = [["sh", "-c", "cp deps.in deps.lock; echo locked >> ../count-lock"]]
lockfile = "deps.lock"
install = [["sh", "-c", "echo installed >> ../count-install; touch installed"]]
outputs = ["installed"]

[local]
exclude = ["junk"]
build = [["sh", "-c", "cat VERSION > {{out}}/demo-$(cat VERSION).pkg"]]
artifact = "demo-*.pkg"
version = ["cat", "VERSION"]
date = ["sh", "-c", "cat DATE 2>/dev/null || true"]
vars = { spec = "file:{{artifact}}" }

[[variant]]
name = "one"
versions = ">=1.0.0, <2.0.0"

[[untestable]]
versions = "<1.0.0"
reason = "0.x is too old"

[shapes.plain]
description = "sleeps"
command = "sh"
args = ["{{dir}}/server.sh"]
env = { WHO = "{{name}}" }

[shapes.slow-tool]
command = "./server.sh"
inflight = { method = "tools/call", params = { name = "slow" } }
"#;
    fs::write(dir.join("kit.toml"), text).unwrap();
    spec::load_file(&dir.join("kit.toml")).unwrap()
}

fn rel(v: &str) -> Source {
    Source::Release(Release {
        version: v.into(),
        date: Some("2025-01-01T00:00:00Z".into()),
        yanked: false,
    })
}

fn count(p: &Path) -> usize {
    fs::read_to_string(p)
        .map(|s| s.lines().count())
        .unwrap_or(0)
}

#[test]
fn stamps_hash_as_before_so_installed_directories_stay_fresh() {
    assert_eq!(
        Fnv::new().add(b"kit").add(b"demo").hex(),
        "a9f8c30bc16da280"
    );
}

#[test]
fn second_instantiation_installs_nothing() {
    let root = tempfile::tempdir().unwrap();
    let kit = demo_kit(root.path());
    let cache = root.path().join("cache");
    let first = prepare(&kit, &rel("1.2.0"), &cache).unwrap();
    assert!(first.installed);
    let second = prepare(&kit, &rel("1.2.0"), &cache).unwrap();
    assert!(!second.installed);
    let base = cache.join("kits/demo");
    assert_eq!(count(&base.join("count-install")), 1);
    assert_eq!(count(&base.join("count-lock")), 1);
    let i = &second.instances[0];
    assert_eq!(i.name, "demo-1.2.0-plain");
    assert_eq!(i.sdk_version, "1.2.0");
    assert_eq!(
        i.args,
        vec![base.join("1.2.0/server.sh").display().to_string()]
    );
    assert_eq!(i.env["WHO"], "demo-1.2.0-plain");
    assert!(Path::new(&i.command).is_absolute());
    let slow = &second.instances[1];
    assert_eq!(
        slow.command,
        base.join("1.2.0/server.sh").display().to_string()
    );
    assert_eq!(slow.inflight.as_ref().unwrap().0, "tools/call");
    let text = fs::read_to_string(base.join("1.2.0/server.sh")).unwrap();
    assert!(text.contains("# demo 1.2.0 one"), "{text}");
    // The lock was resolved with the cutoff: the release date plus the margin.
    assert_eq!(
        fs::read_to_string(base.join("1.2.0/deps.lock")).unwrap(),
        "sdk==1.2.0\n# before 2025-01-01T01:00:00Z\n"
    );
}

#[test]
fn instances_render_as_manifests() {
    let root = tempfile::tempdir().unwrap();
    let mut kit = demo_kit(root.path());
    kit.handshake_ms = Some(30_000);
    let p = prepare(&kit, &rel("1.2.0"), &root.path().join("cache")).unwrap();
    let slow = p.instances.iter().find(|i| i.shape == "slow-tool").unwrap();
    let text = slow.manifest_toml();
    let v: toml::Value = toml::from_str(&text).unwrap();
    assert_eq!(v["name"].as_str(), Some("demo-1.2.0-slow-tool"));
    assert_eq!(v["about"]["sdk_version"].as_str(), Some("1.2.0"));
    assert_eq!(v["inflight"]["method"].as_str(), Some("tools/call"));
    assert_eq!(v["inflight"]["params"]["name"].as_str(), Some("slow"));
    assert_eq!(v["budgets"]["handshake_ms"].as_integer(), Some(30_000));
    assert!(Path::new(v["cwd"].as_str().unwrap()).is_absolute());
    let plain = p.instances.iter().find(|i| i.shape == "plain").unwrap();
    let v: toml::Value = toml::from_str(&plain.manifest_toml()).unwrap();
    assert!(v.get("inflight").is_none());
    assert_eq!(v["env"]["WHO"].as_str(), Some("demo-1.2.0-plain"));
}

#[test]
fn a_lost_output_or_an_edited_lockfile_reinstalls_without_relocking() {
    let root = tempfile::tempdir().unwrap();
    let kit = demo_kit(root.path());
    let cache = root.path().join("cache");
    prepare(&kit, &rel("1.2.0"), &cache).unwrap();
    let dir = cache.join("kits/demo/1.2.0");
    fs::remove_file(dir.join("installed")).unwrap();
    assert!(prepare(&kit, &rel("1.2.0"), &cache).unwrap().installed);
    fs::write(dir.join("deps.lock"), "sdk==1.2.0 # pinned by hand\n").unwrap();
    assert!(prepare(&kit, &rel("1.2.0"), &cache).unwrap().installed);
    let base = cache.join("kits/demo");
    assert_eq!(count(&base.join("count-install")), 3);
    assert_eq!(count(&base.join("count-lock")), 1);
}

#[test]
fn an_edited_template_outside_the_inputs_is_written_but_nothing_reinstalls() {
    let root = tempfile::tempdir().unwrap();
    let mut kit = demo_kit(root.path());
    kit.release.lock_inputs = vec!["deps.in".into()];
    kit.release.install_inputs = vec!["deps.in".into()];
    let cache = root.path().join("cache");
    assert!(prepare(&kit, &rel("1.2.0"), &cache).unwrap().installed);
    fs::write(kit.dir.join("t/server.sh"), "#!/bin/sh\n# edited\n").unwrap();
    assert!(!prepare(&kit, &rel("1.2.0"), &cache).unwrap().installed);
    let dir = cache.join("kits/demo/1.2.0");
    assert_eq!(
        fs::read_to_string(dir.join("server.sh")).unwrap(),
        "#!/bin/sh\n# edited\n"
    );
    fs::write(kit.dir.join("t/deps.in"), "sdk=={{spec}} extra\n").unwrap();
    assert!(prepare(&kit, &rel("1.2.0"), &cache).unwrap().installed);
    let base = cache.join("kits/demo");
    assert_eq!(count(&base.join("count-install")), 2);
    assert_eq!(count(&base.join("count-lock")), 2);
}

#[test]
fn concurrent_instantiations_install_once() {
    let root = tempfile::tempdir().unwrap();
    let kit = demo_kit(root.path());
    let cache = root.path().join("cache");
    let threads: Vec<_> = (0..4)
        .map(|_| {
            let (kit, cache) = (kit.clone(), cache.clone());
            std::thread::spawn(move || prepare(&kit, &rel("1.3.0"), &cache).unwrap().installed)
        })
        .collect();
    let installed: usize = threads
        .into_iter()
        .map(|t| usize::from(t.join().unwrap()))
        .sum();
    assert_eq!(installed, 1);
    assert_eq!(count(&cache.join("kits/demo/count-install")), 1);
}

#[test]
fn an_exclusive_kit_installs_one_version_at_a_time() {
    let root = tempfile::tempdir().unwrap();
    let mut kit = demo_kit(root.path());
    kit.exclusive = Some("shared-repo".into());
    kit.release.install = vec![vec![
        "sh".into(),
        "-c".into(),
        "echo start >> ../trace; sleep 0.3; echo end >> ../trace; touch installed".into(),
    ]];
    let cache = root.path().join("cache");
    let threads: Vec<_> = ["1.2.0", "1.3.0", "1.4.0"]
        .into_iter()
        .map(|v| {
            let (kit, cache) = (kit.clone(), cache.clone());
            std::thread::spawn(move || prepare(&kit, &rel(v), &cache).unwrap())
        })
        .collect();
    for t in threads {
        t.join().unwrap();
    }
    let trace = fs::read_to_string(cache.join("kits/demo/trace")).unwrap();
    assert_eq!(trace, "start\nend\n".repeat(3), "installs overlapped");
}

#[test]
fn a_failing_lock_is_retried_with_later_cutoffs() {
    let root = tempfile::tempdir().unwrap();
    let mut kit = demo_kit(root.path());
    // Resolves only once the cutoff admits something published on 2 January.
    kit.release.lock = vec![vec![
        "sh".into(),
        "-c".into(),
        "test '{{before}}' \\> 2025-01-02 && cp deps.in deps.lock".into(),
    ]];
    let e = prepare(&kit, &rel("1.2.0"), &root.path().join("a")).unwrap_err();
    assert!(e.to_string().contains("test '2025-01-01T01:00:00Z'"), "{e}");
    kit.lock_retry_minutes = vec![60, 1440];
    let p = prepare(&kit, &rel("1.2.0"), &root.path().join("b")).unwrap();
    let log = fs::read_to_string(&p.log).unwrap();
    assert!(
        log.contains("retrying with the cutoff 2025-01-01T02:00:00Z"),
        "{log}"
    );
    assert!(
        log.contains("retrying with the cutoff 2025-01-02T01:00:00Z"),
        "{log}"
    );
    assert!(p.dir.join("deps.lock").exists());
}

#[test]
fn unsupported_versions_say_why() {
    let root = tempfile::tempdir().unwrap();
    let kit = demo_kit(root.path());
    let e = prepare(&kit, &rel("0.9.0"), root.path())
        .unwrap_err()
        .to_string();
    assert!(e.contains("0.x is too old"), "{e}");
    let e = prepare(&kit, &rel("2.0.0"), root.path())
        .unwrap_err()
        .to_string();
    assert!(
        e.contains("no template supports") && e.contains(">=1.0.0, <2.0.0 (one)"),
        "{e}"
    );
}

#[test]
fn failing_steps_report_their_output() {
    let root = tempfile::tempdir().unwrap();
    let mut kit = demo_kit(root.path());
    kit.release.install = vec![vec!["sh".into(), "-c".into(), "echo boom; exit 3".into()]];
    let e = prepare(&kit, &rel("1.2.0"), &root.path().join("c"))
        .unwrap_err()
        .to_string();
    assert!(e.contains("boom") && e.contains("exit status: 3"), "{e}");
    kit.requires = vec!["no-such-program-xyz".into()];
    let e = prepare(&kit, &rel("1.2.0"), &root.path().join("c"))
        .unwrap_err()
        .to_string();
    assert!(e.contains("`no-such-program-xyz`"), "{e}");
}

#[test]
fn local_checkouts_are_copied_built_and_named_by_what_the_user_says() {
    let root = tempfile::tempdir().unwrap();
    let kit = demo_kit(root.path());
    let cache = root.path().join("cache");
    let checkout = root.path().join("My Checkout");
    fs::create_dir_all(checkout.join("junk")).unwrap();
    fs::write(checkout.join("VERSION"), "1.5.0\n").unwrap();
    fs::write(checkout.join("DATE"), "2025-06-01T12:00:00+02:00\n").unwrap();
    fs::write(checkout.join("junk/big"), "x").unwrap();
    let before = content_hash(&checkout, &[]).unwrap();
    let local = |name: Option<&str>| Source::Local {
        path: checkout.clone(),
        name: name.map(String::from),
    };
    let p = prepare(&kit, &local(None), &cache).unwrap();
    assert!(p.installed);
    let i = &p.instances[0];
    // No git checkout: named by its directory, made fit for a server name.
    assert_eq!(i.name, "demo-local-my-checkout-plain");
    assert!(
        i.sdk_version.starts_with("1.5.0+local."),
        "{}",
        i.sdk_version
    );
    // The directory is named by content, whatever the build is called.
    let hash = i.sdk_version.rsplit_once("local.").unwrap().1;
    assert_eq!(p.dir, cache.join("kits/demo").join(format!("local-{hash}")));
    let lock = fs::read_to_string(p.dir.join("deps.lock")).unwrap();
    assert!(
        lock.starts_with("sdk==file:") && lock.contains("demo-1.5.0.pkg"),
        "{lock}"
    );
    // The checkout itself is untouched; excluded entries are not copied.
    assert_eq!(content_hash(&checkout, &[]).unwrap(), before);
    // Same content: nothing rebuilt, under any name. Changed content: a new directory.
    let named = prepare(&kit, &local(Some("eof-fix")), &cache).unwrap();
    assert!(!named.installed);
    assert_eq!(named.instances[0].name, "demo-local-eof-fix-plain");
    fs::write(checkout.join("VERSION"), "1.6.0\n").unwrap();
    let q = prepare(&kit, &local(None), &cache).unwrap();
    assert_ne!(q.dir, p.dir);
    assert!(q.instances[0].sdk_version.starts_with("1.6.0+local."));
}

#[test]
fn a_git_checkout_is_named_by_git_describe() {
    let root = tempfile::tempdir().unwrap();
    let repo = root.path().join("sdk");
    fs::create_dir_all(&repo).unwrap();
    let git = |args: &[&str]| {
        let ok = std::process::Command::new("git")
            .args(["-c", "user.name=t", "-c", "user.email=t@t", "-C"])
            .arg(&repo)
            .args(args)
            .output()
            .unwrap()
            .status
            .success();
        assert!(ok, "git {args:?}");
    };
    git(&["init", "-q"]);
    fs::write(repo.join("a"), "1").unwrap();
    git(&["add", "a"]);
    git(&["commit", "-qm", "one"]);
    git(&["tag", "v1.2.0"]);
    assert_eq!(default_name(&repo, true).as_deref(), Some("v1.2.0"));
    fs::write(repo.join("a"), "2").unwrap();
    assert_eq!(default_name(&repo, true).as_deref(), Some("v1.2.0-dirty"));
    let tgz = root.path().join("modelcontextprotocol-sdk-1.24.0.tgz");
    assert_eq!(
        default_name(&tgz, false).as_deref(),
        Some("modelcontextprotocol-sdk-1.24.0")
    );
}

#[test]
fn local_artifacts_are_used_as_they_are() {
    let root = tempfile::tempdir().unwrap();
    let mut kit = demo_kit(root.path());
    kit.local.as_mut().unwrap().version = None;
    let art = root.path().join("demo-9.pkg");
    fs::write(&art, "artifact").unwrap();
    let p = prepare(
        &kit,
        &Source::Local {
            path: art,
            name: None,
        },
        &root.path().join("c"),
    )
    .unwrap();
    assert!(p.instances[0].sdk_version.starts_with("local."));
    let e = prepare(
        &kit,
        &Source::Local {
            path: root.path().join("nope"),
            name: None,
        },
        &root.path().join("c"),
    )
    .unwrap_err()
    .to_string();
    assert!(e.contains("cannot be read"), "{e}");
}

/// Every variant of every bundled kit renders all its templates for a release: a placeholder
/// that one variant uses and another does not define fails here, not when that release is
/// first instantiated.
#[test]
fn every_bundled_variant_renders_its_templates() {
    let kits = crate::kits::load_kits(&Path::new(env!("CARGO_MANIFEST_DIR")).join("kits"))
        .unwrap_or_else(|e| panic!("{e}"));
    let cache = tempfile::tempdir().unwrap();
    for kit in &kits {
        for variant in &kit.variants {
            let at = format!("{} {}", kit.id, variant.name);
            let mut vars = kit_vars(kit, cache.path()).unwrap_or_else(|e| panic!("{at}: {e}"));
            vars.insert("date".into(), String::new());
            vars.insert("before".into(), "2026-01-01T00:00:00Z".into());
            let place = Place {
                label: "1.0.0".into(),
                name: "1.0.0".into(),
                version: Some("1.0.0".into()),
                sdk_version: "1.0.0".into(),
                date: None,
                dir: cache.path().join(&kit.id),
            };
            place_vars(&mut vars, &place, variant);
            for defs in [&kit.release.vars, &variant.vars] {
                template::extend(&mut vars, defs).unwrap_or_else(|e| panic!("{at}: {e}"));
            }
            let files = render_files(kit, variant, &vars).unwrap_or_else(|e| panic!("{at}: {e}"));
            assert!(!files.is_empty(), "{at}: no files");
        }
    }
}
