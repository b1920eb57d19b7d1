//! The module path a user gives, checked, and the names derived from it:
//! tool keys and names, the folder, and the generated types.

use std::fmt;

/// The longest tool name every provider accepts.
const MAX_TOOL_NAME: usize = 64;

/// The longest operation a tool name ends with (`_create`, `_delete`, `_update`).
const LONGEST_OPERATION: &str = "_create";

/// Strict, reserved and edition keywords: none can name a module without `r#`.
const KEYWORDS: &[&str] = &[
    "abstract", "as", "async", "await", "become", "box", "break", "const", "continue", "crate",
    "do", "dyn", "else", "enum", "extern", "false", "final", "fn", "for", "gen", "if", "impl",
    "in", "let", "loop", "macro", "match", "mod", "move", "mut", "override", "priv", "pub", "ref",
    "return", "self", "static", "struct", "super", "trait", "true", "try", "type", "typeof",
    "unsafe", "unsized", "use", "virtual", "where", "while", "yield",
];

/// A module path inside the crate: `snake_case` segments joined by `::`,
/// such as `catalog::products`.
#[derive(Debug, Clone, PartialEq, Eq)]
pub(crate) struct ModulePath {
    segments: Vec<String>,
}

impl ModulePath {
    /// Checks `text` (a leading `crate::` is allowed) and names every bad
    /// segment at once.
    pub(crate) fn parse(text: &str) -> Result<ModulePath, String> {
        let path = text.strip_prefix("crate::").unwrap_or(text);
        if path.trim().is_empty() {
            return Err(format!(
                "`{text}` is not a module path: give one such as `catalog::products`"
            ));
        }
        let segments: Vec<&str> = path.split("::").collect();
        let problems: Vec<String> = segments.iter().filter_map(|s| problem(s)).collect();
        if !problems.is_empty() {
            return Err(format!(
                "`{text}` is not a module path (snake_case names joined by `::`, such as `catalog::products`): {}",
                problems.join("; ")
            ));
        }
        let path = ModulePath {
            segments: segments.into_iter().map(String::from).collect(),
        };
        let longest = format!("{}{LONGEST_OPERATION}", path.tool_name_prefix());
        if longest.len() > MAX_TOOL_NAME {
            return Err(format!(
                "`{text}` makes tool names longer than {MAX_TOOL_NAME} characters (`{longest}`), which model APIs refuse: choose a shorter path"
            ));
        }
        Ok(path)
    }

    /// The segments, outermost first.
    pub(crate) fn segments(&self) -> &[String] {
        &self.segments
    }

    /// The innermost segment: the module's own name.
    pub(crate) fn leaf(&self) -> &str {
        self.segments.last().expect("a module path has a segment")
    }

    /// The tools' keys start with this: `catalog.products` (`products.get` …).
    pub(crate) fn key_prefix(&self) -> String {
        self.segments.join(".")
    }

    /// The tools' names start with this: the key with `_` for `.`, so
    /// that names are unique in the crate as keys are.
    pub(crate) fn tool_name_prefix(&self) -> String {
        self.segments.join("_")
    }
}

impl fmt::Display for ModulePath {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(&self.segments.join("::"))
    }
}

/// What is wrong with `segment` as a module name that is also a tool key's
/// segment (`[a-z][a-z0-9_]*`), if anything.
fn problem(segment: &str) -> Option<String> {
    if segment.is_empty() {
        return Some("a segment is empty (a `::` too many?)".into());
    }
    let mut chars = segment.chars();
    let starts_with_letter = chars.next().is_some_and(|c| c.is_ascii_lowercase());
    if !starts_with_letter
        || !chars.all(|c| c.is_ascii_lowercase() || c.is_ascii_digit() || c == '_')
    {
        let lowered = segment.to_ascii_lowercase();
        let hint = if lowered != segment && problem(&lowered).is_none() {
            format!(", such as `{lowered}`")
        } else {
            String::new()
        };
        return Some(format!(
            "`{segment}` is not a snake_case name (lowercase letters, digits and `_`, starting with a letter{hint})"
        ));
    }
    if KEYWORDS.contains(&segment) {
        return Some(format!("`{segment}` is a Rust keyword"));
    }
    None
}

/// The names the generated code uses, derived from the module's name.
#[derive(Debug, Clone, PartialEq, Eq)]
pub(crate) struct Names {
    /// What one record is called in prose: `product`.
    pub(crate) one: String,
    /// What the module holds, in prose: `products`.
    pub(crate) many: String,
    /// The record type: `Product`.
    pub(crate) record: String,
    /// The service trait: `ProductService`.
    pub(crate) service: String,
    /// The service's error: `ProductError`.
    pub(crate) error: String,
    /// The in-memory service: `InMemoryProducts`.
    pub(crate) store: String,
    /// The injected service's parameter: `products`.
    pub(crate) var: String,
}

/// Names the generated code declares, imports or takes from the prelude:
/// a derived type may not be one of them.
const TAKEN_TYPES: &[&str] = &[
    "Arc",
    "AsMut",
    "AsRef",
    "BTreeMap",
    "Box",
    "BoxError",
    "BoxFuture",
    "CallError",
    "Caller",
    "Catalog",
    "Clone",
    "Container",
    "Copy",
    "CreateArgs",
    "Default",
    "DeleteArgs",
    "Drop",
    "Eq",
    "Err",
    "Executor",
    "Extend",
    "Fn",
    "FnMut",
    "FnOnce",
    "From",
    "FromIterator",
    "Future",
    "GetArgs",
    "HookKind",
    "Inject",
    "Into",
    "IntoFuture",
    "IntoIterator",
    "Invocation",
    "Iterator",
    "ListArgs",
    "McpServer",
    "Mutex",
    "MutexGuard",
    "None",
    "NotConfigured",
    "Ok",
    "Option",
    "Ord",
    "PartialEq",
    "PartialOrd",
    "PoisonError",
    "Result",
    "RunArgs",
    "Send",
    "Sized",
    "Some",
    "String",
    "Sync",
    "ToOwned",
    "ToString",
    "TryFrom",
    "TryInto",
    "Unpin",
    "UpdateArgs",
    "Vec",
];

/// Locals and parameters of the generated code: the injected service's
/// parameter is `service` rather than one of them.
const TAKEN_VARS: &[&str] = &[
    "call",
    "caller",
    "catalog",
    "container",
    "create",
    "delete",
    "each",
    "error",
    "executor",
    "first",
    "get",
    "held",
    "id",
    "input",
    "list",
    "locked",
    "message",
    "name",
    "records",
    "run",
    "server",
    "update",
    "with",
];

impl Names {
    /// The names for `path`: a module of records (`--read`, `--write`,
    /// `--crud`) names its record in the singular; a plain module names
    /// its service after itself.
    pub(crate) fn of(path: &ModulePath, records: bool) -> Names {
        let leaf = path.leaf();
        let singular = if records {
            singular(leaf)
        } else {
            leaf.to_owned()
        };
        let mut base = camel(&singular);
        let derived = |base: &str| {
            [
                base.to_owned(),
                format!("{base}Service"),
                format!("{base}Error"),
            ]
        };
        if derived(&base)
            .iter()
            .any(|name| TAKEN_TYPES.contains(&name.as_str()))
        {
            base.push_str("Item");
        }
        let var = if TAKEN_VARS.contains(&leaf) {
            "service".to_owned()
        } else {
            leaf.to_owned()
        };
        Names {
            one: words(&singular),
            many: words(leaf),
            record: base.clone(),
            service: format!("{base}Service"),
            error: format!("{base}Error"),
            store: format!("InMemory{}", camel(leaf)),
            var,
        }
    }
}

/// `order_lines` → `OrderLines`.
fn camel(snake: &str) -> String {
    snake
        .split('_')
        .filter(|word| !word.is_empty())
        .map(|word| word[..1].to_ascii_uppercase() + &word[1..])
        .collect()
}

/// `order_lines` → `order lines`.
fn words(snake: &str) -> String {
    let words: Vec<&str> = snake.split('_').filter(|word| !word.is_empty()).collect();
    words.join(" ")
}

/// The singular of an English plural, by its ending (`categories` →
/// `category`, `boxes` → `box`, `products` → `product`); a name that does
/// not look plural (`inventory`, `status`) stays as it is.
fn singular(plural: &str) -> String {
    let strip = |suffix: &str, with: &str| {
        plural
            .strip_suffix(suffix)
            .filter(|stem| stem.len() > 1)
            .map(|stem| format!("{stem}{with}"))
    };
    if let Some(stem) = strip("ies", "y") {
        return stem;
    }
    for ending in ["sses", "xes", "zes", "ches", "shes"] {
        if plural.ends_with(ending) {
            return plural[..plural.len() - 2].to_owned();
        }
    }
    if ["ss", "us", "is"]
        .iter()
        .any(|ending| plural.ends_with(ending))
    {
        return plural.to_owned();
    }
    strip("s", "").unwrap_or_else(|| plural.to_owned())
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn singulars_follow_the_ending() {
        for (plural, one) in [
            ("products", "product"),
            ("categories", "category"),
            ("addresses", "address"),
            ("boxes", "box"),
            ("batches", "batch"),
            ("status", "status"),
            ("inventory", "inventory"),
            ("order_lines", "order_line"),
            ("s", "s"),
        ] {
            assert_eq!(singular(plural), one, "{plural}");
        }
    }

    #[test]
    fn names_avoid_what_the_generated_code_already_names() {
        let names = Names::of(&ModulePath::parse("app::results").unwrap(), true);
        assert_eq!(names.record, "ResultItem");
        assert_eq!(names.service, "ResultItemService");
        let names = Names::of(&ModulePath::parse("calls").unwrap(), true);
        assert_eq!(names.error, "CallItemError");
        let names = Names::of(&ModulePath::parse("app::list").unwrap(), false);
        assert_eq!(names.var, "service");
    }

    #[test]
    fn every_bad_segment_is_named() {
        let error = ModulePath::parse("Catalog::type::").unwrap_err();
        assert!(
            error.contains("`Catalog` is not a snake_case name"),
            "{error}"
        );
        assert!(error.contains("such as `catalog`"), "{error}");
        assert!(error.contains("`type` is a Rust keyword"), "{error}");
        assert!(error.contains("a segment is empty"), "{error}");
    }
}
