//! The module tree keeps its shape: no source file imports in a circle (each file's `crate::`
//! and `super::` paths resolved to the file that defines them), and the README's layout
//! table explains every folder of this crate.

use std::collections::{BTreeMap, BTreeSet};
use std::fs;
use std::path::{Path, PathBuf};

fn source_root() -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR")).join("src")
}

/// Every `.rs` file under `dir`, as module paths (`["ops", "ptf", "exec"]`; `[]` is lib.rs).
fn modules(dir: &Path, prefix: &[String], found: &mut BTreeMap<Vec<String>, PathBuf>) {
    for entry in fs::read_dir(dir).expect("the source folder is readable") {
        let path = entry.expect("a directory entry").path();
        let name = path.file_stem().unwrap().to_string_lossy().into_owned();
        if path.is_dir() {
            let mut inner = prefix.to_vec();
            inner.push(name);
            modules(&path, &inner, found);
        } else if path.extension().is_some_and(|e| e == "rs") {
            let mut module = prefix.to_vec();
            if name != "mod" && name != "lib" {
                module.push(name);
            }
            found.insert(module, path);
        }
    }
}

/// The code of a file without its comments and without its `#[cfg(test)]` part (whose
/// `super` means the file itself).
fn code(text: &str) -> String {
    let text = text.split("#[cfg(test)]").next().unwrap_or("");
    text.lines()
        .map(|line| match line.find("//") {
            Some(at) => &line[..at],
            None => line,
        })
        .collect::<Vec<_>>()
        .join("\n")
}

/// The paths a file names: every `crate::..` and `super::..` path, use trees expanded.
fn paths(code: &str) -> Vec<String> {
    let mut found = Vec::new();
    let bytes = code.as_bytes();
    let mut at = 0;
    while at < code.len() {
        let rest = &code[at..];
        let starts = ["crate::", "super::"].iter().any(|p| rest.starts_with(p))
            && (at == 0 || !(bytes[at - 1].is_ascii_alphanumeric() || bytes[at - 1] == b'_'));
        if !starts {
            at += rest.chars().next().map_or(1, char::len_utf8);
            continue;
        }
        let end = tree_end(rest);
        expand(&rest[..end], &mut found);
        at += end.max(1);
    }
    found
}

/// Where the path (or use tree) at the start of `text` ends.
fn tree_end(text: &str) -> usize {
    let mut depth = 0usize;
    for (i, c) in text.char_indices() {
        match c {
            '{' => depth += 1,
            '}' if depth == 0 => return i,
            '}' => depth -= 1,
            c if depth == 0 && !(c.is_alphanumeric() || c == '_' || c == ':') => return i,
            _ => {}
        }
    }
    text.len()
}

/// `a::{b, c::{d}}` into `a::b` and `a::c::d`.
fn expand(tree: &str, out: &mut Vec<String>) {
    let tree: String = tree.chars().filter(|c| !c.is_whitespace()).collect();
    let Some(open) = tree.find('{') else {
        out.push(tree.trim_end_matches(':').to_owned());
        return;
    };
    let prefix = &tree[..open];
    let inner = &tree[open + 1..tree.len().saturating_sub(1)];
    let mut depth = 0;
    let mut start = 0;
    let mut items = Vec::new();
    for (i, c) in inner.char_indices() {
        match c {
            '{' => depth += 1,
            '}' => depth -= 1,
            ',' if depth == 0 => {
                items.push(&inner[start..i]);
                start = i + 1;
            }
            _ => {}
        }
    }
    items.push(&inner[start..]);
    for item in items.into_iter().filter(|i| !i.is_empty()) {
        let item = if item == "self" { "" } else { item };
        expand(&format!("{prefix}{item}"), out);
    }
}

/// The module file a path names: the longest prefix of it that is a module.
fn resolve(
    path: &str,
    from: &[String],
    from_is_mod: bool,
    modules: &BTreeMap<Vec<String>, PathBuf>,
) -> Option<Vec<String>> {
    let mut segments = path.split("::").filter(|s| !s.is_empty());
    let mut module: Vec<String> = match segments.next()? {
        "crate" => Vec::new(),
        "super" => {
            // A file's `super` is its parent module; a mod.rs's is the folder's parent.
            let mut parent = from.to_vec();
            parent.pop();
            if from_is_mod {
                parent.pop();
            }
            parent
        }
        _ => return None,
    };
    for segment in segments {
        if segment == "super" {
            module.pop();
            continue;
        }
        let mut next = module.clone();
        next.push(segment.to_owned());
        if !modules.contains_key(&next) {
            break;
        }
        module = next;
    }
    Some(module)
}

#[test]
fn no_source_file_imports_in_a_circle() {
    let root = source_root();
    let mut found = BTreeMap::new();
    modules(&root, &[], &mut found);
    let mut edges: BTreeMap<Vec<String>, BTreeSet<Vec<String>>> = BTreeMap::new();
    for (module, file) in &found {
        let is_mod = file.file_name().is_some_and(|n| n == "mod.rs");
        let text = fs::read_to_string(file).expect("a readable source file");
        let targets = edges.entry(module.clone()).or_default();
        for path in paths(&code(&text)) {
            // A file's ancestors declare it: naming them is not an import.
            if let Some(target) = resolve(&path, module, is_mod, &found)
                && !module.starts_with(&target)
            {
                targets.insert(target);
            }
        }
    }
    // Depth-first search; a back edge closes a circle.
    fn visit(
        node: &Vec<String>,
        edges: &BTreeMap<Vec<String>, BTreeSet<Vec<String>>>,
        state: &mut BTreeMap<Vec<String>, bool>,
        stack: &mut Vec<Vec<String>>,
    ) -> Option<Vec<Vec<String>>> {
        match state.get(node) {
            Some(true) => return None,
            Some(false) => {
                let start = stack.iter().position(|n| n == node).unwrap_or(0);
                let mut circle = stack[start..].to_vec();
                circle.push(node.clone());
                return Some(circle);
            }
            None => {}
        }
        state.insert(node.clone(), false);
        stack.push(node.clone());
        for next in edges.get(node).into_iter().flatten() {
            if let Some(circle) = visit(next, edges, state, stack) {
                return Some(circle);
            }
        }
        stack.pop();
        state.insert(node.clone(), true);
        None
    }
    let mut state = BTreeMap::new();
    for node in edges.keys() {
        if let Some(circle) = visit(node, &edges, &mut state, &mut Vec::new()) {
            let shown: Vec<String> = circle.iter().map(|m| m.join("::")).collect();
            panic!("modules import in a circle: {}", shown.join(" -> "));
        }
    }
    assert!(
        edges
            .get(&vec!["session".to_owned()])
            .is_some_and(|e| !e.is_empty()),
        "the import graph was read: the session module imports others"
    );
}

#[test]
fn the_readme_layout_explains_every_folder() {
    let readme = fs::read_to_string(Path::new(env!("CARGO_MANIFEST_DIR")).join("../README.md"))
        .expect("the workspace README");
    let mut folders = Vec::new();
    fn walk(dir: &Path, prefix: &str, folders: &mut Vec<String>) {
        for entry in fs::read_dir(dir).expect("a readable folder") {
            let path = entry.expect("a directory entry").path();
            if path.is_dir() {
                let name = format!("{prefix}{}/", path.file_name().unwrap().to_string_lossy());
                walk(&path, &name, folders);
                folders.push(name);
            }
        }
    }
    walk(&source_root(), "udf-runtime/src/", &mut folders);
    let missing: Vec<&String> = folders
        .iter()
        .filter(|folder| !readme.contains(&format!("| `{folder}` |")))
        .collect();
    assert!(
        missing.is_empty(),
        "the README's layout table has no row for {missing:?}"
    );
}

#[test]
fn use_trees_expand_to_paths() {
    let mut out = Vec::new();
    expand("crate::a::{b, c::{d, self}}", &mut out);
    assert_eq!(out, ["crate::a::b", "crate::a::c::d", "crate::a::c"]);
    assert_eq!(
        paths(&code(
            "use super::x::Y; let z = crate::p::q(1); // crate::ignored"
        )),
        ["super::x::Y", "crate::p::q"]
    );
}
