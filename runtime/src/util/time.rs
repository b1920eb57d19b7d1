//! Times as milliseconds since the Unix epoch: how the stores keep them
//! and how events, approvals and registry states serialize them.

use std::time::{Duration, SystemTime};

/// Milliseconds since the Unix epoch: how times are stored and serialized.
pub(crate) fn to_unix_ms(time: SystemTime) -> i64 {
    let ms = time
        .duration_since(SystemTime::UNIX_EPOCH)
        .unwrap_or_default()
        .as_millis();
    i64::try_from(ms).unwrap_or(i64::MAX)
}

/// The time `ms` milliseconds after the Unix epoch (before it, the epoch).
pub(crate) fn from_unix_ms(ms: i64) -> SystemTime {
    SystemTime::UNIX_EPOCH + Duration::from_millis(u64::try_from(ms).unwrap_or(0))
}

/// `#[serde(with = ...)]` for a `SystemTime` as milliseconds since the
/// epoch; `option` for an `Option<SystemTime>`.
pub(crate) mod unix_ms {
    use std::time::SystemTime;

    use serde::{Deserialize, Deserializer, Serializer};

    pub(crate) fn serialize<S: Serializer>(time: &SystemTime, s: S) -> Result<S::Ok, S::Error> {
        s.serialize_i64(super::to_unix_ms(*time))
    }

    pub(crate) fn deserialize<'de, D: Deserializer<'de>>(d: D) -> Result<SystemTime, D::Error> {
        i64::deserialize(d).map(super::from_unix_ms)
    }

    pub(crate) mod option {
        use std::time::SystemTime;

        use serde::{Deserialize, Deserializer, Serializer};

        pub(crate) fn serialize<S: Serializer>(
            time: &Option<SystemTime>,
            s: S,
        ) -> Result<S::Ok, S::Error> {
            match time {
                Some(time) => s.serialize_some(&super::super::to_unix_ms(*time)),
                None => s.serialize_none(),
            }
        }

        pub(crate) fn deserialize<'de, D: Deserializer<'de>>(
            d: D,
        ) -> Result<Option<SystemTime>, D::Error> {
            Ok(Option::<i64>::deserialize(d)?.map(super::super::from_unix_ms))
        }
    }
}
