//! The progress line on a terminal: cases done, and how many are starting up or timing an
//! exit (holding a CPU token) versus waiting on a grace period or an orphan.

use std::sync::atomic::{AtomicUsize, Ordering::Relaxed};

use indicatif::{ProgressBar, ProgressDrawTarget, ProgressStyle};

pub struct Progress {
    bar: Option<ProgressBar>,
    running: AtomicUsize,
    busy: AtomicUsize,
}

impl Progress {
    /// A progress line for `total` cases, drawn on stderr only when `on`.
    pub fn new(total: usize, on: bool) -> Self {
        let bar = on.then(|| {
            let b = ProgressBar::with_draw_target(Some(total as u64), ProgressDrawTarget::stderr());
            b.set_style(
                ProgressStyle::with_template("[{pos}/{len}] {msg}")
                    .unwrap_or_else(|_| ProgressStyle::default_bar()),
            );
            b.enable_steady_tick(std::time::Duration::from_millis(200));
            b
        });
        Self {
            bar,
            running: AtomicUsize::new(0),
            busy: AtomicUsize::new(0),
        }
    }

    fn redraw(&self) {
        if let Some(b) = &self.bar {
            let (running, busy) = (self.running.load(Relaxed), self.busy.load(Relaxed));
            b.set_message(format!(
                "{busy} starting or timing an exit, {} waiting on a grace period or an orphan",
                running.saturating_sub(busy)
            ));
        }
    }

    pub fn case_started(&self) {
        self.running.fetch_add(1, Relaxed);
        self.redraw();
    }

    pub fn case_done(&self) {
        self.running.fetch_sub(1, Relaxed);
        if let Some(b) = &self.bar {
            b.inc(1);
        }
        self.redraw();
    }

    /// A case took (`true`) or gave back (`false`) a CPU token.
    pub fn busy(&self, on: bool) {
        if on {
            self.busy.fetch_add(1, Relaxed);
        } else {
            self.busy.fetch_sub(1, Relaxed);
        }
        self.redraw();
    }

    pub fn finish(&self) {
        if let Some(b) = &self.bar {
            b.finish_and_clear();
        }
    }
}
