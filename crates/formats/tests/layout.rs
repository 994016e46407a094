//! The crate's layers, checked from its sources: the row interface imports no format, each
//! format imports only itself and the layers below it, a format's codec does not import its
//! own row adapter, only the registry names several formats, and the file-level import graph
//! has no circle (a module file's uses of its own submodules aside: that is composition).
//!
//! Imports are read from the text of `src/`: `crate::`, `super::` and child-module paths in
//! code (comments, strings and `#[cfg(test)]` modules left out), resolved to the source file
//! of the deepest module they name. A name a module re-exports (`pub use`) resolves to the
//! module that defines it, so a façade is not taken for a dependency.

use std::collections::{BTreeMap, BTreeSet};
use std::path::{Path, PathBuf};

/// A source file's module path (`["skiff", "rows", "block_scan"]`; `[]` for `lib.rs`).
type ModulePath = Vec<String>;

/// Where a module sits in the crate's layers.
#[derive(Clone, Debug, PartialEq, Eq, PartialOrd, Ord)]
enum Layer {
    /// Leaf helpers every layer shares (`varint`, `read_buffer`, `serde_error`, `byte_items`,
    /// `scalar_range`, `index_enum`, `row_size_hint`, `utf8`): they import nothing of the crate.
    Leaf,
    /// The binary YSON codec (`yson` outside `yson::rows`): what composite values are spelled in.
    YsonCodec,
    /// The row interface (`table`).
    Interface,
    /// A format's codec (its folder outside `rows/`), by format.
    Codec(String),
    /// A format's row adapter (`<format>::rows`), by format.
    Rows(String),
    /// The registry, and the crate root.
    Registry,
}

fn layer(module: &[String]) -> Layer {
    match module.first().map(String::as_str) {
        None | Some("registry") => Layer::Registry,
        Some("table") => Layer::Interface,
        Some(
            "varint" | "read_buffer" | "serde_error" | "byte_items" | "scalar_range" | "index_enum"
            | "row_size_hint" | "utf8",
        ) => Layer::Leaf,
        Some(format) => {
            let rows = module.get(1).is_some_and(|m| m == "rows");
            match (format, rows) {
                ("yson", false) => Layer::YsonCodec,
                (_, true) => Layer::Rows(format.to_owned()),
                _ => Layer::Codec(format.to_owned()),
            }
        }
    }
}

/// Whether code in layer `from` may import from layer `to`.
fn allowed(from: &Layer, to: &Layer) -> bool {
    use Layer::*;
    let format_of = |l: &Layer| match l {
        Codec(f) | Rows(f) => Some(f.clone()),
        YsonCodec => Some("yson".to_owned()),
        _ => None,
    };
    match (from, to) {
        (_, Leaf) => true,
        (Leaf, _) => false,
        (_, YsonCodec) => true,
        (Registry, _) => true,
        (_, Registry) => false,
        (YsonCodec, _) => false,
        (Interface, Interface) => true,
        (Interface, _) => false,
        (Codec(_) | Rows(_), Interface) => true,
        // MessagePack and CBOR share the tree codec, which is theirs alone.
        (Codec(f) | Rows(f), Codec(t) | Rows(t)) if t == "tree" => {
            f == "msgpack" || f == "cbor" || f == "tree"
        }
        // A codec never reaches into its own row adapter.
        (Codec(_), Rows(_)) => false,
        (Codec(f), Codec(t)) => f == t,
        (Rows(f), _) => format_of(to) == Some(f.clone()),
    }
}

/// The crate's code with comments, string and char literals blanked out.
fn code_only(text: &str) -> String {
    let chars: Vec<char> = text.chars().collect();
    let mut out = String::with_capacity(text.len());
    let mut i = 0;
    while i < chars.len() {
        let c = chars[i];
        let next = chars.get(i + 1).copied();
        if c == '/' && next == Some('/') {
            while i < chars.len() && chars[i] != '\n' {
                i += 1;
            }
        } else if c == '/' && next == Some('*') {
            let mut depth = 0;
            while i < chars.len() {
                if chars[i] == '/' && chars.get(i + 1) == Some(&'*') {
                    depth += 1;
                    i += 2;
                } else if chars[i] == '*' && chars.get(i + 1) == Some(&'/') {
                    depth -= 1;
                    i += 2;
                    if depth == 0 {
                        break;
                    }
                } else {
                    i += 1;
                }
            }
            out.push(' ');
        } else if c == 'r' && (next == Some('#') || next == Some('"')) && !prev_is_ident(&chars, i)
        {
            // A raw string: r"..." or r#"..."#.
            let mut hashes = 0;
            let mut j = i + 1;
            while chars.get(j) == Some(&'#') {
                hashes += 1;
                j += 1;
            }
            if chars.get(j) != Some(&'"') {
                out.push(c);
                i += 1;
                continue;
            }
            j += 1;
            'raw: while j < chars.len() {
                if chars[j] == '"' && (0..hashes).all(|k| chars.get(j + 1 + k) == Some(&'#')) {
                    j += 1 + hashes;
                    break 'raw;
                }
                j += 1;
            }
            out.push_str("\"\"");
            i = j;
        } else if c == '"' {
            i += 1;
            while i < chars.len() && chars[i] != '"' {
                i += if chars[i] == '\\' { 2 } else { 1 };
            }
            i += 1;
            out.push_str("\"\"");
        } else if c == '\'' {
            // A char literal ('x', '\n', '\u{..}'), or a lifetime ('a), which is kept.
            if next == Some('\\') {
                let mut j = i + 2;
                while j < chars.len() && chars[j] != '\'' {
                    j += 1;
                }
                i = j + 1;
                out.push_str("' '");
            } else if chars.get(i + 2) == Some(&'\'') {
                i += 3;
                out.push_str("' '");
            } else {
                out.push(c);
                i += 1;
            }
        } else {
            out.push(c);
            i += 1;
        }
    }
    out
}

fn prev_is_ident(chars: &[char], i: usize) -> bool {
    i > 0 && (chars[i - 1].is_alphanumeric() || chars[i - 1] == '_')
}

/// `code` without the bodies of `#[cfg(test)]` modules.
fn without_test_modules(code: &str) -> String {
    let mut out = String::new();
    let mut rest = code;
    while let Some(at) = rest.find("#[cfg(test)]") {
        out.push_str(&rest[..at]);
        let after = &rest[at + "#[cfg(test)]".len()..];
        let trimmed = after.trim_start();
        let is_inline_mod = trimmed.starts_with("mod ")
            && trimmed
                .find(['{', ';'])
                .is_some_and(|p| trimmed.as_bytes()[p] == b'{');
        if !is_inline_mod {
            rest = after;
            continue;
        }
        let open = after.find('{').expect("checked above");
        let mut depth = 0;
        let mut end = after.len();
        for (p, b) in after.bytes().enumerate().skip(open) {
            match b {
                b'{' => depth += 1,
                b'}' => {
                    depth -= 1;
                    if depth == 0 {
                        end = p + 1;
                        break;
                    }
                }
                _ => {}
            }
        }
        rest = &after[end..];
    }
    out.push_str(rest);
    out
}

/// Every path the code names: `crate::a::b`, `super::a`, and the paths of `use` trees (their
/// brace groups expanded), as segments.
fn named_paths(code: &str) -> Vec<Vec<String>> {
    let mut paths = Vec::new();
    // `use` declarations, whole (they may span lines).
    let mut rest = code;
    while let Some(at) = find_word(rest, "use") {
        let tail = &rest[at + 3..];
        let end = tail.find(';').unwrap_or(tail.len());
        // A re-export (`pub use`, `pub(crate) use`) is a façade, not a dependency of code.
        let before = rest[..at].trim_end();
        if !(before.ends_with("pub") || before.ends_with(')')) {
            expand_use_tree("", &compact_use_tree(&tail[..end]), &mut paths);
        }
        rest = &tail[end..];
    }
    // Paths in expressions and types.
    for start in ["crate::", "super::"] {
        let mut from = 0;
        while let Some(at) = code[from..].find(start) {
            let begin = from + at;
            from = begin + start.len();
            if begin > 0 {
                let before = code.as_bytes()[begin - 1];
                if before.is_ascii_alphanumeric() || before == b'_' || before == b':' {
                    continue;
                }
            }
            let path: String = code[begin..]
                .chars()
                .take_while(|c| c.is_alphanumeric() || *c == '_' || *c == ':')
                .collect();
            paths.push(split_path(&path));
        }
    }
    paths
}

fn find_word(text: &str, word: &str) -> Option<usize> {
    let bytes = text.as_bytes();
    let mut from = 0;
    while let Some(at) = text[from..].find(word) {
        let p = from + at;
        let before_ok = p == 0 || !(bytes[p - 1].is_ascii_alphanumeric() || bytes[p - 1] == b'_');
        let after = bytes.get(p + word.len()).copied().unwrap_or(b' ');
        if before_ok && after.is_ascii_whitespace() {
            return Some(p);
        }
        from = p + word.len();
    }
    None
}

/// A `use` tree without white space and renames (`a::{B as C}` becomes `a::{B}`).
fn compact_use_tree(tree: &str) -> String {
    let words: Vec<&str> = tree.split_whitespace().collect();
    let mut out = String::new();
    let mut i = 0;
    while i < words.len() {
        if words[i] == "as" {
            // Drop the new name, keep what follows it (`,` or `}`).
            let renamed = words.get(i + 1).copied().unwrap_or("");
            out.extend(
                renamed
                    .chars()
                    .skip_while(|c| c.is_alphanumeric() || *c == '_'),
            );
            i += 2;
        } else {
            out.push_str(words[i]);
            i += 1;
        }
    }
    out
}

fn split_path(path: &str) -> Vec<String> {
    path.split("::")
        .filter(|s| !s.is_empty())
        .map(str::to_owned)
        .collect()
}

/// Expands `a::{b, c::{d, e}}` (no white space) into `a::b`, `a::c::d`, `a::c::e`.
fn expand_use_tree(prefix: &str, tree: &str, out: &mut Vec<Vec<String>>) {
    match tree.find('{') {
        None => {
            out.push(split_path(&format!("{prefix}{tree}")));
        }
        Some(open) => {
            let head = &tree[..open];
            let close = tree.rfind('}').unwrap_or(tree.len());
            let inner = &tree[open + 1..close];
            let mut depth = 0;
            let mut start = 0;
            for (p, c) in inner.char_indices() {
                match c {
                    '{' => depth += 1,
                    '}' => depth -= 1,
                    ',' if depth == 0 => {
                        expand_item(prefix, head, &inner[start..p], out);
                        start = p + 1;
                    }
                    _ => {}
                }
            }
            expand_item(prefix, head, &inner[start..], out);
        }
    }
}

fn expand_item(prefix: &str, head: &str, item: &str, out: &mut Vec<Vec<String>>) {
    if item.is_empty() {
        return;
    }
    if item == "self" {
        out.push(split_path(&format!("{prefix}{head}")));
    } else {
        expand_use_tree(&format!("{prefix}{head}"), item, out);
    }
}

struct Crate {
    /// Module path of each source file.
    files: BTreeMap<ModulePath, PathBuf>,
}

impl Crate {
    fn read(src: &Path) -> Crate {
        let mut files = BTreeMap::new();
        let mut stack = vec![src.to_path_buf()];
        while let Some(dir) = stack.pop() {
            for entry in std::fs::read_dir(&dir).expect("src is readable") {
                let path = entry.expect("a directory entry").path();
                if path.is_dir() {
                    stack.push(path);
                    continue;
                }
                if path.extension().is_some_and(|e| e == "rs") {
                    files.insert(module_path(src, &path), path);
                }
            }
        }
        Crate { files }
    }

    /// The file of the deepest module `path` names, as seen from `module` (the file's module).
    fn resolve(&self, module: &[String], path: &[String]) -> Option<ModulePath> {
        let (mut base, rest): (ModulePath, &[String]) = match path.first().map(String::as_str) {
            Some("crate") => (Vec::new(), &path[1..]),
            Some("super") => {
                let mut base = module.to_vec();
                let mut rest = path;
                while rest.first().is_some_and(|s| s == "super") {
                    base.pop();
                    rest = &rest[1..];
                }
                (base, rest)
            }
            Some("self") => (module.to_vec(), &path[1..]),
            Some(first) => {
                // A child module of this one (`use parse::Json` in json/mod.rs).
                let mut child = module.to_vec();
                child.push(first.to_owned());
                if !self.files.contains_key(&child) {
                    return None;
                }
                (module.to_vec(), path)
            }
            None => return None,
        };
        for segment in rest {
            let mut deeper = base.clone();
            deeper.push(segment.clone());
            if self.files.contains_key(&deeper) {
                base = deeper;
            } else {
                // `segment` is an item of `base`; follow a re-export to where it is defined.
                return Some(self.reexport_origin(&base, segment).unwrap_or(base));
            }
        }
        Some(base)
    }

    /// The module that defines `name` when `module` only re-exports it (`pub use x::Name`).
    fn reexport_origin(&self, module: &[String], name: &str) -> Option<ModulePath> {
        let file = self.files.get(module)?;
        let code = code_only(&std::fs::read_to_string(file).ok()?);
        let mut rest = code.as_str();
        while let Some(at) = rest
            .find("pub use ")
            .or_else(|| rest.find("pub(crate) use "))
        {
            let tail = &rest[at..];
            let tail = &tail[tail.find("use ").expect("found above") + 4..];
            let end = tail.find(';').unwrap_or(tail.len());
            let mut paths = Vec::new();
            expand_use_tree("", &compact_use_tree(&tail[..end]), &mut paths);
            for path in paths {
                if path.last().is_some_and(|last| last == name) && path.len() > 1 {
                    if let Some(origin) = self.resolve(module, &path[..path.len() - 1]) {
                        if origin != module {
                            return Some(origin);
                        }
                    }
                }
            }
            rest = &tail[end..];
        }
        None
    }

    /// Per file, the other files it imports from.
    fn imports(&self) -> BTreeMap<ModulePath, BTreeSet<ModulePath>> {
        self.files
            .iter()
            .map(|(module, file)| {
                let text = std::fs::read_to_string(file).expect("a source file is readable");
                let code = without_test_modules(&code_only(&text));
                let targets = named_paths(&code)
                    .iter()
                    .filter_map(|path| self.resolve(module, path))
                    .filter(|target| target != module)
                    .collect();
                (module.clone(), targets)
            })
            .collect()
    }
}

fn module_path(src: &Path, file: &Path) -> ModulePath {
    let relative = file.strip_prefix(src).expect("a file under src");
    let mut parts: Vec<String> = relative
        .iter()
        .map(|p| p.to_string_lossy().into_owned())
        .collect();
    let last = parts.pop().expect("a file name");
    let stem = last.trim_end_matches(".rs");
    if stem != "mod" && stem != "lib" {
        parts.push(stem.to_owned());
    }
    parts
}

fn src() -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR")).join("src")
}

fn shown(module: &[String]) -> String {
    if module.is_empty() {
        "crate".to_owned()
    } else {
        module.join("::")
    }
}

#[test]
fn every_import_goes_to_its_own_layer_or_below() {
    let krate = Crate::read(&src());
    let mut wrong = Vec::new();
    for (module, targets) in krate.imports() {
        let from = layer(&module);
        for target in targets {
            let to = layer(&target);
            if from != to && !allowed(&from, &to) {
                wrong.push(format!(
                    "{} ({from:?}) imports {} ({to:?})",
                    shown(&module),
                    shown(&target)
                ));
            }
        }
    }
    assert!(
        wrong.is_empty(),
        "imports against the layering:\n{}",
        wrong.join("\n")
    );
}

#[test]
fn no_circle_among_source_files() {
    let krate = Crate::read(&src());
    // A module building on its own submodules is composition, not a dependency that could
    // close a circle: only edges that leave the module count.
    let graph: BTreeMap<ModulePath, BTreeSet<ModulePath>> = krate
        .imports()
        .into_iter()
        .map(|(module, targets)| {
            let leaving = targets
                .into_iter()
                .filter(|t| !t.starts_with(&module))
                .collect();
            (module, leaving)
        })
        .collect();
    // Depth-first search with colours; a grey node met again closes a circle.
    let mut colour: BTreeMap<&ModulePath, u8> = BTreeMap::new();
    let mut circles = Vec::new();
    fn visit<'g>(
        node: &'g ModulePath,
        graph: &'g BTreeMap<ModulePath, BTreeSet<ModulePath>>,
        colour: &mut BTreeMap<&'g ModulePath, u8>,
        stack: &mut Vec<&'g ModulePath>,
        circles: &mut Vec<String>,
    ) {
        colour.insert(node, 1);
        stack.push(node);
        for next in graph.get(node).into_iter().flatten() {
            match colour.get(next).copied().unwrap_or(0) {
                0 => visit(next, graph, colour, stack, circles),
                1 => {
                    let from = stack.iter().position(|m| *m == next).unwrap_or(0);
                    let cycle: Vec<String> = stack[from..].iter().map(|m| shown(m)).collect();
                    circles.push(format!("{} -> {}", cycle.join(" -> "), shown(next)));
                }
                _ => {}
            }
        }
        stack.pop();
        colour.insert(node, 2);
    }
    for node in graph.keys() {
        if colour.get(node).copied().unwrap_or(0) == 0 {
            visit(node, &graph, &mut colour, &mut Vec::new(), &mut circles);
        }
    }
    assert!(
        circles.is_empty(),
        "circles in the import graph:\n{}",
        circles.join("\n")
    );
}

#[test]
fn the_checker_sees_what_it_checks() {
    // A checker that resolves nothing passes every test: make sure it sees real edges.
    let krate = Crate::read(&src());
    let graph = krate.imports();
    let skiff_rows: ModulePath = vec!["skiff".into(), "rows".into()];
    let edges = &graph[&skiff_rows];
    assert!(edges.contains(&vec!["table".to_owned()]), "{edges:?}");
    assert!(
        edges.contains(&vec!["skiff".to_owned(), "reader".to_owned()]),
        "{edges:?}"
    );
    assert!(!allowed(&Layer::Interface, &Layer::Codec("skiff".into())));
    assert!(!allowed(
        &Layer::Codec("skiff".into()),
        &Layer::Rows("skiff".into())
    ));
    assert!(!allowed(
        &Layer::Rows("json".into()),
        &Layer::Codec("arrow".into())
    ));
    assert!(allowed(
        &Layer::Rows("cbor".into()),
        &Layer::Codec("tree".into())
    ));
    assert!(!allowed(
        &Layer::Rows("arrow".into()),
        &Layer::Codec("tree".into())
    ));
}
