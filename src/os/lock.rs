//! Advisory file locks (`flock`), the one kind the tool takes: install-once caches (fixture
//! setups, kits, census installs, hosts), the machine-wide CPU-token slots and the runs
//! sharing them. flock locks belong to the open file description, so threads of one process
//! exclude each other as processes do, and the lock goes when the process dies.

use std::fs::File;

pub use nix::fcntl::Flock;

/// Takes an exclusive `flock` on `file` without blocking; gives the file back when another
/// open file description holds it. The lock is released when the returned guard is dropped
/// (its file closed), and by the kernel when the process dies.
pub fn try_lock_exclusive(file: File) -> Result<Flock<File>, File> {
    Flock::lock(file, nix::fcntl::FlockArg::LockExclusiveNonblock).map_err(|(f, _busy)| f)
}

/// Takes an exclusive `flock` on `file`, waiting in the kernel's queue while another open
/// file description holds it; gives the file back if it cannot be locked.
pub fn lock_exclusive(mut file: File) -> Result<Flock<File>, File> {
    loop {
        match Flock::lock(file, nix::fcntl::FlockArg::LockExclusive) {
            Ok(held) => return Ok(held),
            Err((f, nix::errno::Errno::EINTR)) => file = f,
            Err((f, _)) => return Err(f),
        }
    }
}

/// An exclusive lock on a file, held until dropped.
pub type FileLock = Flock<File>;

/// Waits for the exclusive lock on `path`, creating the file (not its directory) if needed.
pub fn lock_path(path: &std::path::Path) -> std::io::Result<FileLock> {
    let file = std::fs::OpenOptions::new()
        .create(true)
        .truncate(false)
        .write(true)
        .open(path)?;
    lock_exclusive(file).map_err(|_| std::io::Error::last_os_error())
}

/// Gives an exclusive `flock` back, keeping the file open (to take it again later).
pub fn unlock(held: Flock<File>) -> Option<File> {
    held.unlock().ok()
}

/// Is a process with this pid alive (a zombie counts)?
pub fn pid_alive(pid: i32) -> bool {
    std::path::Path::new(&format!("/proc/{pid}")).exists()
}

/// The effective user id, for per-user paths.
pub fn euid() -> u32 {
    nix::unistd::geteuid().as_raw()
}
