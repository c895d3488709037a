//! Advisory file locks (`flock`): the machine-wide CPU-token slots.

use std::fs::File;

pub use nix::fcntl::Flock;

/// Takes an exclusive `flock` on `file` without blocking; gives the file back when another
/// open file description holds it. The lock is released when the returned guard is dropped
/// (its file closed), and by the kernel when the process dies.
pub fn try_lock_exclusive(file: File) -> Result<Flock<File>, File> {
    Flock::lock(file, nix::fcntl::FlockArg::LockExclusiveNonblock).map_err(|(f, _busy)| f)
}

/// The effective user id, for per-user paths.
pub fn euid() -> u32 {
    nix::unistd::geteuid().as_raw()
}
