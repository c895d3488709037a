//! The ladder that names a path's runs: the shape most showed (one odd run, a race in the
//! host, does not name the path); on a tie the longer (a recorder SIGKILLed a few ms after a
//! signal may die before it logs that signal, but no run logs a signal never sent).
//!
//! The pipes closing in the moment before the server's SIGKILL: whether the recorder logs
//! its stdin's end, its stdout's, both or neither before it dies is a race between its own
//! threads and the kill (GitHub Copilot CLI closes both and SIGKILLs 0–10 ms later). Runs
//! that differ only there are one ladder, shown in its fullest logged form: no run logs a
//! close that never happened.

use crate::hosts::analyze::{self, RunReading};
use crate::hosts::reading::{ActionKind, LadderShape, SentBy};
use crate::model::SignalName;

/// The ladder that names a path's runs.
pub(super) struct Picked {
    /// The run that shows it fullest.
    pub index: usize,
    pub shape: LadderShape,
    pub key: LadderShape,
    /// Per run: it shows this ladder (the same shape, or the same but for the race).
    pub like: Vec<bool>,
    /// Per run of the ladder, how many ends of the pipes it logged closing.
    pub closes_logged: Vec<usize>,
}

/// The ladder most runs show, in its fullest logged form.
pub(super) fn pick_ladder(readings: &[RunReading]) -> Picked {
    let shapes: Vec<_> = readings.iter().map(analyze::shape).collect();
    let keys: Vec<_> = readings.iter().map(key).collect();
    let index = pick(&shapes, &keys);
    let like: Vec<bool> = (0..readings.len())
        .map(|i| same(&shapes, &keys, index, i))
        .collect();
    let closes_logged = (0..readings.len())
        .filter(|&i| like[i])
        .map(|i| ends(&shapes[i]))
        .collect();
    Picked {
        index,
        shape: shapes[index].clone(),
        key: keys[index].clone(),
        like,
        closes_logged,
    }
}

impl Picked {
    /// The runs that show another ladder, each as `line` says.
    pub(super) fn others(
        &self,
        readings: &[RunReading],
        line: fn(&RunReading) -> String,
    ) -> Vec<String> {
        readings
            .iter()
            .zip(&self.like)
            .filter(|(_, like)| !**like)
            .map(|(r, _)| line(r))
            .collect()
    }

    /// The runs of this ladder that logged its first step first.
    pub(super) fn runs<'a>(&self, readings: &'a [RunReading]) -> Vec<&'a RunReading> {
        readings
            .iter()
            .zip(&self.like)
            .filter(|(r, like)| **like && analyze::shape(r).first() == self.shape.first())
            .map(|(r, _)| r)
            .collect()
    }
}

/// What the cap note says of the runs that logged less of the pipes' closing than `shape`.
pub(super) fn note(closes_logged: &[usize], shape: &LadderShape, runs: usize) -> Option<String> {
    let full = ends(shape);
    let short = closes_logged.iter().filter(|&&e| e < full).count();
    (short > 0).then(|| {
        format!(
            "In {short} of {runs} runs the server was SIGKILLed within {} ms of its pipes closing and logged one end closing or neither: the same ladder.",
            analyze::SAME_MS
        )
    })
}

fn is_close(action: ActionKind) -> bool {
    matches!(
        action,
        ActionKind::CloseStdin | ActionKind::StdoutClosed | ActionKind::ClosePipes
    )
}

/// The run's shape without the closes it logged within [`analyze::SAME_MS`] before a
/// SIGKILL inferred from its death that ends the ladder.
fn key(r: &RunReading) -> LadderShape {
    let mut r = r.clone();
    let kill = r
        .deliveries
        .last()
        .filter(|d| {
            d.action == ActionKind::Signal(SignalName::Kill) && d.from == SentBy::InferredFromDeath
        })
        .map(|d| d.at_ms);
    if let Some(k) = kill {
        r.deliveries
            .retain(|d| !(is_close(d.action) && k - d.at_ms <= analyze::SAME_MS));
    }
    analyze::shape(&r)
}

/// How many ends of the pipes a shape logs closing (`close-pipes` is both).
pub(super) fn ends(shape: &LadderShape) -> usize {
    shape
        .iter()
        .map(|(a, _)| match a {
            ActionKind::ClosePipes => 2,
            a if is_close(*a) => 1,
            _ => 0,
        })
        .sum()
}

/// The run that names a path: the ladder most runs show (runs that differ only by the
/// race count as one), in its fullest logged form; on a tie the longer, then the earliest.
fn pick(shapes: &[LadderShape], keys: &[LadderShape]) -> usize {
    let count = |i: usize| {
        (0..shapes.len())
            .filter(|&j| same(shapes, keys, i, j))
            .count()
    };
    (0..shapes.len())
        .max_by_key(|&i| {
            (
                count(i),
                shapes[i].len(),
                ends(&shapes[i]),
                std::cmp::Reverse(i),
            )
        })
        .unwrap_or(0)
}

/// Runs `i` and `j` show one ladder: the same shape, or the same but for the race.
fn same(shapes: &[LadderShape], keys: &[LadderShape], i: usize, j: usize) -> bool {
    shapes[i] == shapes[j] || keys[i] == keys[j]
}
