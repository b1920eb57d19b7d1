//! The module's files, from the templates in `templates/`.
//!
//! A template is the Rust file it becomes, with `{{name}}` for a name
//! derived from the module path, and lines `{{#if flag}}`, `{{#else}}` and
//! `{{/if}}` around what only some modules have (`flag` may be `a|b`, `a&b`
//! or `!a`). Rendering is a pure function of the module path and the
//! options, so the same command writes the same bytes.

use std::cmp::Ordering;
use std::collections::BTreeMap;

use super::Kind;
use super::module_path::{ModulePath, Names};

/// rustfmt's default line width, which the generated code keeps to.
const MAX_WIDTH: usize = 100;

/// One generated file: its name in the module's folder, and its text.
#[derive(Debug)]
pub(crate) struct File {
    pub(crate) name: &'static str,
    pub(crate) text: String,
}

/// The files of `module`, in the order they are written and reported.
pub(crate) fn files(module: &ModulePath, kind: Kind, mcp: bool, command: &str) -> Vec<File> {
    let names = Names::of(module, kind != Kind::Plain);
    let values = values(module, &names, kind, command);
    let flags = flags(kind, mcp);
    let mut templates = vec![
        ("mod.rs", include_str!("templates/mod.rs.txt")),
        ("tools.rs", include_str!("templates/tools.rs.txt")),
        ("hooks.rs", include_str!("templates/hooks.rs.txt")),
        ("tests.rs", include_str!("templates/tests.rs.txt")),
    ];
    if mcp {
        templates.push(("mcp.rs", include_str!("templates/mcp.rs.txt")));
    }
    templates
        .into_iter()
        .map(|(name, template)| File {
            name,
            text: layout(&render(template, &values, &flags)),
        })
        .collect()
}

/// What each `{{name}}` stands for.
fn values(
    module: &ModulePath,
    names: &Names,
    kind: Kind,
    command: &str,
) -> BTreeMap<&'static str, String> {
    let mut tests_imports = vec!["MODULE", &names.service, &names.store];
    if kind != Kind::Plain {
        tests_imports.push(&names.record);
    }
    if matches!(kind, Kind::Write | Kind::Crud) {
        tests_imports.push(&names.error);
    }
    let mut values = BTreeMap::from([
        ("command", command.to_owned()),
        ("leaf", module.leaf().to_owned()),
        ("key", module.key_prefix()),
        ("name", module.tool_name_prefix()),
        ("one", names.one.clone()),
        ("many", names.many.clone()),
        ("Many", capitalized(&names.many)),
        ("Service", names.service.clone()),
        ("Error", names.error.clone()),
        ("Store", names.store.clone()),
        ("var", names.var.clone()),
        ("tests_imports", sorted_list(tests_imports)),
        ("mcp_imports", sorted_list(vec!["MODULE", &names.service])),
    ]);
    if kind != Kind::Plain {
        values.insert("Record", names.record.clone());
    }
    values
}

/// Which `{{#if flag}}` sections a module of `kind` has.
fn flags(kind: Kind, mcp: bool) -> Vec<&'static str> {
    let (kind_flag, operations): (_, &[_]) = match kind {
        Kind::Read => ("read", &["get", "list"]),
        Kind::Write => ("write", &["create", "get"]),
        Kind::Crud => ("crud", &["create", "delete", "get", "list", "update"]),
        Kind::Plain => ("plain", &["run"]),
    };
    let mut flags = vec![kind_flag];
    flags.extend_from_slice(operations);
    if kind == Kind::Plain {
        flags.push("writes");
    } else {
        flags.push("records");
        if kind != Kind::Read {
            flags.push("writes");
        }
    }
    if mcp {
        flags.push("mcp");
    }
    flags
}

/// `order lines` → `Order lines`.
fn capitalized(words: &str) -> String {
    words[..1].to_ascii_uppercase() + &words[1..]
}

/// `names` as rustfmt orders a `use` list: `{InMemoryProducts, MODULE, Product}`.
fn sorted_list(mut names: Vec<&str>) -> String {
    names.sort_by(|a, b| version_order(a, b));
    names.join(", ")
}

/// rustfmt's "version sorting" of identifiers: character by character,
/// `_` before digits before letters, letters by code point (so upper case
/// before lower), and a run of digits by its number.
fn version_order(a: &str, b: &str) -> Ordering {
    let rank = |c: char| match c {
        '_' => 0,
        '0'..='9' => 1,
        _ => 2,
    };
    let (mut a, mut b) = (a, b);
    loop {
        let (Some(x), Some(y)) = (a.chars().next(), b.chars().next()) else {
            return a.len().cmp(&b.len());
        };
        if x.is_ascii_digit() && y.is_ascii_digit() {
            let digits = |s: &str| s.find(|c: char| !c.is_ascii_digit()).unwrap_or(s.len());
            let (m, n) = (digits(a), digits(b));
            let number = |s: &str| s.trim_start_matches('0').len();
            let order = number(&a[..m]).cmp(&number(&b[..n])).then_with(|| {
                a[..m]
                    .trim_start_matches('0')
                    .cmp(b[..n].trim_start_matches('0'))
            });
            if order != Ordering::Equal {
                return order;
            }
            (a, b) = (&a[m..], &b[n..]);
            continue;
        }
        let order = rank(x).cmp(&rank(y)).then(x.cmp(&y));
        if order != Ordering::Equal {
            return order;
        }
        (a, b) = (&a[x.len_utf8()..], &b[y.len_utf8()..]);
    }
}

/// `template` with its sections chosen by `flags` and its names filled in.
///
/// Panics on a template mistake (an unknown name, an unclosed section),
/// which the tests of every kind would meet first.
fn render(template: &str, values: &BTreeMap<&'static str, String>, flags: &[&str]) -> String {
    // One entry per open section: whether its lines are kept.
    let mut open: Vec<bool> = Vec::new();
    let mut out = String::with_capacity(template.len());
    for line in template.lines() {
        let directive = line.trim();
        if let Some(condition) = directive
            .strip_prefix("{{#if ")
            .and_then(|rest| rest.strip_suffix("}}"))
        {
            open.push(holds(condition, flags));
        } else if directive == "{{#else}}" {
            let branch = open.last_mut().expect("`{{#else}}` outside a section");
            *branch = !*branch;
        } else if directive == "{{/if}}" {
            open.pop().expect("`{{/if}}` without `{{#if}}`");
        } else if open.iter().all(|kept| *kept) {
            out.push_str(&fill(line, values));
            out.push('\n');
        }
    }
    assert!(open.is_empty(), "a template leaves a section open");
    out
}

/// Whether `condition` (`a`, `!a`, `a|b`, `a&b`) holds for `flags`.
fn holds(condition: &str, flags: &[&str]) -> bool {
    if let Some(flag) = condition.strip_prefix('!') {
        return !flags.contains(&flag);
    }
    if condition.contains('&') {
        return condition.split('&').all(|flag| flags.contains(&flag));
    }
    condition.split('|').any(|flag| flags.contains(&flag))
}

/// `line` with each `{{name}}` replaced; other braces (`{{{Error}}` is a
/// brace, then a name) stay.
fn fill(line: &str, values: &BTreeMap<&'static str, String>) -> String {
    let mut out = String::with_capacity(line.len());
    let mut rest = line;
    while let Some(at) = rest.find("{{") {
        let after = &rest[at + 2..];
        let name_len = after
            .find(|c: char| !(c.is_ascii_alphanumeric() || c == '_'))
            .unwrap_or(after.len());
        if name_len > 0 && after[name_len..].starts_with("}}") {
            let name = &after[..name_len];
            let value = values
                .get(name)
                .unwrap_or_else(|| panic!("a template names `{{{{{name}}}}}`, which has no value"));
            out.push_str(&rest[..at]);
            out.push_str(value);
            rest = &after[name_len + 2..];
        } else {
            out.push_str(&rest[..=at]);
            rest = &rest[at + 1..];
        }
    }
    out.push_str(rest);
    out
}

/// `text` with each line too wide broken as rustfmt breaks it: a `fn`
/// signature's parameters one per line, a `use` list filled onto indented
/// lines. Names derived from a long module path make such lines.
fn layout(text: &str) -> String {
    let mut out = String::with_capacity(text.len());
    for line in text.lines() {
        if line.len() <= MAX_WIDTH || line.trim_start().starts_with("//") {
            out.push_str(line);
        } else if let Some(broken) = break_signature(line).or_else(|| break_use_list(line)) {
            out.push_str(&broken);
        } else {
            out.push_str(line);
        }
        out.push('\n');
    }
    out
}

/// `fn f(a: A, b: B) -> R {` as
/// `fn f(\n    a: A,\n    b: B,\n) -> R {`, at the line's indentation.
fn break_signature(line: &str) -> Option<String> {
    let indent = &line[..line.len() - line.trim_start().len()];
    if !line.contains("fn ") {
        return None;
    }
    let open = line.find('(')?;
    let close = matching_paren(line, open)?;
    let params = split_top_level(&line[open + 1..close]);
    let mut out = format!("{}(\n", &line[..open]);
    for param in params {
        out.push_str(&format!("{indent}    {param},\n"));
    }
    out.push_str(&format!("{indent}{}", &line[close..]));
    Some(out)
}

/// The index of the `)` closing the `(` at `open`.
fn matching_paren(line: &str, open: usize) -> Option<usize> {
    let mut depth = 0usize;
    for (at, c) in line.char_indices().skip_while(|(at, _)| *at < open) {
        match c {
            '(' => depth += 1,
            ')' => {
                depth -= 1;
                if depth == 0 {
                    return Some(at);
                }
            }
            _ => {}
        }
    }
    None
}

/// `a: A, b: B<C, D>` → `["a: A", "b: B<C, D>"]`.
fn split_top_level(params: &str) -> Vec<&str> {
    let mut parts = Vec::new();
    let (mut depth, mut start) = (0i32, 0);
    for (at, c) in params.char_indices() {
        match c {
            '(' | '<' | '[' => depth += 1,
            ')' | '>' | ']' => depth -= 1,
            ',' if depth == 0 => {
                parts.push(params[start..at].trim());
                start = at + 1;
            }
            _ => {}
        }
    }
    parts.push(params[start..].trim());
    parts.retain(|part| !part.is_empty());
    parts
}

/// `use a::{X, Y};` as `use a::{\n    X, Y,\n};`, the names filling lines.
fn break_use_list(line: &str) -> Option<String> {
    let list = line.strip_prefix("use ")?.strip_suffix("};")?;
    let (path, names) = list.split_once('{')?;
    let mut out = format!("use {path}{{\n");
    let mut current = String::from("   ");
    for name in names.split(", ") {
        if current.len() + 1 + name.len() + 1 > MAX_WIDTH {
            out.push_str(&current);
            out.push('\n');
            current = String::from("   ");
        }
        current.push(' ');
        current.push_str(name);
        current.push(',');
    }
    out.push_str(&current);
    out.push_str("\n};");
    Some(out)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn use_lists_are_in_rustfmt_order() {
        let names = vec![
            "MODULE",
            "Item10",
            "Address",
            "InMemoryAddresses",
            "Item2",
            "Mo",
        ];
        assert_eq!(
            sorted_list(names),
            "Address, InMemoryAddresses, Item2, Item10, MODULE, Mo"
        );
    }

    #[test]
    fn sections_nest_and_names_fill_in() {
        let values = BTreeMap::from([("Error", "E".to_owned())]);
        let template = "{{#if a}}\nuse super::{{{Error}}, X};\n{{#if !b}}\nno b\n{{#else}}\nb\n{{/if}}\n{{/if}}\n";
        assert_eq!(
            render(template, &values, &["a"]),
            "use super::{E, X};\nno b\n"
        );
        assert_eq!(
            render(template, &values, &["a", "b"]),
            "use super::{E, X};\nb\n"
        );
        assert_eq!(render(template, &values, &["b"]), "");
    }

    #[test]
    fn wide_signatures_take_a_line_per_parameter() {
        let line = format!(
            "    fn update(&self, id: u64, name: String) -> Result<{}, E> {{",
            "X".repeat(60)
        );
        let broken = layout(&line);
        assert_eq!(
            broken,
            format!(
                "    fn update(\n        &self,\n        id: u64,\n        name: String,\n    ) -> Result<{}, E> {{\n",
                "X".repeat(60)
            )
        );
    }
}
