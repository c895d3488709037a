//! Exit codes: documented in README ("Exit codes"); scripts and CI depend on them.

/// No unexpected failure.
pub const SUCCESS: u8 = 0;
/// A conformance failure: a missed rule (or, with a baseline, an unexpected or stale entry;
/// with `--diff-against`, a regression against the saved report), or `diff` found something
/// broken.
pub const CONFORMANCE_FAILURE: u8 = 1;
/// A usage error (bad arguments, malformed manifest, unknown id, a server command or setup
/// that cannot be carried out: "cannot launch …: no such file"), or a harness error for a
/// case when nothing else failed. Neither is ever scored against a server. Also (before a
/// conformance failure) a run with machine-bound cases, whose verdicts the machine's load
/// decided, not the server (named on stderr: re-run them on a quieter machine), unless
/// `--accept-machine-bound`.
pub const USAGE_OR_HARNESS: u8 = 2;
/// Interrupted by Ctrl-C (SIGINT); every setup, server and descendant was stopped first.
/// SIGTERM and SIGHUP give `128 + n` likewise (143, 129): `os::interrupt::exit_code`.
pub const INTERRUPTED: u8 = 130;

/// The supervisor aborted its case (harness gone, deadline, signal). Internal.
pub const SUPERVISOR_ABORTED: i32 = 3;
/// The supervisor could not set itself up (subreaper, temporary directory). Internal.
pub const SUPERVISOR_SETUP: i32 = 70;
