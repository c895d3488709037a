//! Time budgets: how long the harness waits at each point of a case, and how fast a server
//! must be to count as "prompt". How they are resolved (defaults < manifest < command line)
//! is configuration: see `config::budgets`.

use serde::{Deserialize, Serialize};

use super::ids::BudgetName;

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

impl Budgets {
    pub fn get(&self, name: BudgetName) -> u64 {
        match name {
            BudgetName::PromptMs => self.prompt_ms,
            BudgetName::GraceMs => self.grace_ms,
            BudgetName::ObserveMs => self.observe_ms,
            BudgetName::HandshakeMs => self.handshake_ms,
        }
    }
}
