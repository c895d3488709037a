//! No function grows past [`MAX_FN_LINES`]: a longer one does several steps that want names.

use std::collections::BTreeMap;

use syn::visit::{self, Visit};

use super::{files, read, rel, root};

/// Past this a function does several steps: split it into named ones.
const MAX_FN_LINES: usize = 60;

/// Every function's length in lines, `file: name` (a method as `Type::name`), test code aside.
fn lengths() -> BTreeMap<String, usize> {
    let mut out = BTreeMap::new();
    for file in files(&root().join("src"), ".rs") {
        let syntax =
            syn::parse_file(&read(&file)).unwrap_or_else(|e| panic!("{}: {e}", rel(&file)));
        let mut v = Lengths {
            file: rel(&file),
            owner: None,
            out: &mut out,
        };
        v.visit_file(&syntax);
    }
    out
}

struct Lengths<'a> {
    file: String,
    owner: Option<String>,
    out: &'a mut BTreeMap<String, usize>,
}

pub fn is_test(attrs: &[syn::Attribute]) -> bool {
    attrs.iter().any(|a| {
        a.path().is_ident("test")
            || (a.path().is_ident("cfg") && a.parse_args::<syn::Ident>().is_ok_and(|i| i == "test"))
    })
}

impl Lengths<'_> {
    fn record(&mut self, name: &syn::Ident, sig: &syn::Signature, block: &syn::Block) {
        let first = sig.fn_token.span.start().line;
        let last = block.brace_token.span.close().end().line;
        let name = match &self.owner {
            Some(owner) => format!("{}: {owner}::{name}", self.file),
            None => format!("{}: {name}", self.file),
        };
        self.out.insert(name, last + 1 - first);
    }
}

impl<'ast> Visit<'ast> for Lengths<'_> {
    fn visit_item_mod(&mut self, m: &'ast syn::ItemMod) {
        if !is_test(&m.attrs) {
            visit::visit_item_mod(self, m);
        }
    }

    fn visit_item_fn(&mut self, f: &'ast syn::ItemFn) {
        if !is_test(&f.attrs) {
            self.record(&f.sig.ident, &f.sig, &f.block);
            visit::visit_item_fn(self, f);
        }
    }

    fn visit_item_impl(&mut self, i: &'ast syn::ItemImpl) {
        if is_test(&i.attrs) {
            return;
        }
        let owner = match &*i.self_ty {
            syn::Type::Path(p) => p.path.segments.last().map(|s| s.ident.to_string()),
            _ => None,
        };
        let outer = std::mem::replace(&mut self.owner, owner);
        visit::visit_item_impl(self, i);
        self.owner = outer;
    }

    fn visit_impl_item_fn(&mut self, f: &'ast syn::ImplItemFn) {
        if !is_test(&f.attrs) {
            self.record(&f.sig.ident, &f.sig, &f.block);
            visit::visit_impl_item_fn(self, f);
        }
    }
}

#[test]
fn no_function_grows_past_60_lines() {
    let problems: Vec<String> = lengths()
        .into_iter()
        .filter(|&(_, lines)| lines > MAX_FN_LINES)
        .map(|(name, lines)| {
            format!("{name}: {lines} lines (at most {MAX_FN_LINES}): split it into named steps")
        })
        .collect();
    assert!(
        problems.is_empty(),
        "tests/docs/lengths.rs:\n{}",
        problems.join("\n")
    );
}
