//! Bounded I/O on the pipes to a server: writes that never block the harness for good.

use std::io;
use std::os::fd::{AsFd, BorrowedFd};
use std::time::Duration;

use nix::fcntl::{fcntl, FcntlArg, OFlag};
use nix::poll::{poll, PollFd, PollFlags, PollTimeout};

/// Makes writes to `fd` return `WouldBlock` instead of blocking (the flag is on our end of
/// the pipe only; the server's end is unaffected).
pub fn set_nonblocking(fd: BorrowedFd) -> io::Result<()> {
    let flags = OFlag::from_bits_truncate(fcntl(fd, FcntlArg::F_GETFL)?);
    fcntl(fd, FcntlArg::F_SETFL(flags | OFlag::O_NONBLOCK))?;
    Ok(())
}

/// Waits up to `timeout` for `fd` to accept a write.
pub fn wait_writable(fd: impl AsFd, timeout: Duration) -> io::Result<bool> {
    let mut fds = [PollFd::new(fd.as_fd(), PollFlags::POLLOUT)];
    let t = PollTimeout::try_from(timeout).unwrap_or(PollTimeout::MAX);
    match poll(&mut fds, t) {
        Ok(n) => Ok(n > 0),
        Err(nix::errno::Errno::EINTR) => Ok(false),
        Err(e) => Err(e.into()),
    }
}

/// A reader that ends (reads 0 bytes, as at end-of-file) as soon as its stop pipe is
/// written to or closed, so that its owner can stop reading a server's stdout at a moment
/// of its choosing (a host that closes its pipes) and the stream is then closed.
pub struct Stoppable {
    inner: std::fs::File,
    stop: std::os::fd::OwnedFd,
}

impl Stoppable {
    /// The reader, and the stop pipe's write end: drop it to stop the reader.
    pub fn new(inner: std::fs::File) -> io::Result<(Self, std::os::fd::OwnedFd)> {
        let (r, w) = nix::unistd::pipe2(OFlag::O_CLOEXEC)?;
        Ok((Self { inner, stop: r }, w))
    }
}

impl io::Read for Stoppable {
    fn read(&mut self, buf: &mut [u8]) -> io::Result<usize> {
        loop {
            let mut fds = [
                PollFd::new(self.inner.as_fd(), PollFlags::POLLIN),
                PollFd::new(self.stop.as_fd(), PollFlags::POLLIN),
            ];
            match poll(&mut fds, PollTimeout::NONE) {
                Ok(_) => {}
                Err(nix::errno::Errno::EINTR) => continue,
                Err(e) => return Err(e.into()),
            }
            if fds[1].revents().is_some_and(|r| !r.is_empty()) {
                return Ok(0);
            }
            if fds[0].revents().is_some_and(|r| !r.is_empty()) {
                return self.inner.read(buf);
            }
        }
    }
}

/// Reads a pipe to its end, keeping only the last `keep` bytes and the count of all of them:
/// a server that floods its stderr costs neither memory nor disk.
pub fn tail_pipe(mut r: impl io::Read, keep: usize, out: &std::sync::Mutex<Tail>) {
    let mut buf = vec![0u8; 64 * 1024];
    loop {
        let n = match r.read(&mut buf) {
            Ok(0) => return,
            Ok(n) => n,
            Err(e) if e.kind() == io::ErrorKind::Interrupted => continue,
            Err(_) => return,
        };
        let mut t = out.lock().unwrap_or_else(|p| p.into_inner());
        t.bytes += n as u64;
        let chunk = &buf[n.saturating_sub(keep)..n];
        t.last.extend(chunk.iter().copied());
        let excess = t.last.len().saturating_sub(keep);
        t.last.drain(..excess);
    }
}

/// The end of a stream, and how long it was.
#[derive(Debug, Default)]
pub struct Tail {
    pub bytes: u64,
    pub last: std::collections::VecDeque<u8>,
}

impl Tail {
    pub fn text(&self) -> String {
        let (a, b) = self.last.as_slices();
        String::from_utf8_lossy(&[a, b].concat()).into_owned()
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_flood_keeps_only_its_tail() {
        let data: Vec<u8> = (0..3_000_000u32).map(|i| b'a' + (i % 26) as u8).collect();
        let tail = std::sync::Mutex::new(Tail::default());
        tail_pipe(&data[..], 4096, &tail);
        let t = tail.lock().unwrap();
        assert_eq!(t.bytes, 3_000_000);
        assert_eq!(t.last.len(), 4096);
        assert_eq!(t.text().as_bytes(), &data[data.len() - 4096..]);
    }
}
