//! Caller input quoted in bounded text: a name or value cut to a short
//! prefix, a list cut to its first items; and a tool's result as the
//! bounded text a model is shown.
//!
//! Error text quotes what the caller sent so that a model can correct it; a
//! caller that sends 900 KB must not get 900 KB back (it floods the model's
//! context, and every log line that prints the error). A tool that returns
//! 900 KB floods it the same way.

use std::fmt;

#[cfg(any(feature = "providers", feature = "mcp"))]
use serde_json::Value;

/// How many characters of a name or value a message quotes.
pub(crate) const QUOTED_CHARS: usize = 64;

/// How many characters of a JSON pointer a message quotes.
pub(crate) const PATH_CHARS: usize = 100;

/// How many characters of a message (an application's or serde's, which may
/// quote the value) are kept from its start and from its end: the end says
/// what was expected.
pub(crate) const MESSAGE_HEAD_CHARS: usize = 160;
/// See [`MESSAGE_HEAD_CHARS`].
pub(crate) const MESSAGE_TAIL_CHARS: usize = 80;

/// How many items of a list of problems a message names; the rest are
/// counted.
pub(crate) const LISTED_ITEMS: usize = 10;

/// `text`, or, if it is longer than `head + tail` characters, its first
/// `head` and last `tail` characters around a marker that says how many were
/// left out: `aaaa…[899936 more characters]`. Cut on character boundaries.
#[derive(Clone, Copy)]
pub(crate) struct Excerpt<'a> {
    text: &'a str,
    head: usize,
    tail: usize,
}

impl<'a> Excerpt<'a> {
    /// At most the first `chars` characters of `text`.
    pub(crate) fn prefix(text: &'a str, chars: usize) -> Self {
        Excerpt {
            text,
            head: chars,
            tail: 0,
        }
    }

    /// At most the first `head` and the last `tail` characters of `text`.
    pub(crate) fn ends(text: &'a str, head: usize, tail: usize) -> Self {
        Excerpt { text, head, tail }
    }

    /// A violation's or an error's message, kept to its two ends.
    pub(crate) fn message(text: &'a str) -> Self {
        Excerpt::ends(text, MESSAGE_HEAD_CHARS, MESSAGE_TAIL_CHARS)
    }

    /// Whether the excerpt leaves anything out.
    #[cfg(any(feature = "providers", feature = "mcp"))]
    pub(crate) fn cuts(&self) -> bool {
        let kept = self.head.saturating_add(self.tail);
        self.text.len() > kept && self.text.chars().count() > kept
    }
}

/// The text a model is shown of a tool's result, and whether it was cut: a
/// string as it is, any other value as JSON, and past `max_chars`
/// characters its first `max_chars` and a marker that says how many more
/// there were.
#[cfg(any(feature = "providers", feature = "mcp"))]
pub(crate) fn result_text(value: &Value, max_chars: usize) -> (String, bool) {
    let text = match value {
        Value::String(text) => text,
        // `serde_json::to_string` writes bytes straight into the text;
        // `Display` (same output) goes through a formatter adapter.
        other => {
            let json = serde_json::to_string(other).expect("a JSON value always serializes");
            let excerpt = Excerpt::prefix(&json, max_chars);
            return if excerpt.cuts() {
                (excerpt.to_string(), true)
            } else {
                (json, false)
            };
        }
    };
    let excerpt = Excerpt::prefix(text, max_chars);
    if excerpt.cuts() {
        (excerpt.to_string(), true)
    } else {
        (text.clone(), false)
    }
}

impl fmt::Display for Excerpt<'_> {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        let kept = self.head.saturating_add(self.tail);
        // A character is at least one byte: short text needs no counting.
        if self.text.len() <= kept {
            return f.write_str(self.text);
        }
        let total = self.text.chars().count();
        if total <= kept {
            return f.write_str(self.text);
        }
        let head_end = self
            .text
            .char_indices()
            .nth(self.head)
            .map_or(self.text.len(), |(i, _)| i);
        let tail_start = match self.tail {
            0 => self.text.len(),
            n => self
                .text
                .char_indices()
                .rev()
                .nth(n - 1)
                .map_or(0, |(i, _)| i),
        };
        f.write_str(&self.text[..head_end])?;
        write!(f, "…[{} more characters]", total - kept)?;
        if tail_start < self.text.len() {
            write!(f, "…{}", &self.text[tail_start..])?;
        }
        Ok(())
    }
}

/// The first [`LISTED_ITEMS`] of `items`, each followed by `separator`
/// but the last, then `and K more` for the rest.
pub(crate) struct Listed<I> {
    items: I,
    separator: &'static str,
}

impl<I> Listed<I> {
    /// `items`, joined by `separator`.
    pub(crate) fn new(items: I, separator: &'static str) -> Self {
        Listed { items, separator }
    }
}

impl<I> fmt::Display for Listed<I>
where
    I: ExactSizeIterator + Clone,
    I::Item: fmt::Display,
{
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        let total = self.items.len();
        for (i, item) in self.items.clone().take(LISTED_ITEMS).enumerate() {
            if i > 0 {
                f.write_str(self.separator)?;
            }
            write!(f, "{item}")?;
        }
        if total > LISTED_ITEMS {
            write!(f, "{}and {} more", self.separator, total - LISTED_ITEMS)?;
        }
        Ok(())
    }
}

#[cfg(test)]
mod tests {
    use super::{Excerpt, LISTED_ITEMS, Listed};

    #[test]
    #[cfg(any(feature = "providers", feature = "mcp"))]
    fn a_result_past_its_bound_is_cut_with_a_count_of_what_is_left_out() {
        use serde_json::json;

        use super::result_text;
        assert_eq!(result_text(&json!("short"), 5), ("short".to_owned(), false));
        assert_eq!(result_text(&json!([1, 2]), 5), ("[1,2]".to_owned(), false));
        assert_eq!(
            result_text(&json!("ééé日本"), 3),
            ("ééé…[2 more characters]".to_owned(), true)
        );
        assert_eq!(
            result_text(&json!({"a": "bcdef"}), 4),
            (r#"{"a"…[9 more characters]"#.to_owned(), true)
        );
    }

    #[test]
    fn short_text_is_quoted_whole() {
        assert_eq!(
            Excerpt::prefix("get_product", 64).to_string(),
            "get_product"
        );
        assert_eq!(Excerpt::prefix("", 0).to_string(), "");
        // Exactly at the bound: nothing is cut.
        assert_eq!(Excerpt::prefix("abcd", 4).to_string(), "abcd");
        assert_eq!(Excerpt::ends("abcdef", 4, 2).to_string(), "abcdef");
        // More bytes than the bound, but not more characters.
        assert_eq!(Excerpt::prefix("ééé", 3).to_string(), "ééé");
    }

    #[test]
    fn long_text_keeps_a_prefix_and_says_how_much_was_cut() {
        let text = "a".repeat(900_000);
        let excerpt = Excerpt::prefix(&text, 64).to_string();
        assert_eq!(
            excerpt,
            format!("{}…[899936 more characters]", "a".repeat(64))
        );
    }

    #[test]
    fn ends_keep_the_start_and_the_end() {
        let text = format!("invalid value: {}, expected a UUID", "x".repeat(1000));
        let excerpt = Excerpt::ends(&text, 20, 17).to_string();
        assert_eq!(
            excerpt,
            "invalid value: xxxxx…[995 more characters]…, expected a UUID"
        );
    }

    #[test]
    fn cuts_fall_on_character_boundaries() {
        // Multi-byte characters on both sides of each cut.
        let text = "é".repeat(50) + &"日本".repeat(50) + &"🦀".repeat(50);
        let excerpt = Excerpt::ends(&text, 51, 49).to_string();
        assert!(excerpt.starts_with(&("é".repeat(50) + "日…[")));
        assert!(excerpt.ends_with(&format!("]…{}", "🦀".repeat(49))));
        assert!(excerpt.contains("[100 more characters]"));
        let prefix = Excerpt::prefix(&text, 1).to_string();
        assert_eq!(prefix, "é…[199 more characters]");
    }

    #[test]
    fn a_list_names_its_first_items_and_counts_the_rest() {
        let few = ["a", "b"];
        assert_eq!(Listed::new(few.iter(), ", ").to_string(), "a, b");
        let none: [&str; 0] = [];
        assert_eq!(Listed::new(none.iter(), ", ").to_string(), "");
        let exactly: Vec<usize> = (0..LISTED_ITEMS).collect();
        assert!(
            !Listed::new(exactly.iter(), "; ")
                .to_string()
                .contains("more")
        );

        let many: Vec<String> = (0..60_000).map(|i| format!("k{i}")).collect();
        let listed = Listed::new(many.iter(), ", ").to_string();
        assert_eq!(
            listed,
            "k0, k1, k2, k3, k4, k5, k6, k7, k8, k9, and 59990 more"
        );
    }
}
