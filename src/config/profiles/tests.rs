//! `profiles`'s tests.
use super::*;

#[test]
fn bundled_profiles_parse_and_name_the_line_of_an_error() {
    let p = Profiles::bundled();
    assert!(p.iter().count() >= 7);
    let e = Profiles::parse(
        "[[profile]]\nid = \"x\"\nclient = \"c\"\nsteps = [{ do = \"wave\", wait_ms = 1 }]\n",
    )
    .unwrap_err()
    .to_string();
    assert!(e.contains("profiles.toml:4") && e.contains("wave"), "{e}");
}

#[test]
fn a_race_names_two_adjacent_steps_in_order() {
    let head = "[[profile]]\nid = \"spec\"\nclient = \"c\"\nbasis = \"observed\"\n\
                observed = [\"x\"]\nsteps = [{ do = \"sigterm\", wait_ms = 0 }, \
                { do = \"close-stdin\", wait_ms = 5 }, { do = \"sigkill\", wait_ms = 5 }]\n";
    let ok = format!(
        "{head}races = [{{ between = [\"sigterm\", \"close-stdin\"], gap_ms = [0, 100] }}]\n"
    );
    let p = Profiles::parse(&ok).unwrap();
    assert_eq!(
        p.spec().unwrap().races,
        [ProfileRace {
            between: [ProfileAction::Sigterm, ProfileAction::CloseStdin],
            gap_ms: [0, 100]
        }]
    );
    for (races, want) in [
        (
            "[\"close-stdin\", \"sigterm\"], gap_ms = [0, 1]",
            "not two adjacent",
        ),
        (
            "[\"sigterm\", \"sigkill\"], gap_ms = [0, 1]",
            "not two adjacent",
        ),
        (
            "[\"sigterm\", \"close-stdin\"], gap_ms = [9, 1]",
            "not [min, max]",
        ),
    ] {
        let text = format!("{head}races = [{{ between = {races} }}]\n");
        let e = Profiles::parse(&text).unwrap_err().to_string();
        assert!(e.contains(want), "{races}: {e}");
    }
    let java = p_java();
    assert_eq!(
        java.races.len(),
        1,
        "the Java SDK's destroy/stdin race is declared"
    );
}

fn p_java() -> Profile {
    Profiles::bundled()
        .get(&ProfileId::try_from("java".to_string()).unwrap())
        .unwrap()
        .clone()
}

/// `(action, target, wait_ms)` of one step, for pinning.
type Pin = (ProfileAction, Target, u64);

fn steps_of(p: &Profiles, id: &str) -> Vec<Pin> {
    let prof = p
        .get(&ProfileId::try_from(id.to_string()).unwrap())
        .unwrap();
    let steps = match &prof.alias_of {
        Some(a) => &p.get(a).unwrap().steps,
        None => &prof.steps,
    };
    steps.iter().map(|s| (s.action, s.to, s.wait_ms)).collect()
}

/// The ladder of every host profile read from a host's source or observed, pinned to the
/// constants its source gives (see each profile's `source`/`observed` in profiles.toml): a
/// change to such a host's behaviour must change this table with the citation. A measured
/// profile is held to its stored measurement instead (`conformance/measurements/`, by the
/// replay test of `tests/conformance/hosts/replay.rs`).
mod pinned {
    use super::*;
    use ProfileAction::*;
    use Target::{Process, Tree};

    pub(super) const LADDERS: &[(&str, &[Pin])] = &[
        // mcpStdioStateHandler.ts GRACE_TIME_MS = 10_000; terminateProcess.sh kill -9 tree.
        (
            "vscode",
            &[
                (CloseStdin, Process, 10_000),
                (Sigterm, Process, 10_000),
                (Sigkill, Tree, 2_000),
            ],
        ),
        // MainThreadMcp.dispose(): no $stopMcp; the extension host's exit closes the pipes.
        ("vscode-quit", &[(ClosePipes, Process, 5_000)]),
        // util::process::Child::kill: kill_descendant_tree + killpg SIGKILL, synchronously in Drop.
        ("zed", &[(Sigkill, Tree, 0), (CloseStdin, Process, 2_000)]),
        // smol Child, kill_on_drop: SIGKILL to the direct child.
        (
            "zed-legacy",
            &[(Sigkill, Process, 0), (CloseStdin, Process, 2_000)],
        ),
        // rmcp 0.16 graceful_shutdown: close, MAX_WAIT_ON_DROP_SECS = 3, child.kill().
        (
            "goose",
            &[(CloseStdin, Process, 3_000), (Sigkill, Process, 2_000)],
        ),
        // The runtime drops rmcp's close; the exit closes the pipes, PR_SET_PDEATHSIG SIGTERM.
        (
            "goose-quit",
            &[(ClosePipes, Process, 0), (Sigterm, Process, 5_000)],
        ),
        // typescript-sdk 1.23.0 close(): abortController.abort() = SIGTERM, nothing else.
        ("ts-legacy", &[(Sigterm, Process, 5_000)]),
        // MCPConnection.ts: the SDK 1.29.0 ladder (stdin end, 2 s, SIGTERM, 2 s, SIGKILL).
        (
            "continue",
            &[
                (CloseStdin, Process, 2_000),
                (Sigterm, Process, 2_000),
                (Sigkill, Process, 2_000),
            ],
        ),
        // posit-dev/mcptools #19: closes the pipes, sends nothing.
        ("claude-desktop", &[(ClosePipes, Process, 5_000)]),
    ];
}

#[test]
fn host_ladders_are_pinned_to_their_sources() {
    let p = Profiles::bundled();
    let pinned = pinned::LADDERS;
    for (id, steps) in pinned {
        assert_eq!(&steps_of(&p, id), steps, "{id}");
    }
    for h in p.hosts() {
        let is_pinned = pinned.iter().any(|(id, _)| *id == h.id.as_str());
        let measured = h.basis == ProfileBasis::Measured;
        assert!(
            is_pinned != measured,
            "{}: {}",
            h.id,
            if measured {
                "measured: its stored measurement holds it; take it out of pinned::LADDERS"
            } else {
                "pin its ladder to its source in pinned::LADDERS (src/config/profiles/tests.rs)"
            }
        );
        match h.basis {
            ProfileBasis::Source => assert!(h.source.is_some(), "{}: no source", h.id),
            ProfileBasis::Measured => {
                let m = h.measured.as_ref().expect("measured");
                assert!(!m.version.is_empty() && !m.triggers.is_empty(), "{}", h.id);
            }
            _ => assert!(!h.observed.is_empty(), "{}: no observation cited", h.id),
        }
    }
}

/// How each host launches its servers, and which walk away, as their sources say.
#[test]
fn host_plumbing_is_pinned_to_their_sources() {
    let p = Profiles::bundled();
    let plumbing = |id: &str| {
        p.get(&ProfileId::try_from(id.to_string()).unwrap())
            .unwrap()
            .plumbing
    };
    assert_eq!(
        plumbing("vscode").stdio,
        crate::model::StdioKind::Socketpair
    );
    assert_eq!(plumbing("codex").group, crate::model::GroupKind::Own);
    assert_eq!(plumbing("zed").group, crate::model::GroupKind::Session);
    assert_eq!(plumbing("zed").via, crate::model::Via::Shell);
    assert_eq!(plumbing("goose").group, crate::model::GroupKind::Own);
    assert!(
        !p.get(&ProfileId::try_from("claude-code".to_string()).unwrap())
            .unwrap()
            .abandons,
        "measured: Claude Code 2.1.332 never walks away from a server it quits"
    );
    for walks_away in [
        "ts-legacy",
        "codex",
        "claude-code-sigkill",
        "claude-desktop",
    ] {
        assert!(
            p.get(&ProfileId::try_from(walks_away.to_string()).unwrap())
                .unwrap()
                .abandons,
            "{walks_away}"
        );
    }
}

/// One step as the book's table says it.
fn step_words(s: &ProfileStep) -> String {
    let act = match s.action {
        ProfileAction::Nothing => "nothing",
        ProfileAction::CloseStdin => "stdin closed",
        ProfileAction::ClosePipes => "pipes closed",
        ProfileAction::Sigterm => "SIGTERM",
        ProfileAction::Sigint => "SIGINT",
        ProfileAction::Sigkill => "SIGKILL",
        ProfileAction::Sighup => "SIGHUP",
    };
    let to = match s.to {
        Target::Process => "",
        Target::Group => " to the group",
        Target::Tree => " to the tree",
        Target::Children => " to the children",
    };
    format!("{act}{to}")
}

/// The book's table of measured host profiles: each profile's release, quit paths, steps
/// with their waits (the last, the harness's window or cap, left out), plumbing and walking
/// away, from profiles.toml.
fn measured_hosts_table(p: &Profiles) -> String {
    let mut out = String::from(
        "| profile | measured | quit paths | what the server gets | plumbing |\n|---|---|---|---|---|\n",
    );
    for h in p.hosts().filter(|h| h.basis == ProfileBasis::Measured) {
        let Some(m) = &h.measured else { continue };
        let steps = if let Some(of) = &h.alias_of {
            format!("as `close:{of}`")
        } else {
            let n = h.steps.len();
            let mut words: Vec<String> = Vec::new();
            for (i, s) in h.steps.iter().enumerate() {
                words.push(step_words(s));
                if i + 1 < n && s.wait_ms > 0 {
                    words.push(format!("{} ms", s.wait_ms));
                }
            }
            let mut w = words.join(", ");
            if h.abandons {
                w.push_str("; walks away");
            }
            w
        };
        let mut paths = m.triggers.join(", ");
        if m.daemon_up {
            paths.push_str(" (its daemon up)");
        }
        let plumbing = serde_json::to_value(h.plumbing).unwrap_or_default();
        let mut plumb = format!(
            "{}, {} group",
            plumbing["stdio"].as_str().unwrap_or("?"),
            plumbing["group"].as_str().unwrap_or("?")
        );
        if let Some(d) = &m.daemon {
            plumb.push_str(&format!("; parent: `{d}`"));
        }
        out.push_str(&format!(
            "| `close:{}` | {} {} ({}{}) | {paths} | {steps} | {plumb} |\n",
            h.id,
            m.package,
            m.version,
            m.date,
            if m.reproduces { "" } else { ", spread" },
        ));
    }
    out
}

#[test]
fn the_books_measured_hosts_table_is_the_catalogues() {
    crate::test_support::generated_block(
        "docs/book/src/hosts-measured.md",
        "measured-hosts",
        &measured_hosts_table(&Profiles::bundled()),
    );
}
