//! Bounded I/O on the pipes to a server: writes that never block the harness for good.

use std::io;
use std::os::fd::{AsFd, AsRawFd, BorrowedFd, OwnedFd};
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
///
/// Its owner can also ask it to catch up ([`Flusher::flush`]): the answer comes once every
/// byte that could be read at that moment has been returned and taken in, however long the
/// reading thread waited for a CPU, so that what the server wrote before it exited is never
/// missed on a busy machine.
pub struct Stoppable {
    inner: std::sync::Arc<std::fs::File>,
    stop: OwnedFd,
    flush: OwnedFd,
    acks: std::sync::mpsc::Sender<()>,
    flushing: bool,
}

/// Asks a [`Stoppable`] to catch up with its stream.
pub struct Flusher {
    request: OwnedFd,
    acks: std::sync::mpsc::Receiver<()>,
    /// The stream itself, only ever asked how much it holds; weak, so that it closes when
    /// the reader ends (a server writing after that must see a closed stream).
    peek: std::sync::Weak<std::fs::File>,
}

nix::ioctl_read_bad!(fionread, nix::libc::FIONREAD, nix::libc::c_int);

impl Flusher {
    /// Bytes written to the stream and not yet read (pipes and sockets alike).
    pub fn unread(&self) -> usize {
        let Some(file) = self.peek.upgrade() else {
            return 0;
        };
        let mut n: nix::libc::c_int = 0;
        // SAFETY: FIONREAD writes one int through the pointer, which points at `n`.
        match unsafe { fionread(file.as_raw_fd(), &mut n) } {
            Ok(_) => usize::try_from(n).unwrap_or(0),
            Err(_) => 0,
        }
    }

    /// Returns once the reader has taken in everything readable now, or has ended. `cap` is
    /// only a guard against a reader that can never run again; it is not a budget.
    pub fn flush(&self, cap: Duration) {
        while self.acks.try_recv().is_ok() {}
        if nix::unistd::write(&self.request, &[1]).is_err() {
            return;
        }
        let _ = self.acks.recv_timeout(cap);
    }
}

impl Stoppable {
    /// The reader, the stop pipe's write end (drop it to stop the reader), and its flusher.
    pub fn new(inner: std::fs::File) -> io::Result<(Self, OwnedFd, Flusher)> {
        let (stop, stop_w) = nix::unistd::pipe2(OFlag::O_CLOEXEC)?;
        let (flush, request) = nix::unistd::pipe2(OFlag::O_CLOEXEC)?;
        let (tx, acks) = std::sync::mpsc::channel();
        let inner = std::sync::Arc::new(inner);
        let peek = std::sync::Arc::downgrade(&inner);
        let reader = Self {
            inner,
            stop,
            flush,
            acks: tx,
            flushing: false,
        };
        Ok((
            reader,
            stop_w,
            Flusher {
                request,
                acks,
                peek,
            },
        ))
    }
}

fn ready(fd: &PollFd) -> bool {
    fd.revents().is_some_and(|r| !r.is_empty())
}

impl io::Read for Stoppable {
    fn read(&mut self, buf: &mut [u8]) -> io::Result<usize> {
        loop {
            let mut fds = [
                PollFd::new(self.inner.as_fd(), PollFlags::POLLIN),
                PollFd::new(self.stop.as_fd(), PollFlags::POLLIN),
                PollFd::new(self.flush.as_fd(), PollFlags::POLLIN),
            ];
            // While catching up, only what is readable now counts.
            let wait = if self.flushing {
                PollTimeout::ZERO
            } else {
                PollTimeout::NONE
            };
            match poll(&mut fds, wait) {
                Ok(_) => {}
                Err(nix::errno::Errno::EINTR) => continue,
                Err(e) => return Err(e.into()),
            }
            if ready(&fds[1]) {
                return Ok(0);
            }
            if ready(&fds[2]) {
                let mut byte = [0u8; 16];
                let _ = nix::unistd::read(&self.flush, &mut byte);
                self.flushing = true;
                continue;
            }
            if ready(&fds[0]) {
                return (&*self.inner).read(buf);
            }
            if self.flushing {
                // Everything returned before this call has been taken in by the caller.
                self.flushing = false;
                let _ = self.acks.send(());
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
    use std::io::{Read, Write};
    use std::sync::{Arc, Mutex};

    /// A reader thread that appends everything it reads to a shared buffer, the way the
    /// stdout reader takes lines into its record.
    fn reading(r: Stoppable) -> (Arc<Mutex<Vec<u8>>>, std::thread::JoinHandle<()>) {
        let seen = Arc::new(Mutex::new(Vec::new()));
        let out = seen.clone();
        let thread = std::thread::spawn(move || {
            let mut r = r;
            let mut buf = [0u8; 3];
            while let Ok(n @ 1..) = r.read(&mut buf) {
                std::thread::sleep(Duration::from_millis(5));
                out.lock().unwrap().extend_from_slice(&buf[..n]);
            }
        });
        (seen, thread)
    }

    #[test]
    fn a_flush_returns_once_everything_written_was_taken_in() {
        let (r, w) = nix::unistd::pipe2(OFlag::O_CLOEXEC).unwrap();
        let mut w = std::fs::File::from(w);
        let (reader, _stop, flusher) = Stoppable::new(std::fs::File::from(r)).unwrap();
        let (seen, _thread) = reading(reader);
        for round in 0..5u8 {
            let data = vec![b'a' + round; 10];
            w.write_all(&data).unwrap();
            flusher.flush(Duration::from_secs(60));
            let expect: Vec<u8> = (0..=round).flat_map(|i| vec![b'a' + i; 10]).collect();
            assert_eq!(*seen.lock().unwrap(), expect, "round {round}");
        }
    }

    #[test]
    fn unread_bytes_are_counted_until_the_reader_ends() {
        let (r, w) = nix::unistd::pipe2(OFlag::O_CLOEXEC).unwrap();
        let (reader, stop, flusher) = Stoppable::new(std::fs::File::from(r)).unwrap();
        std::fs::File::from(w).write_all(b"seven b").unwrap();
        assert_eq!(flusher.unread(), 7);
        drop(stop);
        drop(reader);
        assert_eq!(flusher.unread(), 0);
    }

    #[test]
    fn a_flush_after_the_writer_closed_returns_at_end_of_file() {
        let (r, w) = nix::unistd::pipe2(OFlag::O_CLOEXEC).unwrap();
        let (reader, _stop, flusher) = Stoppable::new(std::fs::File::from(r)).unwrap();
        let (seen, thread) = reading(reader);
        std::fs::File::from(w).write_all(b"last words").unwrap();
        flusher.flush(Duration::from_secs(60));
        assert_eq!(*seen.lock().unwrap(), b"last words");
        thread.join().unwrap();
    }

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
