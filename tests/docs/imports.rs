//! What the source imports, read with a Rust parser: every path into the crate (`crate::…`,
//! `super::…`, `self::…`, a child module named from its parent), outside `#[cfg(test)]`
//! items, in code and in macro arguments alike.

use std::collections::{BTreeMap, BTreeSet};
use std::path::Path;

use proc_macro2::{TokenStream, TokenTree};
use syn::visit::{self, Visit};

/// A module path inside the crate, from its root: `["render", "html", "view"]`.
pub type ModPath = Vec<String>;

/// Where a file sits in the module tree.
#[derive(Clone, Debug)]
pub struct Place {
    /// The module the file is (`src/render/html/mod.rs` is `render::html`).
    pub module: ModPath,
    /// The module names declared below it (its folder's files and folders), for paths that
    /// start with a child's name.
    pub children: BTreeSet<String>,
}

impl Place {
    /// The place of a file under `src/`.
    pub fn of(src: &Path, file: &Path) -> Place {
        let rel = file.strip_prefix(src).expect("a file under src/");
        let mut module: ModPath = rel
            .iter()
            .map(|c| c.to_string_lossy().trim_end_matches(".rs").to_string())
            .collect();
        let is_root = matches!(
            module.last().map(String::as_str),
            Some("mod" | "lib" | "main")
        );
        if is_root {
            module.pop();
        }
        let children = if is_root {
            child_modules(file.parent().expect("a folder"))
        } else {
            child_modules(&file.with_extension(""))
        };
        Place { module, children }
    }
}

fn child_modules(dir: &Path) -> BTreeSet<String> {
    let Ok(entries) = std::fs::read_dir(dir) else {
        return BTreeSet::new();
    };
    entries
        .filter_map(Result::ok)
        .filter_map(|e| {
            let name = e.file_name().to_string_lossy().to_string();
            let stem = name.strip_suffix(".rs").unwrap_or(&name).to_string();
            (stem != "mod" && stem != "lib" && stem != "main").then_some(stem)
        })
        .collect()
}

/// Every module path a file's code names, made absolute.
pub fn paths_in(place: &Place, source: &str) -> BTreeSet<ModPath> {
    let file = syn::parse_file(source).unwrap_or_else(|e| panic!("{:?}: {e}", place.module));
    let mut v = Visitor {
        place,
        found: BTreeSet::new(),
    };
    v.visit_file(&file);
    v.found
}

struct Visitor<'p> {
    place: &'p Place,
    found: BTreeSet<ModPath>,
}

impl Visitor<'_> {
    /// Records a path given as its segments, when it leads into the crate.
    fn record(&mut self, segments: &[String]) {
        if let Some(p) = absolute(self.place, segments) {
            self.found.insert(p);
        }
    }

    fn use_tree(&mut self, tree: &syn::UseTree, prefix: &mut Vec<String>) {
        match tree {
            syn::UseTree::Path(p) => {
                prefix.push(p.ident.to_string());
                self.use_tree(&p.tree, prefix);
                prefix.pop();
            }
            syn::UseTree::Name(n) => {
                prefix.push(n.ident.to_string());
                self.record(prefix);
                prefix.pop();
            }
            syn::UseTree::Rename(r) => {
                prefix.push(r.ident.to_string());
                self.record(prefix);
                prefix.pop();
            }
            syn::UseTree::Glob(_) => self.record(prefix),
            syn::UseTree::Group(g) => g.items.iter().for_each(|t| self.use_tree(t, prefix)),
        }
    }

    /// Paths inside a macro's tokens (`format!("{}", crate::x::y())`), which the parser
    /// leaves unparsed.
    fn tokens(&mut self, tokens: TokenStream) {
        let trees: Vec<TokenTree> = tokens.into_iter().collect();
        let mut i = 0;
        while i < trees.len() {
            if let TokenTree::Group(g) = &trees[i] {
                self.tokens(g.stream());
            }
            if let TokenTree::Ident(first) = &trees[i] {
                let mut segments = vec![first.to_string()];
                let mut j = i + 1;
                while let (
                    Some(TokenTree::Punct(a)),
                    Some(TokenTree::Punct(b)),
                    Some(TokenTree::Ident(n)),
                ) = (trees.get(j), trees.get(j + 1), trees.get(j + 2))
                {
                    if a.as_char() != ':' || b.as_char() != ':' {
                        break;
                    }
                    segments.push(n.to_string());
                    j += 3;
                }
                if segments.len() > 1 && matches!(segments[0].as_str(), "crate" | "super" | "self")
                {
                    self.record(&segments);
                }
                i = j;
                continue;
            }
            i += 1;
        }
    }
}

/// The absolute module path a path names, when it starts in the crate.
fn absolute(place: &Place, segments: &[String]) -> Option<ModPath> {
    let mut base: ModPath = place.module.clone();
    let mut rest = segments;
    match rest.first().map(String::as_str) {
        Some("crate") => {
            base.clear();
            rest = &rest[1..];
        }
        Some("self") => rest = &rest[1..],
        Some("super") => {
            while rest.first().map(String::as_str) == Some("super") {
                base.pop()?;
                rest = &rest[1..];
            }
        }
        Some(first) if place.children.contains(first) => {}
        _ => return None,
    }
    let mut out = base;
    out.extend(rest.iter().cloned());
    Some(out)
}

fn test_only(attrs: &[syn::Attribute]) -> bool {
    attrs.iter().any(|a| {
        a.path().is_ident("cfg") && a.parse_args::<syn::Ident>().is_ok_and(|i| i == "test")
    })
}

fn attrs_of(item: &syn::Item) -> &[syn::Attribute] {
    use syn::Item::*;
    match item {
        Const(i) => &i.attrs,
        Enum(i) => &i.attrs,
        Fn(i) => &i.attrs,
        Impl(i) => &i.attrs,
        Macro(i) => &i.attrs,
        Mod(i) => &i.attrs,
        Static(i) => &i.attrs,
        Struct(i) => &i.attrs,
        Trait(i) => &i.attrs,
        Type(i) => &i.attrs,
        Use(i) => &i.attrs,
        _ => &[],
    }
}

impl<'ast> Visit<'ast> for Visitor<'_> {
    fn visit_item(&mut self, item: &'ast syn::Item) {
        if !test_only(attrs_of(item)) {
            visit::visit_item(self, item);
        }
    }

    fn visit_impl_item_fn(&mut self, f: &'ast syn::ImplItemFn) {
        if !test_only(&f.attrs) {
            visit::visit_impl_item_fn(self, f);
        }
    }

    fn visit_item_use(&mut self, u: &'ast syn::ItemUse) {
        self.use_tree(&u.tree, &mut Vec::new());
    }

    fn visit_path(&mut self, p: &'ast syn::Path) {
        let segments: Vec<String> = p.segments.iter().map(|s| s.ident.to_string()).collect();
        if segments.len() > 1 {
            self.record(&segments);
        }
        visit::visit_path(self, p);
    }

    fn visit_macro(&mut self, m: &'ast syn::Macro) {
        self.tokens(m.tokens.clone());
        visit::visit_macro(self, m);
    }
}

/// Test-support files: not counted for imports.
pub const TEST_ONLY: &[&str] = &["src/test_support.rs"];

/// The modules `#[cfg(test)] mod x;` declares: test code in files of their own.
pub fn test_modules(src: &Path, files: &[std::path::PathBuf]) -> BTreeSet<ModPath> {
    let mut out = BTreeSet::new();
    for f in files {
        let place = Place::of(src, f);
        let file = syn::parse_file(&std::fs::read_to_string(f).unwrap()).unwrap();
        for item in &file.items {
            if let syn::Item::Mod(m) = item {
                if test_only(&m.attrs) && m.content.is_none() {
                    let mut p = place.module.clone();
                    p.push(m.ident.to_string());
                    out.insert(p);
                }
            }
        }
    }
    out
}

/// A file's imports among the files of its own folder: sibling stem → one path that shows it.
pub fn sibling_imports(place: &Place, paths: &BTreeSet<ModPath>) -> BTreeMap<String, String> {
    let Some((own, folder)) = place.module.split_last() else {
        return BTreeMap::new();
    };
    let mut out = BTreeMap::new();
    for p in paths {
        if p.len() > folder.len() && p[..folder.len()] == *folder && p[folder.len()] != *own {
            out.entry(p[folder.len()].clone())
                .or_insert_with(|| p.join("::"));
        }
    }
    out
}
