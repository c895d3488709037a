//! The one clock every process of a case shares.

use nix::time::{clock_gettime, ClockId};

/// Nanoseconds on `CLOCK_MONOTONIC`: a timestamp taken in the client process compares with
/// one taken in the supervisor.
pub fn mono_ns() -> u64 {
    let t = clock_gettime(ClockId::CLOCK_MONOTONIC).expect("CLOCK_MONOTONIC is always readable");
    t.tv_sec() as u64 * 1_000_000_000 + t.tv_nsec() as u64
}

/// Milliseconds between two [`mono_ns`] readings, with microsecond resolution.
pub fn ms_between(from_ns: u64, to_ns: u64) -> f64 {
    let us = to_ns.saturating_sub(from_ns) / 1_000;
    us as f64 / 1_000.0
}

/// CPU time (user + system, milliseconds) of this process and of every descendant it has
/// reaped: for a case's supervisor, a subreaper that reaps its whole tree, the case's CPU.
pub fn cpu_ms_with_reaped() -> f64 {
    let read = |who| {
        // SAFETY: getrusage writes one plain-data struct that we own, and nothing else.
        let mut u: libc::rusage = unsafe { std::mem::zeroed() };
        if unsafe { libc::getrusage(who, &mut u) } != 0 {
            return 0.0;
        }
        let ms = |t: libc::timeval| t.tv_sec as f64 * 1e3 + t.tv_usec as f64 / 1e3;
        ms(u.ru_utime) + ms(u.ru_stime)
    };
    read(libc::RUSAGE_SELF) + read(libc::RUSAGE_CHILDREN)
}
