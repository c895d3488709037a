//! What the census site says beyond one run's cases: which pass judged a server (the triage
//! set only, or every scenario), whether its verdict was carried forward from an earlier run,
//! and since when each badge has held.

use crate::model::{Judged, Pass};

/// After a server's verdict on the leaderboard: ` · triage only` when the rest did not run,
/// ` · carried from <date>` when an earlier run judged it.
pub fn note(j: &Judged) -> String {
    let triage = match j.pass {
        Pass::Triage => " · triage only",
        Pass::Full => "",
    };
    match j.carried {
        true => format!("{triage} · carried from {}", j.date),
        false => triage.to_string(),
    }
}

/// What a server's page says of how the census judged it.
pub fn judged_line(j: &Judged) -> String {
    let pass = match j.pass {
        Pass::Triage => "the triage set only (it found nothing, so the rest did not run)",
        Pass::Full => "every scenario of the census",
    };
    match j.carried {
        true => format!(
            "Judged on {} by {pass}; carried forward: its version has not changed since.",
            j.date
        ),
        false => format!("Judged on {} by {pass}.", j.date),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_pass_and_a_carried_verdict_are_said_as_they_are() {
        let j = |pass, carried| Judged {
            pass,
            date: "2026-11-29".into(),
            carried,
        };
        assert_eq!(note(&j(Pass::Full, false)), "");
        assert_eq!(note(&j(Pass::Triage, false)), " · triage only");
        assert_eq!(
            note(&j(Pass::Triage, true)),
            " · triage only · carried from 2026-11-29"
        );
        assert!(judged_line(&j(Pass::Full, true)).contains("carried forward"));
        assert!(judged_line(&j(Pass::Triage, false)).contains("triage set only"));
    }
}
