//! What a run learnt of each server beyond its manifest: the name and version it gave in the
//! handshake, the launchers in front of it, the SDK and release found where its packages are
//! installed, and that SDK's fix (the kits' `[[hint]]`s) in the hint of each case it
//! outlived.

use std::collections::BTreeMap;

use crate::kits::{self, Kit};
use crate::model::{JudgedCase, ServerInfo};
use crate::rules::explain;

/// The kits of the suite, for detection and hints; none when they cannot be read (the
/// report then keeps the runtime's hints).
pub fn suite_kits() -> Vec<Kit> {
    super::locate::kits_dir()
        .ok()
        .and_then(|d| kits::load_kits(&d).ok())
        .unwrap_or_default()
}

/// Fills in what each server's cases found about it, and gives the hints of its SDK.
pub fn enrich(
    kits: &[Kit],
    servers: &mut BTreeMap<String, ServerInfo>,
    results: &mut [JudgedCase],
) {
    for (name, info) in servers.iter_mut() {
        let mine = || results.iter().filter(|r| &r.server == name);
        if let Some(h) =
            mine().find_map(|r| r.handshake.as_ref().filter(|h| h.server_name.is_some()))
        {
            info.server_name = h.server_name.clone();
            info.server_version = h.server_version.clone();
        }
        let process = mine().find_map(|r| r.server_process.as_ref());
        if let Some(p) = process {
            info.launchers = p.launchers.clone();
        }
        if info.sdk.is_none() {
            if let Some(d) = process.and_then(|p| kits::detect(kits, &p.package_dirs)) {
                info.sdk = Some(d.line);
                info.sdk_version = Some(d.version);
                info.sdk_from = Some(d.metadata);
            }
        }
        let (Some(sdk), Some(version)) = (&info.sdk, &info.sdk_version) else {
            continue;
        };
        for r in results.iter_mut().filter(|r| &r.server == name) {
            let ending = r.scenario.ending().to_string();
            let Some(d) = r.observation.diagnostics.as_mut() else {
                continue;
            };
            let texts: Vec<&str> = kits::hints(kits, sdk, version, &ending)
                .iter()
                .map(|h| h.text.as_str())
                .collect();
            // A state that explains everything (stopped, traced) stays the hint.
            if !texts.is_empty() && d.state.and_then(explain::state_hint).is_none() {
                d.hint = texts.join(" ");
            }
        }
    }
}
