//! The installed binary is the whole tool: no code it runs names the path it was built at
//! (`CARGO_MANIFEST_DIR`), which an installed binary does not have. Test code may (a
//! `#[cfg(test)]` module, inline or in its own file, or a `#[test]`); the binary reads its
//! catalogues from what it embeds (`include_str!`, build.rs). `relocated.rs` in the
//! conformance tests runs the binary where the checkout is hidden.

use std::collections::BTreeSet;
use std::path::{Path, PathBuf};

use syn::visit::{self, Visit};

use super::lengths::is_test;
use super::{files, read, rel, root};

const BUILD_PATH: &str = "CARGO_MANIFEST_DIR";

struct BuildPath<'a> {
    file: &'a Path,
    /// Files that only test code declares (`#[cfg(test)] mod x;`).
    test_files: &'a mut BTreeSet<PathBuf>,
    /// `file:line` of every mention outside test code.
    found: &'a mut Vec<(PathBuf, usize)>,
}

impl BuildPath<'_> {
    /// The file `mod name;` in this file declares (`#[path]` is relative to this file's
    /// folder).
    fn module_file(&self, m: &syn::ItemMod) -> PathBuf {
        let dir = self.file.parent().expect("a file's folder");
        let path = m.attrs.iter().find_map(|a| match &a.meta {
            syn::Meta::NameValue(nv) if nv.path.is_ident("path") => match &nv.value {
                syn::Expr::Lit(syn::ExprLit {
                    lit: syn::Lit::Str(s),
                    ..
                }) => Some(s.value()),
                _ => None,
            },
            _ => None,
        });
        if let Some(path) = path {
            return dir.join(path);
        }
        let name = m.ident.to_string();
        let stem = self.file.file_stem().and_then(|s| s.to_str());
        let dir = match stem {
            Some("mod" | "lib" | "main") => dir.to_path_buf(),
            Some(stem) => dir.join(stem),
            None => dir.to_path_buf(),
        };
        let flat = dir.join(format!("{name}.rs"));
        if flat.is_file() {
            flat
        } else {
            dir.join(name).join("mod.rs")
        }
    }
}

impl<'ast> Visit<'ast> for BuildPath<'_> {
    fn visit_item_mod(&mut self, m: &'ast syn::ItemMod) {
        if !is_test(&m.attrs) {
            visit::visit_item_mod(self, m);
        } else if m.content.is_none() {
            let file = self.module_file(m);
            if file.ends_with("mod.rs") {
                self.test_files
                    .insert(file.parent().expect("a folder").to_path_buf());
            }
            self.test_files.insert(file);
        }
    }

    fn visit_item_fn(&mut self, f: &'ast syn::ItemFn) {
        if !is_test(&f.attrs) {
            visit::visit_item_fn(self, f);
        }
    }

    fn visit_item_impl(&mut self, i: &'ast syn::ItemImpl) {
        if !is_test(&i.attrs) {
            visit::visit_item_impl(self, i);
        }
    }

    fn visit_macro(&mut self, m: &'ast syn::Macro) {
        if m.tokens.to_string().contains(BUILD_PATH) {
            let line = m.path.segments[0].ident.span().start().line;
            self.found.push((self.file.to_path_buf(), line));
        }
    }

    fn visit_lit_str(&mut self, s: &'ast syn::LitStr) {
        if s.value().contains(BUILD_PATH) {
            self.found
                .push((self.file.to_path_buf(), s.span().start().line));
        }
    }
}

#[test]
fn the_binary_never_reads_its_build_path() {
    let mut test_files = BTreeSet::new();
    let mut found = Vec::new();
    for file in files(&root().join("src"), ".rs") {
        let syntax =
            syn::parse_file(&read(&file)).unwrap_or_else(|e| panic!("{}: {e}", rel(&file)));
        BuildPath {
            file: &file,
            test_files: &mut test_files,
            found: &mut found,
        }
        .visit_file(&syntax);
    }
    let in_test_file = |f: &Path| f.ancestors().any(|a| test_files.contains(a));
    let places: Vec<String> = found
        .iter()
        .filter(|(f, _)| !in_test_file(f))
        .map(|(f, line)| format!("{}:{line}", rel(f)))
        .collect();
    assert!(
        places.is_empty(),
        "`{BUILD_PATH}` outside test code: an installed binary has no such path; embed the \
         data (include_str!, build.rs) or keep the code under #[cfg(test)]:\n{}",
        places.join("\n")
    );
}
