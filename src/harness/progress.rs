//! The progress line on a terminal: cases done, and how many are starting up or timing an
//! exit (holding a CPU token), waiting for a CPU token (behind this run's other cases or
//! other runs on the machine: a wait that is not a hang), or waiting on a grace period or an
//! orphan.

use std::sync::atomic::{AtomicUsize, Ordering::Relaxed};

use indicatif::{ProgressBar, ProgressDrawTarget, ProgressStyle};

pub struct Progress {
    bar: Option<ProgressBar>,
    running: AtomicUsize,
    busy: AtomicUsize,
    /// Cases waiting for a token: before their supervisor starts, and while it runs.
    queued: AtomicUsize,
    queued_running: AtomicUsize,
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
            queued: AtomicUsize::new(0),
            queued_running: AtomicUsize::new(0),
        }
    }

    fn redraw(&self) {
        if let Some(b) = &self.bar {
            b.set_message(self.line());
        }
    }

    fn line(&self) -> String {
        let (running, busy) = (self.running.load(Relaxed), self.busy.load(Relaxed));
        let (queued, queued_running) =
            (self.queued.load(Relaxed), self.queued_running.load(Relaxed));
        format!(
            "{busy} starting or timing an exit, {queued} waiting for a CPU, {} waiting on a \
             grace period or an orphan",
            running.saturating_sub(busy + queued_running)
        )
    }

    /// A case started (`true`) or stopped (`false`) waiting for a CPU token; `running`: its
    /// supervisor runs (else it waits for its first token, before it starts).
    pub fn waiting_for_cpu(&self, on: bool, running: bool) {
        for n in [Some(&self.queued), running.then_some(&self.queued_running)]
            .into_iter()
            .flatten()
        {
            if on {
                n.fetch_add(1, Relaxed);
            } else {
                n.fetch_sub(1, Relaxed);
            }
        }
        self.redraw();
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

    /// A case that launched nothing (its setup failed, it shares its probe's failure, the
    /// run was interrupted) is done.
    pub fn case_skipped(&self) {
        if let Some(b) = &self.bar {
            b.inc(1);
        }
    }

    /// A case the machine's load decided runs again: one more run to wait for.
    pub fn run_again(&self) {
        if let Some(b) = &self.bar {
            b.inc_length(1);
        }
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

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_line_counts_cases_waiting_for_a_cpu() {
        let p = Progress::new(5, false);
        p.waiting_for_cpu(true, false);
        for _ in 0..3 {
            p.case_started();
        }
        p.busy(true);
        p.waiting_for_cpu(true, true);
        assert_eq!(
            p.line(),
            "1 starting or timing an exit, 2 waiting for a CPU, 1 waiting on a grace period or an orphan"
        );
    }
}
