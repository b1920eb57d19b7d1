//! Rust values as JSON `Value`s, with each `f32` written as the number it
//! prints as.
//!
//! `serde_json::to_value` widens an `f32` to the `f64` of the same binary
//! value: `0.1f32` becomes `0.10000000149011612`. A tool's output would show
//! the model (and an approval request a person) those digits, and a typed
//! call's `0.1` would break a `maximum` of `0.1` that the same call made
//! with JSON `0.1` meets. [`to_value`] writes an `f32` as the `f64` nearest
//! its shortest decimal form instead (`0.1`), which reads back as the same
//! `f32`: what `serde_json::to_string` writes, as a `Value`.
//!
//! It wraps serde_json's own `Value` serializer and changes nothing else:
//! every other call is passed on, and each nested value is wrapped again so
//! that an `f32` anywhere in it is seen.

use core::fmt;

use serde::ser::{self, Serialize, Serializer};
use serde_json::Value;

/// `value` as a JSON `Value`, `f32`s as they print (see the module docs).
pub fn to_value<T: Serialize + ?Sized>(value: &T) -> serde_json::Result<Value> {
    value.serialize(Shortest(serde_json::value::Serializer))
}

/// The `f64` nearest the shortest decimal that reads back as `float`, a
/// finite number.
fn widen(float: f32) -> f64 {
    ryu::Buffer::new()
        .format_finite(float)
        .parse()
        .unwrap_or(f64::from(float))
}

/// A serializer (or one of its compound serializers) that writes `f32`s as
/// they print and passes everything else on to the serializer it wraps.
struct Shortest<S>(S);

/// A value whose `f32`s are written as they print, whatever serializer it
/// is given.
struct Nested<'a, T: ?Sized>(&'a T);

impl<T: Serialize + ?Sized> Serialize for Nested<'_, T> {
    fn serialize<S: Serializer>(&self, serializer: S) -> Result<S::Ok, S::Error> {
        self.0.serialize(Shortest(serializer))
    }
}

/// Passes the listed methods on to the wrapped serializer unchanged.
macro_rules! pass_on {
    ($($method:ident($($arg:ident: $ty:ty),*);)*) => {
        $(fn $method(self, $($arg: $ty),*) -> Result<S::Ok, S::Error> {
            self.0.$method($($arg),*)
        })*
    };
}

/// Opens the listed compound serializers on the wrapped serializer, each
/// wrapped in turn.
macro_rules! open {
    ($($method:ident($($arg:ident: $ty:ty),*) -> $compound:ident;)*) => {
        $(fn $method(self, $($arg: $ty),*) -> Result<Self::$compound, S::Error> {
            self.0.$method($($arg),*).map(Shortest)
        })*
    };
}

impl<S: Serializer> Serializer for Shortest<S> {
    type Ok = S::Ok;
    type Error = S::Error;
    type SerializeSeq = Shortest<S::SerializeSeq>;
    type SerializeTuple = Shortest<S::SerializeTuple>;
    type SerializeTupleStruct = Shortest<S::SerializeTupleStruct>;
    type SerializeTupleVariant = Shortest<S::SerializeTupleVariant>;
    type SerializeMap = Shortest<S::SerializeMap>;
    type SerializeStruct = Shortest<S::SerializeStruct>;
    type SerializeStructVariant = Shortest<S::SerializeStructVariant>;

    pass_on! {
        serialize_bool(v: bool);
        serialize_i8(v: i8);
        serialize_i16(v: i16);
        serialize_i32(v: i32);
        serialize_i64(v: i64);
        serialize_i128(v: i128);
        serialize_u8(v: u8);
        serialize_u16(v: u16);
        serialize_u32(v: u32);
        serialize_u64(v: u64);
        serialize_u128(v: u128);
        serialize_f64(v: f64);
        serialize_char(v: char);
        serialize_str(v: &str);
        serialize_bytes(v: &[u8]);
        serialize_none();
        serialize_unit();
        serialize_unit_struct(name: &'static str);
        serialize_unit_variant(name: &'static str, index: u32, variant: &'static str);
    }

    fn serialize_f32(self, v: f32) -> Result<S::Ok, S::Error> {
        if v.is_finite() {
            self.0.serialize_f64(widen(v))
        } else {
            self.0.serialize_f32(v)
        }
    }

    fn serialize_some<T: Serialize + ?Sized>(self, value: &T) -> Result<S::Ok, S::Error> {
        self.0.serialize_some(&Nested(value))
    }

    fn serialize_newtype_struct<T: Serialize + ?Sized>(
        self,
        name: &'static str,
        value: &T,
    ) -> Result<S::Ok, S::Error> {
        self.0.serialize_newtype_struct(name, &Nested(value))
    }

    fn serialize_newtype_variant<T: Serialize + ?Sized>(
        self,
        name: &'static str,
        index: u32,
        variant: &'static str,
        value: &T,
    ) -> Result<S::Ok, S::Error> {
        self.0
            .serialize_newtype_variant(name, index, variant, &Nested(value))
    }

    open! {
        serialize_seq(len: Option<usize>) -> SerializeSeq;
        serialize_tuple(len: usize) -> SerializeTuple;
        serialize_tuple_struct(name: &'static str, len: usize) -> SerializeTupleStruct;
        serialize_tuple_variant(
            name: &'static str, index: u32, variant: &'static str, len: usize
        ) -> SerializeTupleVariant;
        serialize_map(len: Option<usize>) -> SerializeMap;
        serialize_struct(name: &'static str, len: usize) -> SerializeStruct;
        serialize_struct_variant(
            name: &'static str, index: u32, variant: &'static str, len: usize
        ) -> SerializeStructVariant;
    }

    fn collect_str<T: fmt::Display + ?Sized>(self, value: &T) -> Result<S::Ok, S::Error> {
        self.0.collect_str(value)
    }

    fn is_human_readable(&self) -> bool {
        self.0.is_human_readable()
    }
}

/// The compound serializers: each element or field is wrapped again.
macro_rules! compound {
    ($($trait:ident :: $method:ident($($arg:ident: $ty:ty),*);)*) => {
        $(impl<S: ser::$trait> ser::$trait for Shortest<S> {
            type Ok = S::Ok;
            type Error = S::Error;

            fn $method<T: Serialize + ?Sized>(
                &mut self,
                $($arg: $ty,)*
                value: &T,
            ) -> Result<(), S::Error> {
                self.0.$method($($arg,)* &Nested(value))
            }

            fn end(self) -> Result<S::Ok, S::Error> {
                self.0.end()
            }
        })*
    };
}

compound! {
    SerializeSeq::serialize_element();
    SerializeTuple::serialize_element();
    SerializeTupleStruct::serialize_field();
    SerializeTupleVariant::serialize_field();
}

/// The compound serializers of named fields, which may also skip one.
macro_rules! keyed {
    ($($trait:ident),*) => {
        $(impl<S: ser::$trait> ser::$trait for Shortest<S> {
            type Ok = S::Ok;
            type Error = S::Error;

            fn serialize_field<T: Serialize + ?Sized>(
                &mut self,
                key: &'static str,
                value: &T,
            ) -> Result<(), S::Error> {
                self.0.serialize_field(key, &Nested(value))
            }

            fn skip_field(&mut self, key: &'static str) -> Result<(), S::Error> {
                self.0.skip_field(key)
            }

            fn end(self) -> Result<S::Ok, S::Error> {
                self.0.end()
            }
        })*
    };
}

keyed!(SerializeStruct, SerializeStructVariant);

/// Keys are passed on as they are: JSON keys are text, so an `f32` key is
/// already written as it prints.
impl<S: ser::SerializeMap> ser::SerializeMap for Shortest<S> {
    type Ok = S::Ok;
    type Error = S::Error;

    fn serialize_key<T: Serialize + ?Sized>(&mut self, key: &T) -> Result<(), S::Error> {
        self.0.serialize_key(key)
    }

    fn serialize_value<T: Serialize + ?Sized>(&mut self, value: &T) -> Result<(), S::Error> {
        self.0.serialize_value(&Nested(value))
    }

    fn serialize_entry<K: Serialize + ?Sized, V: Serialize + ?Sized>(
        &mut self,
        key: &K,
        value: &V,
    ) -> Result<(), S::Error> {
        self.0.serialize_entry(key, &Nested(value))
    }

    fn end(self) -> Result<S::Ok, S::Error> {
        self.0.end()
    }
}

#[cfg(test)]
mod tests {
    use std::collections::BTreeMap;

    use serde::Serialize;
    use serde_json::json;

    use super::to_value;

    #[derive(Serialize)]
    enum Reading {
        Single(f32),
        Pair(f32, f32),
        Named { value: f32 },
    }

    #[derive(Serialize)]
    struct Wrapped(f32);

    #[derive(Serialize)]
    struct Report {
        score: f32,
        precise: f64,
        maybe: Option<f32>,
        series: Vec<f32>,
        pair: (f32, u8),
        wrapped: Wrapped,
        readings: Vec<Reading>,
        by_name: BTreeMap<String, f32>,
        #[serde(flatten)]
        extra: BTreeMap<String, f32>,
    }

    #[test]
    fn an_f32_anywhere_is_the_number_it_prints_as() {
        let report = Report {
            score: 0.1,
            precise: 0.1,
            maybe: Some(19.99),
            series: vec![0.3, 1e-7, 3.4e38],
            pair: (2.5, 1),
            wrapped: Wrapped(0.7),
            readings: vec![
                Reading::Single(0.1),
                Reading::Pair(0.2, 0.3),
                Reading::Named { value: 0.4 },
            ],
            by_name: BTreeMap::from([("a".to_owned(), 0.6)]),
            extra: BTreeMap::from([("flat".to_owned(), 0.9)]),
        };
        let value = to_value(&report).unwrap();
        assert_eq!(
            value,
            json!({
                "score": 0.1,
                "precise": 0.1,
                "maybe": 19.99,
                "series": [0.3, 1e-7, 3.4e38],
                "pair": [2.5, 1],
                "wrapped": 0.7,
                "readings": [{"Single": 0.1}, {"Pair": [0.2, 0.3]}, {"Named": {"value": 0.4}}],
                "by_name": {"a": 0.6},
                "flat": 0.9,
            })
        );
        // The same text `serde_json::to_string` writes.
        let text = serde_json::to_string(&report).unwrap();
        assert_eq!(
            value,
            serde_json::from_str::<serde_json::Value>(&text).unwrap()
        );
    }

    #[test]
    fn every_f32_reads_back_as_itself() {
        let samples = [
            0.1f32,
            -0.1,
            1.0 / 3.0,
            f32::MIN_POSITIVE,
            f32::from_bits(1), // the smallest subnormal
            f32::MAX,
            f32::MIN,
            f32::EPSILON,
            16_777_217.0,
            0.0,
            -0.0,
        ];
        for float in samples {
            let value = to_value(&float).unwrap();
            let back: f32 = serde_json::from_value(value.clone()).unwrap();
            assert_eq!(back.to_bits(), float.to_bits(), "{float} became {value}");
            assert_eq!(value.to_string(), serde_json::to_string(&float).unwrap());
        }
    }

    #[test]
    fn everything_else_is_what_serde_json_makes() {
        let value = json!({"a": [1, -2, 3.5, "x", null, true], "b": {"c": u64::MAX}});
        assert_eq!(to_value(&value).unwrap(), value);
        assert_eq!(to_value(&f32::NAN).unwrap(), serde_json::Value::Null);
        assert_eq!(to_value(&'c').unwrap(), json!("c"));
        assert_eq!(to_value(&()).unwrap(), serde_json::Value::Null);
        let keyed = BTreeMap::from([(1u8, 0.1f32)]);
        assert_eq!(to_value(&keyed).unwrap(), json!({"1": 0.1}));
        let unkeyable = BTreeMap::from([(vec![1u8], 0.1f32)]);
        assert_eq!(
            to_value(&unkeyable).unwrap_err().to_string(),
            serde_json::to_value(&unkeyable).unwrap_err().to_string()
        );
    }
}
