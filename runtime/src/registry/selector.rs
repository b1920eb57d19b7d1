//! Which tools a change or a view applies to.

use std::fmt;
use std::ops::Not;

use serde::{Deserialize, Serialize};

use crate::catalog::ToolEntry;
use crate::effect::Effect;

/// Picks tools by what they declare: name, key, namespace, tags, effect,
/// and any combination of those.
///
/// Used to switch tools on and off ([`Registry::disable`](crate::registry::Registry::disable))
/// and to narrow what a caller sees and may call ([`View`](crate::registry::View)).
/// It serializes, so it can be kept in configuration.
///
/// ```
/// use toolwright::{tool, Catalog, Effect, registry::Selector};
///
/// /// Look up an order.
/// #[tool(key = "orders.get", effect = read, authorize = public)]
/// async fn get_order(id: u64) -> u64 { id }
///
/// /// Look up a product.
/// #[tool(key = "products.get", effect = read, authorize = public)]
/// async fn get_product(id: u64) -> u64 { id }
///
/// let catalog = Catalog::builder()
///     .register::<GetOrderArgs>()
///     .register::<GetProductArgs>()
///     .build()
///     .unwrap();
/// let orders = Selector::namespace("orders");
/// let picked: Vec<_> = catalog.iter().filter(|t| orders.matches(t)).map(|t| t.name()).collect();
/// assert_eq!(picked, ["get_order"]);
///
/// // Everything read-only outside the orders namespace.
/// let others = Selector::effect(Effect::Read).and(!Selector::namespace("orders"));
/// assert!(others.matches(catalog.get("get_product").unwrap()));
/// assert_eq!(others.to_string(), "(effect read and not namespace orders)");
/// ```
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
#[non_exhaustive]
pub enum Selector {
    /// Every tool.
    All,
    /// The tool with this caller-facing name.
    Name(String),
    /// The tool with this key.
    Key(String),
    /// Tools whose key is this dot-separated prefix or starts with it and a
    /// dot: `orders` picks `orders.get` and `orders.items.add`, not `ordersx.get`.
    Namespace(String),
    /// Tools with at least one of these tags.
    AnyTag(Vec<String>),
    /// Tools with all of these tags.
    AllTags(Vec<String>),
    /// Tools that declare this effect.
    Effect(Effect),
    /// Tools that declare `open_world` (they reach outside the application).
    OpenWorld,
    /// Tools every selector picks.
    And(Vec<Selector>),
    /// Tools any selector picks.
    Or(Vec<Selector>),
    /// Tools the selector does not pick.
    Not(Box<Selector>),
}

impl Selector {
    /// The tool called `name`.
    ///
    /// ```
    /// use toolwright::registry::Selector;
    /// assert_eq!(Selector::name("add").to_string(), "name add");
    /// ```
    pub fn name(name: impl Into<String>) -> Self {
        Selector::Name(name.into())
    }

    /// The tool whose key is `key`.
    ///
    /// ```
    /// use toolwright::registry::Selector;
    /// assert_eq!(Selector::key("math.add").to_string(), "key math.add");
    /// ```
    pub fn key(key: impl Into<String>) -> Self {
        Selector::Key(key.into())
    }

    /// Tools whose key lies in `namespace` (whole dot segments).
    ///
    /// ```
    /// use toolwright::registry::Selector;
    /// assert_eq!(Selector::namespace("orders").to_string(), "namespace orders");
    /// ```
    pub fn namespace(namespace: impl Into<String>) -> Self {
        Selector::Namespace(namespace.into())
    }

    /// Tools tagged `tag`.
    ///
    /// ```
    /// use toolwright::registry::Selector;
    /// assert_eq!(Selector::tag("pii"), Selector::any_tag(["pii"]));
    /// ```
    pub fn tag(tag: impl Into<String>) -> Self {
        Selector::AnyTag(vec![tag.into()])
    }

    /// Tools with at least one of `tags`.
    ///
    /// ```
    /// use toolwright::registry::Selector;
    /// assert_eq!(Selector::any_tag(["pii", "network"]).to_string(), "any tag of [pii, network]");
    /// ```
    pub fn any_tag<I: IntoIterator<Item = S>, S: Into<String>>(tags: I) -> Self {
        Selector::AnyTag(tags.into_iter().map(Into::into).collect())
    }

    /// Tools with every one of `tags`.
    ///
    /// ```
    /// use toolwright::registry::Selector;
    /// assert_eq!(Selector::all_tags(["pii", "network"]).to_string(), "all tags of [pii, network]");
    /// ```
    pub fn all_tags<I: IntoIterator<Item = S>, S: Into<String>>(tags: I) -> Self {
        Selector::AllTags(tags.into_iter().map(Into::into).collect())
    }

    /// Tools that declare `effect`.
    ///
    /// ```
    /// use toolwright::{Effect, registry::Selector};
    /// assert_eq!(Selector::effect(Effect::Destructive).to_string(), "effect destructive");
    /// ```
    pub fn effect(effect: Effect) -> Self {
        Selector::Effect(effect)
    }

    /// Tools both `self` and `other` pick.
    ///
    /// ```
    /// use toolwright::{Effect, registry::Selector};
    /// let risky = Selector::tag("network").and(Selector::effect(Effect::Write));
    /// assert_eq!(risky.to_string(), "(any tag of [network] and effect write)");
    /// ```
    pub fn and(self, other: Selector) -> Self {
        match self {
            Selector::And(mut all) => {
                all.push(other);
                Selector::And(all)
            }
            first => Selector::And(vec![first, other]),
        }
    }

    /// Tools `self` or `other` picks.
    ///
    /// ```
    /// use toolwright::registry::Selector;
    /// let either = Selector::name("add").or(Selector::name("sub"));
    /// assert_eq!(either.to_string(), "(name add or name sub)");
    /// ```
    pub fn or(self, other: Selector) -> Self {
        match self {
            Selector::Or(mut any) => {
                any.push(other);
                Selector::Or(any)
            }
            first => Selector::Or(vec![first, other]),
        }
    }

    /// Whether this selector picks `tool`.
    ///
    /// ```
    /// use toolwright::{tool, Catalog, registry::Selector};
    ///
    /// /// Add two numbers.
    /// #[tool(key = "math.add", effect = read, authorize = public)]
    /// async fn add(a: i64, b: i64) -> i64 { a + b }
    ///
    /// let catalog = Catalog::builder().register::<AddArgs>().build().unwrap();
    /// let add = catalog.get("add").unwrap();
    /// assert!(Selector::namespace("math").matches(add));
    /// assert!(!Selector::namespace("mat").matches(add));
    /// ```
    pub fn matches(&self, tool: &ToolEntry) -> bool {
        match self {
            Selector::All => true,
            Selector::Name(name) => tool.name() == name,
            Selector::Key(key) => tool.key() == key,
            Selector::Namespace(namespace) => in_namespace(tool.key(), namespace),
            Selector::AnyTag(tags) => tags.iter().any(|t| tool.tags().contains(&t.as_str())),
            Selector::AllTags(tags) => tags.iter().all(|t| tool.tags().contains(&t.as_str())),
            Selector::Effect(effect) => tool.effect() == *effect,
            Selector::OpenWorld => tool.open_world(),
            Selector::And(all) => all.iter().all(|s| s.matches(tool)),
            Selector::Or(any) => any.iter().any(|s| s.matches(tool)),
            Selector::Not(inner) => !inner.matches(tool),
        }
    }
}

/// `!selector`: the tools it does not pick.
///
/// ```
/// use toolwright::registry::Selector;
/// assert_eq!((!Selector::tag("pii")).to_string(), "not any tag of [pii]");
/// ```
impl Not for Selector {
    type Output = Selector;

    fn not(self) -> Selector {
        match self {
            Selector::Not(inner) => *inner,
            other => Selector::Not(Box::new(other)),
        }
    }
}

impl fmt::Display for Selector {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        let joined = |f: &mut fmt::Formatter<'_>, parts: &[Selector], word: &str| {
            f.write_str("(")?;
            for (i, part) in parts.iter().enumerate() {
                if i > 0 {
                    write!(f, " {word} ")?;
                }
                write!(f, "{part}")?;
            }
            f.write_str(")")
        };
        match self {
            Selector::All => f.write_str("all"),
            Selector::Name(name) => write!(f, "name {name}"),
            Selector::Key(key) => write!(f, "key {key}"),
            Selector::Namespace(namespace) => write!(f, "namespace {namespace}"),
            Selector::AnyTag(tags) => write!(f, "any tag of [{}]", tags.join(", ")),
            Selector::AllTags(tags) => write!(f, "all tags of [{}]", tags.join(", ")),
            Selector::Effect(effect) => write!(f, "effect {effect}"),
            Selector::OpenWorld => f.write_str("open world"),
            Selector::And(all) => joined(f, all, "and"),
            Selector::Or(any) => joined(f, any, "or"),
            Selector::Not(inner) => write!(f, "not {inner}"),
        }
    }
}

/// Whether `key` is `namespace` or lies under it, by whole dot segments.
fn in_namespace(key: &str, namespace: &str) -> bool {
    match key.strip_prefix(namespace) {
        Some(rest) => rest.is_empty() || rest.starts_with('.'),
        None => false,
    }
}

#[cfg(test)]
mod tests {
    use super::in_namespace;

    #[test]
    fn namespaces_match_whole_segments_only() {
        assert!(in_namespace("orders.get", "orders"));
        assert!(in_namespace("orders.items.add", "orders.items"));
        assert!(in_namespace("orders", "orders"));
        assert!(!in_namespace("ordersx.get", "orders"));
        assert!(!in_namespace("shop.orders.get", "orders"));
    }
}
