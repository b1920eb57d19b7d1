//! The schema of an argument field's type, built by schemars once per type
//! and process rather than once per tool.
//!
//! A catalog's tools share their field types (`u64`, `Option<String>`, an
//! `Order` enum), and building an input schema was mostly schemars
//! building those types' schemas again for every tool: at 10,000 tools,
//! half of start-up. [`field_schema`] returns what
//! `generator.subschema_for::<T>()` returns, from a copy kept per type:
//! - a type whose schema names no definition (`u64`, `Option<String>`):
//!   the kept schema itself;
//! - a type whose schema adds definitions none of which refers to another
//!   (`Order`, `Option<Filter>`): the kept definitions are put in the
//!   generator first, then schemars is asked, and finds them there instead
//!   of building them. Asking keeps the generator's own account of the
//!   names it gave, so that another type of the same name still gets a name
//!   of its own;
//! - anything else (a definition referring to another, a name the tool
//!   already gave, other generator settings than toolwright's): schemars
//!   alone, as before.
//!
//! So a tool's schema is the same as schemars builds without the copies,
//! provided a type's `JsonSchema` impl gives the same schema each time it
//! is asked (as derived and hand-written impls do).

use std::any::TypeId;
use std::collections::HashMap;
use std::sync::{Arc, OnceLock, RwLock};

use schemars::generate::{Contract, SchemaSettings};
use schemars::{JsonSchema, Schema, SchemaGenerator};
use serde_json::Value;

/// `generator.subschema_for::<T>()`, built by schemars once per type `T`
/// and copied after (see the module's docs).
pub fn field_schema<T: JsonSchema + ?Sized + 'static>(generator: &mut SchemaGenerator) -> Schema {
    cached(
        generator,
        TypeId::of::<T>(),
        SchemaGenerator::subschema_for::<T>,
    )
}

/// How a field type's schema is made again.
enum Kept {
    /// Its schema: it names no definition.
    Schema(Schema),
    /// The definitions its schema adds, none referring to another: put in
    /// the generator, they spare schemars building them.
    Definitions(Vec<(String, Value)>),
    /// Built by schemars each time.
    Built,
}

/// What is kept of each field type, by its `TypeId`.
fn kept() -> &'static RwLock<HashMap<TypeId, Arc<Kept>>> {
    static KEPT: OnceLock<RwLock<HashMap<TypeId, Arc<Kept>>>> = OnceLock::new();
    KEPT.get_or_init(RwLock::default)
}

/// [`field_schema`] without its type parameter: compiled once.
fn cached(
    generator: &mut SchemaGenerator,
    id: TypeId,
    subschema_for: fn(&mut SchemaGenerator) -> Schema,
) -> Schema {
    if !usual(generator.settings()) {
        return subschema_for(generator);
    }
    let found = kept()
        .read()
        .unwrap_or_else(|poisoned| poisoned.into_inner())
        .get(&id)
        .cloned();
    let kept_of_type = match found {
        Some(kept_of_type) => kept_of_type,
        None => {
            let made = Arc::new(keep(subschema_for));
            kept()
                .write()
                .unwrap_or_else(|poisoned| poisoned.into_inner())
                .entry(id)
                .or_insert(made)
                .clone()
        }
    };
    match &*kept_of_type {
        Kept::Schema(schema) => schema.clone(),
        Kept::Definitions(definitions) => {
            let taken = generator.definitions();
            if definitions
                .iter()
                .all(|(name, _)| !taken.contains_key(name))
            {
                let into = generator.definitions_mut();
                for (name, definition) in definitions {
                    into.insert(name.clone(), definition.clone());
                }
            }
            subschema_for(generator)
        }
        Kept::Built => subschema_for(generator),
    }
}

/// What to keep of a type's schema, built on a generator of its own.
fn keep(subschema_for: fn(&mut SchemaGenerator) -> Schema) -> Kept {
    let mut generator = SchemaSettings::draft2020_12().into_generator();
    let schema = subschema_for(&mut generator);
    let definitions = generator.take_definitions(false);
    if definitions.is_empty() {
        if refers(schema.as_value()) {
            // A reference to no definition: the root's own (`#`), say.
            return Kept::Built;
        }
        return Kept::Schema(schema);
    }
    if definitions.values().any(refers) {
        return Kept::Built;
    }
    Kept::Definitions(definitions.into_iter().collect())
}

/// Whether `value` holds a `$ref` anywhere.
fn refers(value: &Value) -> bool {
    match value {
        Value::Object(map) => map
            .iter()
            .any(|(key, value)| key == "$ref" || refers(value)),
        Value::Array(items) => items.iter().any(refers),
        _ => false,
    }
}

/// Whether `settings` build subschemas as the draft 2020-12 settings every
/// toolwright schema is built with do: the only ones kept copies are for.
fn usual(settings: &SchemaSettings) -> bool {
    settings.definitions_path == "/$defs"
        && !settings.inline_subschemas
        && settings.contract == Contract::Deserialize
        && !settings.untagged_enum_variant_titles
        && settings.transforms.is_empty()
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    /// The order of results.
    #[derive(JsonSchema)]
    #[allow(dead_code)]
    enum Order {
        /// Oldest first.
        Asc,
        /// Newest first.
        Desc,
    }

    mod other {
        /// Another type of the same name.
        #[derive(schemars::JsonSchema)]
        #[allow(dead_code)]
        pub(super) struct Order {
            pub(super) by: String,
        }
    }

    /// A tree, whose definition refers to itself.
    #[derive(JsonSchema)]
    #[allow(dead_code)]
    struct Tree {
        children: Vec<Tree>,
    }

    /// A filter holding an order: a definition referring to another.
    #[derive(JsonSchema)]
    #[allow(dead_code)]
    struct Filter {
        order: Order,
    }

    /// The schemas of the fields `T1`, `T2`, ... and the definitions they
    /// add, through the copies and from schemars alone, on generators of
    /// `settings`.
    macro_rules! both {
        ($settings:expr; $($field:ty),*) => {{
            let mut copies = $settings.into_generator();
            let mut alone = $settings.into_generator();
            let copied = vec![$(field_schema::<$field>(&mut copies).to_value()),*];
            let built = vec![$(alone.subschema_for::<$field>().to_value()),*];
            (
                (copied, copies.take_definitions(false)),
                (built, alone.take_definitions(false)),
            )
        }};
    }

    #[test]
    fn a_field_schema_is_what_schemars_builds_asked_again_and_again() {
        for _ in 0..3 {
            let (copied, built) = both!(SchemaSettings::draft2020_12();
                u64, Option<String>, Order, Option<Order>, other::Order, Tree, Filter, Option<Tree>);
            assert_eq!(copied, built);
        }
    }

    #[test]
    fn another_type_of_the_same_name_gets_a_name_of_its_own() {
        let (copied, built) = both!(SchemaSettings::draft2020_12(); Order, other::Order);
        assert_eq!(copied.0[1], json!({"$ref": "#/$defs/Order2"}));
        assert_eq!(copied, built);
        // And the other way round: the name is taken before the copy of
        // `Order` could be put in.
        let (copied, built) = both!(SchemaSettings::draft2020_12(); other::Order, Option<Order>);
        assert_eq!(copied.0[1]["anyOf"][0], json!({"$ref": "#/$defs/Order2"}));
        assert_eq!(copied, built);
    }

    #[test]
    fn other_settings_are_left_to_schemars() {
        let (copied, built) = both!(SchemaSettings::openapi3(); u64, Option<Order>, Order);
        assert!(copied.0[2] == json!({"$ref": "#/components/schemas/Order"}));
        assert_eq!(copied, built);
    }
}
