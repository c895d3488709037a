//! Time budgets: how long the harness waits at each point of a case, and how fast a server
//! must be to count as "prompt". Defaults, then per-server manifest values, then per-run
//! values from the command line: the most explicit setting wins.

use serde::{Deserialize, Serialize};

/// Budgets in milliseconds.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct Budgets {
    /// How soon after its trigger (stdin closed, client died) an exit counts as prompt.
    pub prompt_ms: u64,
    /// How long each step of the spec's close ladder waits before escalating.
    pub grace_ms: u64,
    /// How long a server is watched after its client died before it is called an orphan.
    pub observe_ms: u64,
    /// How long the server has to answer `initialize` and one request.
    pub handshake_ms: u64,
}

impl Default for Budgets {
    fn default() -> Self {
        Self {
            prompt_ms: 1000,
            grace_ms: 2000,
            observe_ms: 2000,
            handshake_ms: 10_000,
        }
    }
}

/// Partial budgets, as written in a manifest's `[budgets]` table or given on the command line.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct BudgetOverrides {
    pub prompt_ms: Option<u64>,
    pub grace_ms: Option<u64>,
    pub observe_ms: Option<u64>,
    pub handshake_ms: Option<u64>,
}

impl Budgets {
    pub fn with(self, o: &BudgetOverrides) -> Self {
        Self {
            prompt_ms: o.prompt_ms.unwrap_or(self.prompt_ms),
            grace_ms: o.grace_ms.unwrap_or(self.grace_ms),
            observe_ms: o.observe_ms.unwrap_or(self.observe_ms),
            handshake_ms: o.handshake_ms.unwrap_or(self.handshake_ms),
        }
    }
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
        let b = Budgets::default().with(&manifest).with(&run);
        assert_eq!(b.handshake_ms, 30_000);
        assert_eq!(b.grace_ms, 3000);
        assert_eq!(b.prompt_ms, 1000);
    }
}
