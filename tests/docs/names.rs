//! One meaning per name: no two types in `src/` (structs, enums, unions, traits and type
//! aliases of a module, test code aside) share a name, so that a name read anywhere means
//! one thing. A type local to a function is its own business and not counted.

use std::collections::BTreeMap;

use syn::visit::{self, Visit};

use super::lengths::is_test;
use super::{files, read, rel, root};

/// Every module-level type name of `src/`, with the places (`file:line`) that define it.
fn type_names() -> BTreeMap<String, Vec<String>> {
    let mut out = BTreeMap::new();
    for file in files(&root().join("src"), ".rs") {
        let syntax =
            syn::parse_file(&read(&file)).unwrap_or_else(|e| panic!("{}: {e}", rel(&file)));
        let mut v = TypeNames {
            file: rel(&file),
            out: &mut out,
        };
        v.visit_file(&syntax);
    }
    out
}

struct TypeNames<'a> {
    file: String,
    out: &'a mut BTreeMap<String, Vec<String>>,
}

impl TypeNames<'_> {
    fn record(&mut self, attrs: &[syn::Attribute], ident: &syn::Ident) {
        if !is_test(attrs) {
            let place = format!("{}:{}", self.file, ident.span().start().line);
            self.out.entry(ident.to_string()).or_default().push(place);
        }
    }
}

impl<'ast> Visit<'ast> for TypeNames<'_> {
    fn visit_item_mod(&mut self, m: &'ast syn::ItemMod) {
        if !is_test(&m.attrs) {
            visit::visit_item_mod(self, m);
        }
    }

    // Not into function bodies (nor impls): the types there are local to them.
    fn visit_item_fn(&mut self, _: &'ast syn::ItemFn) {}
    fn visit_item_impl(&mut self, _: &'ast syn::ItemImpl) {}

    fn visit_item_struct(&mut self, i: &'ast syn::ItemStruct) {
        self.record(&i.attrs, &i.ident);
    }
    fn visit_item_enum(&mut self, i: &'ast syn::ItemEnum) {
        self.record(&i.attrs, &i.ident);
    }
    fn visit_item_union(&mut self, i: &'ast syn::ItemUnion) {
        self.record(&i.attrs, &i.ident);
    }
    fn visit_item_trait(&mut self, i: &'ast syn::ItemTrait) {
        self.record(&i.attrs, &i.ident);
    }
    fn visit_item_type(&mut self, i: &'ast syn::ItemType) {
        self.record(&i.attrs, &i.ident);
    }
}

#[test]
fn no_type_name_means_two_things() {
    let twice: Vec<String> = type_names()
        .into_iter()
        .filter(|(_, places)| places.len() > 1)
        .map(|(name, places)| format!("`{name}`: {}", places.join(", ")))
        .collect();
    assert!(
        twice.is_empty(),
        "type names defined more than once in src/ (rename all but the central one to say \
         what it is):\n{}",
        twice.join("\n")
    );
}
