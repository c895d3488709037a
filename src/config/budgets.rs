//! How budgets are resolved: defaults, then a manifest's `[budgets]`, then the command line.
//! The most explicit setting wins.

use serde::{Deserialize, Serialize};

use crate::model::Budgets;

/// Partial budgets, as written in a manifest's `[budgets]` table or given on the command line.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct BudgetOverrides {
    pub prompt_ms: Option<u64>,
    pub grace_ms: Option<u64>,
    pub observe_ms: Option<u64>,
    pub handshake_ms: Option<u64>,
}

impl BudgetOverrides {
    /// `base` with every value given here replacing its own.
    pub fn apply(&self, base: Budgets) -> Budgets {
        Budgets {
            prompt_ms: self.prompt_ms.unwrap_or(base.prompt_ms),
            grace_ms: self.grace_ms.unwrap_or(base.grace_ms),
            observe_ms: self.observe_ms.unwrap_or(base.observe_ms),
            handshake_ms: self.handshake_ms.unwrap_or(base.handshake_ms),
        }
    }
}

/// The budgets of one case: defaults < manifest < run.
pub fn resolve(manifest: &BudgetOverrides, run: &BudgetOverrides) -> Budgets {
    run.apply(manifest.apply(Budgets::default()))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn explicit_values_win_in_order() {
        let manifest = BudgetOverrides {
            handshake_ms: Some(30_000),
            grace_ms: Some(500),
            ..Default::default()
        };
        let run = BudgetOverrides {
            grace_ms: Some(3000),
            ..Default::default()
        };
        let b = resolve(&manifest, &run);
        assert_eq!(b.handshake_ms, 30_000);
        assert_eq!(b.grace_ms, 3000);
        assert_eq!(b.prompt_ms, 1000);
    }
}
