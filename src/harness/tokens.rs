//! CPU tokens: start-ups and the timed window after a trigger are CPU-heavy (an interpreter
//! starting or tearing down), so only as many run at once as there are CPUs. Process-wide, so
//! that parallel tests share them: one per CPU, at least two.

use std::sync::{Condvar, Mutex, OnceLock};

/// A counting semaphore (std has none).
#[derive(Debug)]
pub struct Semaphore {
    free: Mutex<usize>,
    cv: Condvar,
}

/// A held token; given back on drop.
pub struct Permit<'a>(&'a Semaphore);

impl Semaphore {
    pub fn new(n: usize) -> Self {
        Self {
            free: Mutex::new(n),
            cv: Condvar::new(),
        }
    }

    pub fn acquire(&self) -> Permit<'_> {
        let mut free = self.free.lock().unwrap_or_else(|p| p.into_inner());
        while *free == 0 {
            free = self.cv.wait(free).unwrap_or_else(|p| p.into_inner());
        }
        *free -= 1;
        Permit(self)
    }
}

impl Drop for Permit<'_> {
    fn drop(&mut self) {
        *self.0.free.lock().unwrap_or_else(|p| p.into_inner()) += 1;
        self.0.cv.notify_one();
    }
}

/// The process-wide tokens.
pub fn cpu_tokens() -> &'static Semaphore {
    static GATE: OnceLock<Semaphore> = OnceLock::new();
    GATE.get_or_init(|| {
        Semaphore::new(
            std::thread::available_parallelism()
                .map_or(2, |n| n.get())
                .max(2),
        )
    })
}
