//! The suite's own tests: every bundled manifest × scenario against a real run (snapshotted
//! as verdict classes, never milliseconds), the hostile fixtures, and the command line.

mod bundled;
mod cli;
mod client_ladders;
mod hostile;
mod interrupt;
mod reports;
mod robust;
mod support;
mod yours;
