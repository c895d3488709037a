//! Configuration: what the user and the suite's data files say, validated into typed values
//! whose errors name the file, line and field. Server manifests, budgets, client profiles
//! and the scenarios built from them, and baselines of expected failures.

pub mod baseline;
#[cfg(test)]
mod book;
pub mod budgets;
pub mod endings;
#[cfg(test)]
mod endings_codegen;
pub mod manifest;
pub mod profiles;
pub mod scenarios;
