//! The ecosystem census: real published stdio servers, read from a registry listing.
//!
//! [`listing`] turns a listing in the official MCP registry's format into entries with the
//! exact launch of each npm or PyPI package (and reasons for those it cannot run);
//! [`install`] puts every package once into a shared cache and gives the offline launch
//! that runs it from there, so no measured case includes a download.

pub mod install;
pub mod listing;

pub use install::{install, launch, InstallError, Launch, Progress, UV_VERSION};
pub use listing::{
    parse_listing, parse_listing_with, Entry, Listing, ListingError, ParseOptions, Registry,
    Runtime, Skipped, PLACEHOLDER,
};
