//! The data the suite passes from step to step, pure and serialisable: identifiers, the
//! vocabulary of endings, what a case observed, verdicts, and the report.

pub mod budgets;
pub mod case_error;
pub mod census;
pub mod identity;
pub mod ids;
pub mod launcher_left;
pub mod leftover;
pub mod observation;
pub mod official;
pub mod profile;
pub mod report;
pub mod scenario;
pub mod signal;
pub mod verdict;
pub mod what_if;

pub use budgets::Budgets;
pub use case_error::{CaseError, ErrorKind};
pub use census::{CensusRun, History, Judged, Pass, ServerHistory, Verdict};
pub use identity::{LauncherLeft, ProcView, ServerProcess};
pub use ids::{BudgetName, Ending, ProfileId, Revision, RuleId, Runtime, ScenarioId, UnknownId};
pub use launcher_left::launcher_line;
pub use leftover::{group_leftovers, Leftover, LeftoverGroup, MAX_LEFTOVERS};
pub use observation::{
    CaseTiming, Decisive, Diagnostics, HandshakeInfo, HandshakeMode, HostSignal, InflightOutcome,
    MachineBound, Observation, ProcState, RealHostRun, Sender, StdoutRecord, StepRecord, Violation,
    ViolationKind, MACHINE_BOUND_RETRIES,
};
pub use profile::{MeasuredRef, ProfileBasis, ProfileInfo, ProfileKind, SourceRef, Spread};
pub use report::{
    Containment, Fix, FixCode, Host, JudgedCase, Latency, Membership, NotTestable,
    NotTestableReason, PackageInfo, Quote, Repeat, Report, RuleInfo, RunOutcome, ServerInfo,
    SuiteSource, Summary, Tool, Untested,
};
pub use scenario::{
    hosts_doing, stage_after, Action, Driver, GroupKind, HostsDoing, Ladder, Plumbing,
    PlumbingOverride, Scenario, Stage, StdioKind, Step, Target, UntilIdle, Via, SLICE_MS,
};
pub use signal::{ExitStatus, SignalName};
pub use verdict::{Basis, Check, Level, Outcome, Owner, SpecReference, Status};
pub use what_if::{EndingPair, SdkCopy, Untouched, WhatIf, WhatIfServer};
