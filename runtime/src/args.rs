//! What the `Deserialize` and `JsonSchema` impls `#[tool]` writes for an
//! argument struct call: the generic half, compiled once here instead of
//! once per tool.
//!
//! The macro writes the impls itself rather than deriving them: rustc
//! checks a derive's output again whenever an edit above it moves it in the
//! file, so with derives on every tool, editing the first tool of a file
//! re-checked all the others (see BENCHMARKS.md, "Compile cost of tools").

use core::fmt;
use core::marker::PhantomData;

use serde::de::{self, DeserializeSeed, Deserializer, Visitor};
use serde::ser;

/// Reads a key of the arguments object as the index of the field it names
/// (`index`, a `match` on constant strings the macro writes, which compiles
/// to a few comparisons); any other key is an `unknown field` error
/// listing `fields`, as `#[serde(deny_unknown_fields)]` reports it.
#[derive(Clone, Copy)]
pub struct FieldSeed {
    /// The field names, in order.
    pub fields: &'static [&'static str],
    /// The index in `fields` of a key, if it is one.
    pub index: fn(&str) -> Option<usize>,
}

impl<'de> DeserializeSeed<'de> for FieldSeed {
    type Value = usize;

    fn deserialize<D: Deserializer<'de>>(self, deserializer: D) -> Result<usize, D::Error> {
        deserializer.deserialize_identifier(self)
    }
}

impl Visitor<'_> for FieldSeed {
    type Value = usize;

    fn expecting(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str("field identifier")
    }

    fn visit_str<E: de::Error>(self, key: &str) -> Result<usize, E> {
        (self.index)(key).ok_or_else(|| E::unknown_field(key, self.fields))
    }

    fn visit_bytes<E: de::Error>(self, key: &[u8]) -> Result<usize, E> {
        match core::str::from_utf8(key) {
            Ok(key) => self.visit_str(key),
            Err(_) => Err(E::invalid_value(de::Unexpected::Bytes(key), &self)),
        }
    }
}

/// Where a tool's `Deserialize` notes the field whose value failed to
/// read, for the executor, which reports the failure at the field's path
/// (`None` when nobody asks, as for a plain `T::deserialize`).
pub type FailedField<'a> = Option<&'a core::cell::Cell<Option<&'static str>>>;

/// `error`, from reading the value of `field` in the argument struct's
/// `Deserialize`, with the field noted in `failed`.
///
/// The schema check comes first, so such a failure is a rule of the field's
/// type the schema does not state (a UUID's or a date's syntax, a
/// `try_from` newtype's check). serde's message does not name the field.
#[cold]
pub fn noted<E>(failed: FailedField<'_>, field: &'static str, error: E) -> E {
    if let Some(failed) = failed {
        failed.set(Some(field));
    }
    error
}

/// The fields of a tool's argument struct `V`, read from a map: what
/// `#[tool]` writes for its `Deserialize`, which reads them through
/// [`fields`]. Implemented on [`Runtime`].
pub trait ReadFields<V> {
    /// What serde's errors say was expected (`struct AddArgs`).
    const EXPECTING: &'static str;
    /// The fields' names, as the arguments spell them.
    const FIELDS: &'static [&'static str];
    /// The position in [`FIELDS`](Self::FIELDS) of the field named `key`.
    fn field_index(key: &str) -> Option<usize>;
    /// Reads the fields from `map`, noting in `failed` the one whose value
    /// failed to read.
    fn visit_map<'de, A: de::MapAccess<'de>>(
        map: A,
        failed: FailedField<'_>,
    ) -> Result<V, A::Error>;
}

/// Writes a tool's argument struct `V`: what `#[tool]` writes for its
/// `Serialize`, which calls it. On [`Runtime`], as [`ReadFields`] is.
pub trait WriteFields<V> {
    /// Serializes `args` as a struct of its fields.
    fn serialize<S: serde::Serializer>(args: &V, serializer: S) -> Result<S::Ok, S::Error>;
}

/// The schema of a tool's argument struct `V`: what `#[tool]` writes for
/// its `JsonSchema`, which calls it. On [`Runtime`], as [`ReadFields`] is.
pub trait SchemaFields<V> {
    /// The struct's schema, its fields' subschemas from `generator`.
    fn json_schema(generator: &mut schemars::SchemaGenerator) -> schemars::Schema;
}

/// What `#[tool]` implements [`ReadFields`], [`WriteFields`] and
/// [`SchemaFields`] on for each argument struct: a type of the runtime, so
/// that in an incremental build that code is compiled in a codegen unit of
/// the runtime's, which an edit to a tool's body leaves alone, not in the
/// one the bodies of a module's tools share.
pub struct Runtime;

/// The visitor of `V`'s fields, noting in `failed` the one whose value
/// failed to read.
pub fn fields<V>(failed: FailedField<'_>) -> Fields<'_, V>
where
    Runtime: ReadFields<V>,
{
    Fields {
        failed,
        read: PhantomData,
    }
}

/// See [`fields`].
pub struct Fields<'f, V> {
    failed: FailedField<'f>,
    read: PhantomData<V>,
}

impl<'de, V> Visitor<'de> for Fields<'_, V>
where
    Runtime: ReadFields<V>,
{
    type Value = V;

    fn expecting(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(<Runtime as ReadFields<V>>::EXPECTING)
    }

    #[inline]
    fn visit_map<A: de::MapAccess<'de>>(self, map: A) -> Result<V, A::Error> {
        <Runtime as ReadFields<V>>::visit_map(map, self.failed)
    }
}

/// The value of a field the arguments left out: `None` for an `Option`,
/// otherwise a `missing field` error, as serde's derive answers.
pub fn missing_field<'de, T: de::Deserialize<'de>, E: de::Error>(
    field: &'static str,
) -> Result<T, E> {
    T::deserialize(Missing {
        field,
        error: PhantomData,
    })
}

/// A deserializer with nothing in it: it knows only "none".
struct Missing<E> {
    field: &'static str,
    error: PhantomData<E>,
}

impl<'de, E: de::Error> Deserializer<'de> for Missing<E> {
    type Error = E;

    fn deserialize_any<V: Visitor<'de>>(self, _visitor: V) -> Result<V::Value, E> {
        Err(E::missing_field(self.field))
    }

    fn deserialize_option<V: Visitor<'de>>(self, visitor: V) -> Result<V::Value, E> {
        visitor.visit_none()
    }

    serde::forward_to_deserialize_any! {
        bool i8 i16 i32 i64 i128 u8 u16 u32 u64 u128 f32 f64 char str string
        bytes byte_buf unit unit_struct newtype_struct seq tuple
        tuple_struct map struct enum identifier ignored_any
    }
}

/// Whether a field's type is an `Option` (such a field is not
/// `required`), by autoref: `(&&OptionProbe::<T>(PhantomData)).is_option()`
/// with [`IsOption`] and [`NotOption`] in scope.
pub struct OptionProbe<T>(pub PhantomData<T>);

/// Chosen by autoref for `Option<T>`.
pub trait IsOption {
    /// `true`.
    fn is_option(&self) -> bool;
}

impl<T> IsOption for &OptionProbe<Option<T>> {
    fn is_option(&self) -> bool {
        true
    }
}

/// The fallback for every other type.
pub trait NotOption {
    /// `false`.
    fn is_option(&self) -> bool;
}

impl<T> NotOption for OptionProbe<T> {
    fn is_option(&self) -> bool {
        false
    }
}

/// `Debug` for the argument struct `name`: its fields as a caller sends
/// them, by wire name and in declaration order, each value as JSON text
/// (`ListOrdersArgs { customerId: 7, status: null }`). Through `Serialize`,
/// so that a field of a type that is not `Debug` shows too; one function
/// per tool, where a written `fmt` would make rustc check a method call per
/// field. A field whose `Serialize` fails (a map with non-string keys) is
/// left out, and the struct ends in `..`.
///
/// The fields named in `secrets` (`#[secret]` parameters) show as
/// `"[redacted]"`.
pub fn debug_args<T: serde::Serialize>(
    args: &T,
    name: &'static str,
    secrets: &'static [&'static str],
    f: &mut fmt::Formatter<'_>,
) -> fmt::Result {
    match args.serialize(DebugArgs {
        f: &mut *f,
        name,
        secrets,
    }) {
        Ok(written) => written,
        // Not a struct: the generated `Serialize` always writes one.
        Err(NotShown) => f.debug_struct(name).finish_non_exhaustive(),
    }
}

/// Writes a struct's fields into a `Formatter` as a `debug_struct`, in the
/// order its `Serialize` gives them; anything but a struct is
/// [`NotShown`].
struct DebugArgs<'a, 'b> {
    f: &'a mut fmt::Formatter<'b>,
    name: &'static str,
    secrets: &'static [&'static str],
}

/// What [`DebugArgs`] answers for anything but a struct.
#[derive(Debug, thiserror::Error)]
#[error("only a struct is shown")]
struct NotShown;

impl ser::Error for NotShown {
    fn custom<M: fmt::Display>(_: M) -> Self {
        NotShown
    }
}

/// The methods of [`DebugArgs`] for what it does not show.
macro_rules! not_shown {
    ($($method:ident($($arg:ty),*) -> $ok:ty;)*) => {
        $(fn $method(self, $(_: $arg),*) -> Result<$ok, NotShown> {
            Err(NotShown)
        })*
    };
}

impl<'a, 'b> ser::Serializer for DebugArgs<'a, 'b> {
    type Ok = fmt::Result;
    type Error = NotShown;
    type SerializeSeq = ser::Impossible<fmt::Result, NotShown>;
    type SerializeTuple = ser::Impossible<fmt::Result, NotShown>;
    type SerializeTupleStruct = ser::Impossible<fmt::Result, NotShown>;
    type SerializeTupleVariant = ser::Impossible<fmt::Result, NotShown>;
    type SerializeMap = ser::Impossible<fmt::Result, NotShown>;
    type SerializeStruct = DebugFields<'a, 'b>;
    type SerializeStructVariant = ser::Impossible<fmt::Result, NotShown>;

    fn serialize_struct(self, _: &'static str, _: usize) -> Result<DebugFields<'a, 'b>, NotShown> {
        Ok(DebugFields {
            out: self.f.debug_struct(self.name),
            elided: false,
            secrets: self.secrets,
        })
    }

    not_shown! {
        serialize_bool(bool) -> fmt::Result;
        serialize_i8(i8) -> fmt::Result;
        serialize_i16(i16) -> fmt::Result;
        serialize_i32(i32) -> fmt::Result;
        serialize_i64(i64) -> fmt::Result;
        serialize_u8(u8) -> fmt::Result;
        serialize_u16(u16) -> fmt::Result;
        serialize_u32(u32) -> fmt::Result;
        serialize_u64(u64) -> fmt::Result;
        serialize_f32(f32) -> fmt::Result;
        serialize_f64(f64) -> fmt::Result;
        serialize_char(char) -> fmt::Result;
        serialize_str(&str) -> fmt::Result;
        serialize_bytes(&[u8]) -> fmt::Result;
        serialize_none() -> fmt::Result;
        serialize_unit() -> fmt::Result;
        serialize_unit_struct(&'static str) -> fmt::Result;
        serialize_unit_variant(&'static str, u32, &'static str) -> fmt::Result;
        serialize_seq(Option<usize>) -> Self::SerializeSeq;
        serialize_tuple(usize) -> Self::SerializeTuple;
        serialize_tuple_struct(&'static str, usize) -> Self::SerializeTupleStruct;
        serialize_tuple_variant(&'static str, u32, &'static str, usize) -> Self::SerializeTupleVariant;
        serialize_map(Option<usize>) -> Self::SerializeMap;
        serialize_struct_variant(&'static str, u32, &'static str, usize) -> Self::SerializeStructVariant;
    }

    fn serialize_some<V: ?Sized + ser::Serialize>(self, _: &V) -> Result<fmt::Result, NotShown> {
        Err(NotShown)
    }

    fn serialize_newtype_struct<V: ?Sized + ser::Serialize>(
        self,
        _: &'static str,
        _: &V,
    ) -> Result<fmt::Result, NotShown> {
        Err(NotShown)
    }

    fn serialize_newtype_variant<V: ?Sized + ser::Serialize>(
        self,
        _: &'static str,
        _: u32,
        _: &'static str,
        _: &V,
    ) -> Result<fmt::Result, NotShown> {
        Err(NotShown)
    }
}

/// The fields of a struct [`DebugArgs`] shows.
struct DebugFields<'a, 'b> {
    out: fmt::DebugStruct<'a, 'b>,
    /// Whether a field was left out.
    elided: bool,
    /// The fields shown masked.
    secrets: &'static [&'static str],
}

impl ser::SerializeStruct for DebugFields<'_, '_> {
    type Ok = fmt::Result;
    type Error = NotShown;

    fn serialize_field<V: ?Sized + ser::Serialize>(
        &mut self,
        key: &'static str,
        value: &V,
    ) -> Result<(), NotShown> {
        if self.secrets.contains(&key) {
            self.out.field(key, &Json(MASK));
            return Ok(());
        }
        // As text, not a `Value`: a `Value`'s objects would list a nested
        // struct's fields in key order too.
        match serde_json::to_string(value) {
            Ok(text) => {
                self.out.field(key, &Json(&text));
            }
            Err(_) => self.elided = true,
        }
        Ok(())
    }

    fn end(mut self) -> Result<fmt::Result, NotShown> {
        Ok(if self.elided {
            self.out.finish_non_exhaustive()
        } else {
            self.out.finish()
        })
    }
}

/// A secret field's value as [`debug_args`] shows it: [`REDACTED`](crate::observe::REDACTED), as JSON.
const MASK: &str = "\"[redacted]\"";

/// JSON text, shown as it is.
struct Json<'a>(&'a str);

impl fmt::Debug for Json<'_> {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(self.0)
    }
}

/// A `#[schemars(range(...))]`, `length(...)` or `regex(...)` bound on a
/// field's schema, as schemars' derive applies it: `key: value`, only
/// where the schema's `type` is (or includes) `of_type`, `number` taking
/// `integer` too. A bound that does not fit the type is dropped, as the
/// derive drops it.
pub fn bound(
    schema: &mut schemars::Schema,
    of_type: &str,
    key: &str,
    value: impl Into<serde_json::Value>,
) {
    let has = |wanted: &str| match schema.get("type") {
        Some(serde_json::Value::String(t)) => t == wanted,
        Some(serde_json::Value::Array(types)) => types.iter().any(|t| t.as_str() == Some(wanted)),
        _ => false,
    };
    if has(of_type) || (of_type == "number" && has("integer")) {
        schema.insert(key.to_owned(), value.into());
    }
}

/// `#[schemars(email)]` or `url`: the schema's `format`, whatever its type.
pub fn format(schema: &mut schemars::Schema, format: &str) {
    schema.insert("format".to_owned(), format.into());
}

/// Adds property `key` to an object schema, as schemars' derive does:
/// `schema` with `title` and `description` when they are not empty and
/// `default` when there is one, and `key` in `required` unless
/// `optional`.
pub fn object_property(
    object: &mut schemars::Schema,
    key: &str,
    optional: bool,
    mut schema: schemars::Schema,
    title: &str,
    description: &str,
    default: Option<serde_json::Value>,
) {
    if let Some(default) = default {
        schema.insert("default".to_owned(), default);
    }
    describe(&mut schema, title, description);
    let map = object.ensure_object();
    if let Some(properties) = member(map, "properties", || {
        serde_json::Value::Object(serde_json::Map::new())
    })
    .as_object_mut()
    {
        properties.insert(key.to_owned(), schema.to_value());
    }
    if !optional
        && let Some(required) =
            member(map, "required", || serde_json::Value::Array(Vec::new())).as_array_mut()
    {
        required.push(key.into());
    }
}

/// Marks property `key` of an object schema `"writeOnly": true`, as
/// `#[schemars(extend("writeOnly" = true))]` does: a `#[secret]` parameter.
pub fn write_only(object: &mut schemars::Schema, key: &str) {
    if let Some(property) = object
        .get_mut("properties")
        .and_then(|properties| properties.get_mut(key))
        .and_then(serde_json::Value::as_object_mut)
    {
        property.insert("writeOnly".to_owned(), true.into());
    }
}

/// `map[key]`, inserted first if missing. Not `Map::entry`, which would
/// allocate the key for every property of every schema.
fn member<'m>(
    map: &'m mut serde_json::Map<String, serde_json::Value>,
    key: &str,
    empty: impl FnOnce() -> serde_json::Value,
) -> &'m mut serde_json::Value {
    if !map.contains_key(key) {
        map.insert(key.to_owned(), empty());
    }
    map.get_mut(key).expect("inserted above")
}

/// The object schema an argument struct starts from: closed, as
/// `deny_unknown_fields` makes it.
pub fn object_schema() -> schemars::Schema {
    schemars::json_schema!({"type": "object", "additionalProperties": false})
}

/// Adds `title` and `description` to `schema`, each when not empty.
pub fn describe(schema: &mut schemars::Schema, title: &str, description: &str) {
    if !title.is_empty() {
        schema.insert("title".to_owned(), title.into());
    }
    if !description.is_empty() {
        schema.insert("description".to_owned(), description.into());
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    /// Shows `T` through [`debug_args`], as a generated `Debug` impl does.
    struct Shown<T>(T);

    impl<T: serde::Serialize> fmt::Debug for Shown<T> {
        fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
            debug_args(&self.0, "Args", &["token"], f)
        }
    }

    #[test]
    fn arguments_show_as_json_in_field_order_and_unserializable_ones_elide() {
        #[derive(serde::Serialize)]
        struct Window {
            to: u8,
            from: u8,
        }
        #[derive(serde::Serialize)]
        struct Search {
            query: &'static str,
            #[serde(rename = "inStock")]
            in_stock: Option<bool>,
            window: Window,
            tags: Vec<&'static str>,
        }
        let search = Search {
            query: "lamp",
            in_stock: None,
            window: Window { to: 9, from: 3 },
            tags: vec!["a"],
        };
        // In the struct's order, nested structs too, not in key order.
        assert_eq!(
            format!("{:?}", Shown(&search)),
            r#"Args { query: "lamp", inStock: null, window: {"to":9,"from":3}, tags: ["a"] }"#
        );
        assert_eq!(
            format!("{:#?}", Shown(&search)),
            "Args {\n    query: \"lamp\",\n    inStock: null,\n    window: {\"to\":9,\"from\":3},\n    tags: [\"a\"],\n}"
        );

        // JSON has no non-string keys: that field is left out, and the
        // struct says so.
        #[derive(serde::Serialize)]
        struct Pairs {
            name: &'static str,
            pairs: std::collections::BTreeMap<(u8, u8), u8>,
            last: u8,
        }
        let pairs = Pairs {
            name: "p",
            pairs: [((1, 2), 3)].into(),
            last: 1,
        };
        assert_eq!(
            format!("{:?}", Shown(&pairs)),
            r#"Args { name: "p", last: 1, .. }"#
        );
        // A `#[secret]` field shows masked.
        #[derive(serde::Serialize)]
        struct Login {
            user: &'static str,
            token: &'static str,
        }
        assert_eq!(
            format!(
                "{:?}",
                Shown(Login {
                    user: "ann",
                    token: "sk-LEAK"
                })
            ),
            format!(
                "Args {{ user: \"ann\", token: {:?} }}",
                crate::secret::REDACTED
            )
        );
        // Anything but a struct shows no fields.
        assert_eq!(format!("{:?}", Shown(json!({"a": 1}))), "Args { .. }");
        assert_eq!(format!("{:?}", Shown(7)), "Args { .. }");
    }

    #[test]
    fn a_key_is_the_index_of_its_field_and_any_other_key_is_refused() {
        let fields = FieldSeed {
            fields: &["a", "b"],
            index: |key| ["a", "b"].iter().position(|field| *field == key),
        };
        assert_eq!(fields.deserialize(&json!("b")).unwrap(), 1);
        let error = fields.deserialize(&json!("c")).unwrap_err();
        assert_eq!(error.to_string(), "unknown field `c`, expected `a` or `b`");
    }

    #[test]
    fn a_missing_option_is_none_and_anything_else_is_an_error() {
        let none: Option<u8> = missing_field::<_, serde_json::Error>("x").unwrap();
        assert_eq!(none, None);
        let error = missing_field::<u8, serde_json::Error>("x").unwrap_err();
        assert_eq!(error.to_string(), "missing field `x`");
    }
}
