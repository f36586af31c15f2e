//! The library's modules form layers: each module uses only modules of
//! its own layer or of the layers below, and no module reaches itself
//! through the others (no cycle).  The compiler allows both within one
//! crate; this test holds them.
//!
//! Every file of the library under `src/` (not `src/bin`) is parsed; a
//! file of a directory module (`src/formats/*.rs`) counts as that module.
//! A module's uses are the `crate::M` and `super::` paths of its `use`
//! items, of its code (types, expressions, patterns) and of the tokens of
//! the macros it calls, in code built without `cfg(test)`: a module's own
//! tests may use anything.  A name the crate root re-exports
//! (`crate::Error`) is a use of the module it comes from; any other item
//! of the root (`lib.rs`) is a use of the root.  With `LAYERS_PRINT`
//! set, the layer check prints the graph it found.

use std::collections::{BTreeMap, BTreeSet};
use std::path::{Path, PathBuf};

use syn::visit::Visit;

/// The layers, lowest first, and the modules of each.  The crate root
/// (`lib`) is the facade above them all; `module*` are the Emacs module
/// layer, which only marshals.
const LAYERS: &[(&str, &[&str])] = &[
    ("base", &["error", "alloc", "par", "budget"]),
    ("json", &["value", "path", "locate"]),
    ("model", &["model", "scan", "lenient", "sink", "node", "schema", "template"]),
    (
        "core",
        &[
            "imported",
            "formats",
            "openapi",
            "seeds_common",
            "arcade",
            "gloodata",
            "skydeck",
            "seeds",
            "read",
            "write",
            "plist",
            "args",
            "envelope",
            "validate",
            "check",
            "elisp_source",
            "elisp_tools",
            "gptel_form",
            "emit",
            "convert",
        ],
    ),
    ("module", &["module_lisp", "module", "module_seeds"]),
    ("facade", &["lib"]),
];

/// The module of each file under `src/`: `src/x.rs` and `src/x/...` are
/// `x`, `src/lib.rs` is `lib`; with the path of the file's own module
/// within the crate (for `super::`).
fn files(src: &Path) -> Vec<(String, Vec<String>, PathBuf)> {
    let mut out = Vec::new();
    let mut stack = vec![src.to_path_buf()];
    while let Some(dir) = stack.pop() {
        for entry in std::fs::read_dir(&dir).unwrap() {
            let path = entry.unwrap().path();
            let rel: Vec<String> =
                path.strip_prefix(src).unwrap().iter().map(|c| c.to_string_lossy().into_owned()).collect();
            if rel[0] == "bin" {
                continue;
            }
            if path.is_dir() {
                stack.push(path);
                continue;
            }
            if path.extension().is_none_or(|e| e != "rs") {
                continue;
            }
            // The module path of the file: src/a/b.rs is a::b, src/a/mod.rs is a.
            let mut modpath: Vec<String> = rel.iter().map(|c| c.trim_end_matches(".rs").to_string()).collect();
            if modpath.last().is_some_and(|l| l == "mod") {
                modpath.pop();
            }
            if modpath == ["lib"] {
                modpath.clear();
            }
            let top = modpath.first().cloned().unwrap_or_else(|| "lib".to_string());
            out.push((top, modpath, path));
        }
    }
    out.sort();
    out
}

/// Whether `attrs` build the item only for tests.
fn test_only(attrs: &[syn::Attribute]) -> bool {
    attrs
        .iter()
        .any(|a| a.path().is_ident("cfg") && a.parse_args::<syn::Meta>().is_ok_and(|m| m.path().is_ident("test")))
}

/// The uses of one file: the paths it names, each as its segments from
/// the crate root.
struct Uses {
    /// The module path where the visitor is (the file's, then inline `mod`s).
    here: Vec<String>,
    paths: Vec<Vec<String>>,
}

impl Uses {
    /// Record `segs` if it is a path within the crate.
    fn path(&mut self, segs: &[String]) {
        let Some(first) = segs.first() else { return };
        let mut base = self.here.clone();
        let mut rest = segs;
        match first.as_str() {
            "crate" => {
                base.clear();
                rest = &segs[1..];
            }
            "super" => {
                while rest.first().is_some_and(|s| s == "super") {
                    base.pop();
                    rest = &rest[1..];
                }
            }
            _ => return,
        }
        base.extend(rest.iter().cloned());
        self.paths.push(base);
    }

    fn use_tree(&mut self, prefix: &mut Vec<String>, tree: &syn::UseTree) {
        match tree {
            syn::UseTree::Path(p) => {
                prefix.push(p.ident.to_string());
                self.use_tree(prefix, &p.tree);
                prefix.pop();
            }
            syn::UseTree::Name(n) => {
                let mut segs = prefix.clone();
                if n.ident != "self" {
                    segs.push(n.ident.to_string());
                }
                self.path(&segs);
            }
            syn::UseTree::Rename(r) => {
                let mut segs = prefix.clone();
                if r.ident != "self" {
                    segs.push(r.ident.to_string());
                }
                self.path(&segs);
            }
            syn::UseTree::Glob(_) => self.path(prefix),
            syn::UseTree::Group(g) => {
                for t in &g.items {
                    self.use_tree(prefix, t);
                }
            }
        }
    }
}

impl<'ast> Visit<'ast> for Uses {
    fn visit_item(&mut self, item: &'ast syn::Item) {
        let attrs = match item {
            syn::Item::Mod(m) => &m.attrs,
            syn::Item::Use(u) => &u.attrs,
            syn::Item::Fn(f) => &f.attrs,
            syn::Item::Impl(i) => &i.attrs,
            syn::Item::Const(c) => &c.attrs,
            syn::Item::Static(s) => &s.attrs,
            syn::Item::Struct(s) => &s.attrs,
            syn::Item::Enum(e) => &e.attrs,
            syn::Item::Trait(t) => &t.attrs,
            syn::Item::Type(t) => &t.attrs,
            syn::Item::Macro(m) => &m.attrs,
            _ => return syn::visit::visit_item(self, item),
        };
        if test_only(attrs) {
            return;
        }
        syn::visit::visit_item(self, item);
    }

    fn visit_item_mod(&mut self, m: &'ast syn::ItemMod) {
        self.here.push(m.ident.to_string());
        syn::visit::visit_item_mod(self, m);
        self.here.pop();
    }

    fn visit_impl_item_fn(&mut self, f: &'ast syn::ImplItemFn) {
        if !test_only(&f.attrs) {
            syn::visit::visit_impl_item_fn(self, f);
        }
    }

    fn visit_item_use(&mut self, u: &'ast syn::ItemUse) {
        let mut prefix = Vec::new();
        self.use_tree(&mut prefix, &u.tree);
    }

    fn visit_path(&mut self, p: &'ast syn::Path) {
        if p.leading_colon.is_none() {
            let segs: Vec<String> = p.segments.iter().map(|s| s.ident.to_string()).collect();
            self.path(&segs);
        }
        syn::visit::visit_path(self, p);
    }

    fn visit_macro(&mut self, m: &'ast syn::Macro) {
        // `crate::a::b` among a macro call's tokens (format!("{}", crate::x::f())).
        let tokens: Vec<proc_macro2::TokenTree> = flatten(m.tokens.clone());
        let mut i = 0;
        while i < tokens.len() {
            if let proc_macro2::TokenTree::Ident(id) = &tokens[i] {
                if id == "crate" || id == "super" {
                    let mut segs = vec![id.to_string()];
                    let mut j = i + 1;
                    while j + 2 < tokens.len() && is_colons(&tokens[j], &tokens[j + 1]) {
                        match &tokens[j + 2] {
                            proc_macro2::TokenTree::Ident(next) => segs.push(next.to_string()),
                            _ => break,
                        }
                        j += 3;
                    }
                    if segs.len() > 1 {
                        self.path(&segs);
                    }
                    i = j;
                    continue;
                }
            }
            i += 1;
        }
        syn::visit::visit_macro(self, m);
    }
}

fn flatten(ts: proc_macro2::TokenStream) -> Vec<proc_macro2::TokenTree> {
    let mut out = Vec::new();
    for t in ts {
        match t {
            proc_macro2::TokenTree::Group(g) => out.extend(flatten(g.stream())),
            t => out.push(t),
        }
    }
    out
}

fn is_colons(a: &proc_macro2::TokenTree, b: &proc_macro2::TokenTree) -> bool {
    matches!((a, b), (proc_macro2::TokenTree::Punct(x), proc_macro2::TokenTree::Punct(y)) if x.as_char() == ':' && y.as_char() == ':')
}

/// The module graph of the library: for each module, the modules it uses
/// and, for each, one place that uses it (file and path).
type Graph = BTreeMap<String, BTreeMap<String, String>>;

fn graph() -> Graph {
    let src = Path::new(env!("CARGO_MANIFEST_DIR")).join("src");
    let files = files(&src);
    let tops: BTreeSet<String> = files.iter().map(|f| f.0.clone()).collect();
    // The names the root re-exports, and the module each comes from.
    let lib = syn::parse_file(&std::fs::read_to_string(src.join("lib.rs")).unwrap()).unwrap();
    let mut reexports: BTreeMap<String, String> = BTreeMap::new();
    for item in &lib.items {
        if let syn::Item::Use(u) = item {
            // Root `use` paths are relative to the root (`pub use error::Error`).
            collect_reexports(&mut Vec::new(), &u.tree, &mut reexports);
        }
    }
    // Macros a module exports (`#[macro_export]`) are named at the root.
    for (top, _, path) in &files {
        let file = syn::parse_file(&std::fs::read_to_string(path).unwrap())
            .unwrap_or_else(|e| panic!("{}: {e}", path.display()));
        for item in &file.items {
            if let syn::Item::Macro(m) = item {
                if let (Some(name), true) = (&m.ident, m.attrs.iter().any(|a| a.path().is_ident("macro_export"))) {
                    reexports.insert(name.to_string(), top.clone());
                }
            }
        }
    }
    let mut g = Graph::new();
    for (top, modpath, path) in &files {
        let text = std::fs::read_to_string(path).unwrap();
        let file = syn::parse_file(&text).unwrap_or_else(|e| panic!("{}: {e}", path.display()));
        let mut uses = Uses { here: modpath.clone(), paths: Vec::new() };
        if top == "lib" {
            // At the root, `use a::b` and paths `a::b` name the crate's modules.
            for item in &file.items {
                if let syn::Item::Use(u) = item {
                    let mut prefix = vec!["crate".to_string()];
                    uses.use_tree(&mut prefix, &u.tree);
                }
            }
        }
        uses.visit_file(&file);
        let node = g.entry(top.clone()).or_default();
        for p in uses.paths {
            let target = match p.first() {
                None => continue,
                Some(m) if tops.contains(m) => m.clone(),
                Some(name) => reexports.get(name).cloned().unwrap_or_else(|| "lib".to_string()),
            };
            if &target != top {
                let rel = path.strip_prefix(&src).unwrap().display().to_string();
                node.entry(target).or_insert_with(|| format!("src/{rel}: crate::{}", p.join("::")));
            }
        }
    }
    g
}

fn collect_reexports(prefix: &mut Vec<String>, tree: &syn::UseTree, out: &mut BTreeMap<String, String>) {
    match tree {
        syn::UseTree::Path(p) => {
            prefix.push(p.ident.to_string());
            collect_reexports(prefix, &p.tree, out);
            prefix.pop();
        }
        syn::UseTree::Name(n) => {
            if let Some(m) = prefix.first() {
                out.insert(n.ident.to_string(), m.clone());
            }
        }
        syn::UseTree::Rename(r) => {
            if let Some(m) = prefix.first() {
                out.insert(r.rename.to_string(), m.clone());
            }
        }
        syn::UseTree::Glob(_) => {}
        syn::UseTree::Group(g) => {
            for t in &g.items {
                collect_reexports(prefix, t, out);
            }
        }
    }
}

/// A cycle of `g`, as the modules along it, if there is one.
fn cycle(g: &Graph) -> Option<Vec<String>> {
    // Depth-first search with colours: 0 unseen, 1 on the stack, 2 done.
    fn dfs(g: &Graph, n: &str, colour: &mut BTreeMap<String, u8>, stack: &mut Vec<String>) -> Option<Vec<String>> {
        colour.insert(n.to_string(), 1);
        stack.push(n.to_string());
        for m in g.get(n).into_iter().flat_map(|e| e.keys()) {
            match colour.get(m).copied().unwrap_or(0) {
                1 => {
                    let at = stack.iter().position(|s| s == m).unwrap();
                    let mut c = stack[at..].to_vec();
                    c.push(m.clone());
                    return Some(c);
                }
                0 => {
                    if let Some(c) = dfs(g, m, colour, stack) {
                        return Some(c);
                    }
                }
                _ => {}
            }
        }
        stack.pop();
        colour.insert(n.to_string(), 2);
        None
    }
    let mut colour = BTreeMap::new();
    for n in g.keys() {
        if colour.get(n).copied().unwrap_or(0) == 0 {
            if let Some(c) = dfs(g, n, &mut colour, &mut Vec::new()) {
                return Some(c);
            }
        }
    }
    None
}

#[test]
fn the_modules_have_no_cycle() {
    let g = graph();
    if let Some(c) = cycle(&g) {
        let steps: Vec<String> =
            c.windows(2).map(|w| format!("  {} -> {}  ({})", w[0], w[1], g[&w[0]][&w[1]])).collect();
        panic!("the modules of src/ form a cycle: {}\n{}", c.join(" -> "), steps.join("\n"));
    }
}

#[test]
fn each_module_uses_only_its_layer_and_below() {
    let g = graph();
    if std::env::var_os("LAYERS_PRINT").is_some() {
        for (m, uses) in &g {
            eprintln!("{m}: {}", uses.keys().cloned().collect::<Vec<_>>().join(" "));
        }
    }
    let layer_of = |m: &str| LAYERS.iter().position(|(_, ms)| ms.contains(&m));
    let mut wrong = Vec::new();
    for (m, uses) in &g {
        let Some(lm) = layer_of(m) else {
            wrong.push(format!("  {m} is in no layer: add it to LAYERS in test/layers.rs"));
            continue;
        };
        for (u, at) in uses {
            match layer_of(u) {
                Some(lu) if lu <= lm => {}
                Some(lu) => wrong
                    .push(format!("  {m} (layer {}) uses {u} (layer {}, above it): {at}", LAYERS[lm].0, LAYERS[lu].0)),
                None => wrong.push(format!("  {u} is in no layer: add it to LAYERS in test/layers.rs")),
            }
        }
    }
    for (name, ms) in LAYERS {
        for m in *ms {
            if !g.contains_key(*m) {
                wrong.push(format!("  layer {name} names {m}, which is not a module of src/"));
            }
        }
    }
    wrong.sort();
    wrong.dedup();
    assert!(wrong.is_empty(), "modules use modules of layers above their own:\n{}", wrong.join("\n"));
}

/// doc/architecture.md's layout names every file of `src/` and `lisp/`
/// (a directory of `src/` by its name and slash), and every module in
/// its layers diagram.
#[test]
fn the_documented_layout_matches_the_tree() {
    let root = Path::new(env!("CARGO_MANIFEST_DIR"));
    let doc = std::fs::read_to_string(root.join("doc/architecture.md")).unwrap();
    let layout = &doc[doc.find("## Layout").expect("doc/architecture.md has a Layout section")..];
    let words: BTreeSet<&str> = layout.split(|c: char| c.is_whitespace() || c == ',' || c == ';').collect();
    let mut missing = Vec::new();
    for dir in ["src", "src/bin", "lisp"] {
        for entry in std::fs::read_dir(root.join(dir)).unwrap() {
            let entry = entry.unwrap();
            let name = entry.file_name().to_string_lossy().into_owned();
            let shown = if entry.file_type().unwrap().is_dir() {
                format!("{}{name}/", if dir == "src/bin" { "bin/" } else { "" })
            } else if dir == "src/bin" {
                format!("bin/{name}")
            } else if name.ends_with(".rs") || name.ends_with(".el") || name.ends_with(".json") {
                name.clone()
            } else {
                continue; // built files: the module and the program
            };
            if dir == "src" && name == "bin" {
                continue;
            }
            if !words.contains(shown.as_str()) {
                missing.push(format!("  {dir}/{name} (as `{shown}`)"));
            }
        }
    }
    let diagram = &doc[doc.find("## Layers").unwrap()..doc.find("## Layout").unwrap()];
    for (_, ms) in LAYERS {
        for m in *ms {
            if *m != "lib" && !diagram.contains(m) {
                missing.push(format!("  module {m} in the layers diagram"));
            }
        }
    }
    assert!(missing.is_empty(), "doc/architecture.md does not show:\n{}", missing.join("\n"));
}
