//! The suite's own tests: every bundled manifest × scenario against a real run (snapshotted
//! as verdict classes, never milliseconds), the hostile fixtures, and the command line.

mod act;
mod alloc_meter;
mod book;
mod bundled;
mod census;
mod census_carry;
mod census_triage;
mod cli;
mod client_ladders;
mod diff_against;
mod hostile;
mod hosts;
mod interrupt;
mod launchers;
mod official;
mod packaging;
mod plugins;
mod registry;
mod relocated;
mod repeat;
mod reports;
mod robust;
mod sdk;
mod skip;
mod support;
mod watch;
mod yours;

#[global_allocator]
static METER: alloc_meter::Meter = alloc_meter::Meter;
