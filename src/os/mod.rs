//! The only module that touches the operating system: pids, pidfds, signals, `/proc`,
//! scheduling classes. Linux only; every `unsafe` block says why it is sound.
//!
//! nix is the OS layer; rustix is kept for `pidfd_open` and `pidfd_send_signal`, which nix
//! does not wrap, libc for `sched_setscheduler`/`setpriority`, which neither wraps, and for ptrace
//! (nix's types cannot carry real-time signals).
//! `docs/ARCHITECTURE.md` says what another platform would put behind the same functions.

pub mod clock;
pub mod command;
pub mod containment;
pub mod diagnose;
pub mod fdio;
pub mod hostproc;
pub mod identify;
pub mod interrupt;
pub mod lock;
pub mod pidfd;
pub mod procfs;
pub mod recorder;
pub mod sched;
pub mod signals;
pub mod spawn;
pub mod terminal;
pub mod tracer;
pub mod tree;
pub mod watch;

pub use clock::{mono_ns, ms_between};
pub use pidfd::Pidfd;
pub use procfs::ProcInfo;
