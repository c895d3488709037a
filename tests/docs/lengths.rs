//! No function grows past [`MAX_FN_LINES`]: a longer one does several steps that want names.
//! The ones longer today are listed with their length, which may only shrink.

use std::collections::BTreeMap;

use syn::visit::{self, Visit};

use super::{files, read, rel, root};

/// Past this a function does several steps: split it into named ones.
const MAX_FN_LINES: usize = 60;

/// Functions over the limit today, `file: name` → lines. An entry may only shrink: a
/// function split under the limit leaves the list, and none joins it.
const LONGER_TODAY: &[(&str, usize)] = &[
    ("src/os/tracer.rs: trace_until_stopped", 78),
    ("src/supervisor/client_stub.rs: main", 80),
];

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
    let today: BTreeMap<&str, usize> = LONGER_TODAY.iter().copied().collect();
    let mut problems = Vec::new();
    let all = lengths();
    for (name, &lines) in &all {
        let allowed = today.get(name.as_str()).copied().unwrap_or(MAX_FN_LINES);
        if lines > allowed {
            problems.push(format!(
                "{name}: {lines} lines (at most {allowed}): split it into named steps"
            ));
        } else if lines < allowed && today.contains_key(name.as_str()) {
            let now = if lines > MAX_FN_LINES {
                format!("write {lines} for it in LONGER_TODAY")
            } else {
                "take it off LONGER_TODAY".to_string()
            };
            problems.push(format!("{name}: {lines} lines now, well done: {now}"));
        }
    }
    for name in today.keys().filter(|n| !all.contains_key(**n)) {
        problems.push(format!("{name}: gone: take it off LONGER_TODAY"));
    }
    problems.sort();
    assert!(
        problems.is_empty(),
        "tests/docs/lengths.rs:\n{}",
        problems.join("\n")
    );
}
