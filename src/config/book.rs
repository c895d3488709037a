//! The endings tables of the book (`docs/book/src/endings.md`) and the README are the
//! catalogue's (`conformance/endings.toml`): a new ending documents itself.

use super::endings::get;
use crate::model::Ending;
use crate::test_support::generated_block;

/// Every ending: how the session ends and what latency is measured from.
fn book_table() -> String {
    let mut s =
        String::from("| ID | the session ends by | latency measured from |\n|---|---|---|\n");
    for e in Ending::ALL {
        let d = get(*e);
        s.push_str(&format!("| `{e}` | {} | {} |\n", d.does, d.measured_from));
    }
    s.push_str(
        "| `close:<profile>` | one real client's or host's ladder (below), with its plumbing \
         | the start of its `close()` |\n",
    );
    s
}

/// The endings a run uses unless told otherwise, in one line each.
fn readme_table() -> String {
    let mut s = String::from("| ID | the session ends by |\n|---|---|\n");
    for e in Ending::DEFAULTS {
        s.push_str(&format!(
            "| `{e}` | {} |\n",
            get(*e).summary.trim_end_matches('.')
        ));
    }
    s
}

#[test]
fn the_books_endings_table_is_the_catalogue() {
    generated_block("docs/book/src/endings.md", "endings", &book_table());
}

#[test]
fn the_readmes_default_endings_are_the_catalogue() {
    generated_block("README.md", "default-endings", &readme_table());
}
