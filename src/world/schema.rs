//! The world file as written: serde structs that keep the span of every value, so that problems
//! found after parsing can still name a line and column.
//!
//! Tables are not wrapped in `Spanned`: a table that is only implied by a header (`needs` in
//! `[agents.needs.x]`) has no span, and `Spanned` would fail on it with a confusing message.

use serde::de::{self, MapAccess, Visitor};
use serde::{Deserialize, Deserializer};
use std::fmt;
use toml::Spanned;

/// A list whose items keep their spans.
pub(crate) type SpannedList = Spanned<Vec<Spanned<String>>>;

/// The top level of a world file.
#[derive(Deserialize)]
#[serde(deny_unknown_fields)]
pub(crate) struct RawWorld {
    pub name: Spanned<String>,
    #[serde(default)]
    pub description: Option<Spanned<String>>,
    pub start_date: Spanned<Text>,
    #[serde(default)]
    pub days: Option<Spanned<i64>>,
    #[serde(default)]
    pub day_start: Option<Spanned<Text>>,
    #[serde(default)]
    pub day_end: Option<Spanned<Text>>,
    #[serde(default)]
    pub step_minutes: Option<Spanned<i64>>,
    #[serde(default)]
    pub conversation_cooldown_minutes: Option<Spanned<i64>>,
    #[serde(default)]
    pub needs: Option<RawWorldNeeds>,
    #[serde(default)]
    pub locations: Option<SpannedList>,
    #[serde(default)]
    pub events: Vec<RawEvent>,
    #[serde(default)]
    pub agents: Vec<RawAgent>,
}

/// `[[events]]`.
#[derive(Deserialize)]
#[serde(deny_unknown_fields)]
pub(crate) struct RawEvent {
    pub date: Spanned<Text>,
    pub text: Spanned<String>,
}

/// `[[agents]]`.
#[derive(Deserialize)]
#[serde(deny_unknown_fields)]
pub(crate) struct RawAgent {
    pub name: Spanned<String>,
    pub age: Spanned<i64>,
    pub traits: SpannedList,
    pub description: SpannedList,
    pub example_day_plan: SpannedList,
    pub location: Spanned<String>,
    #[serde(default)]
    pub home: Option<Spanned<String>>,
    #[serde(default)]
    pub emotion: Option<Spanned<String>>,
    #[serde(default)]
    pub needs: Option<RawNeeds>,
    #[serde(default)]
    pub relationships: Option<RawRelationships>,
}

/// `needs = { ... }`: every level optional.
#[derive(Deserialize)]
#[serde(deny_unknown_fields)]
pub(crate) struct RawNeeds {
    #[serde(default)]
    pub fullness: Option<Spanned<i64>>,
    #[serde(default)]
    pub social: Option<Spanned<i64>>,
    #[serde(default)]
    pub fun: Option<Spanned<i64>>,
    #[serde(default)]
    pub health: Option<Spanned<i64>>,
    #[serde(default)]
    pub energy: Option<Spanned<i64>>,
}

/// `[needs]` at the top level: how the needs behave in this world.
#[derive(Deserialize)]
#[serde(deny_unknown_fields)]
pub(crate) struct RawWorldNeeds {
    #[serde(default)]
    pub decay: Option<RawDecay>,
}

/// `[needs.decay]`: the expected drop of each need per `per` (`"5 hours"` or `"hour"`).
#[derive(Deserialize)]
#[serde(deny_unknown_fields)]
pub(crate) struct RawDecay {
    #[serde(default)]
    pub per: Option<Spanned<String>>,
    #[serde(default)]
    pub fullness: Option<Spanned<f64>>,
    #[serde(default)]
    pub social: Option<Spanned<f64>>,
    #[serde(default)]
    pub fun: Option<Spanned<f64>>,
    #[serde(default)]
    pub health: Option<Spanned<f64>>,
    #[serde(default)]
    pub energy: Option<Spanned<f64>>,
}

/// `[agents.relationships."Other"]`.
#[derive(Deserialize)]
#[serde(deny_unknown_fields)]
pub(crate) struct RawRelationship {
    pub relationship: Spanned<String>,
    #[serde(default)]
    pub closeness: Option<Spanned<i64>>,
}

/// The relationships table, in file order.
pub(crate) struct RawRelationships(pub Vec<(Spanned<String>, RawRelationship)>);

impl<'de> Deserialize<'de> for RawRelationships {
    fn deserialize<D: Deserializer<'de>>(d: D) -> Result<Self, D::Error> {
        struct V;
        impl<'de> Visitor<'de> for V {
            type Value = RawRelationships;
            fn expecting(&self, f: &mut fmt::Formatter) -> fmt::Result {
                f.write_str("a table of other agents' names to { relationship, closeness }")
            }
            fn visit_map<A: MapAccess<'de>>(self, mut map: A) -> Result<Self::Value, A::Error> {
                let mut out = Vec::new();
                while let Some(key) = map.next_key::<Spanned<String>>()? {
                    let value = map.next_value::<RawRelationship>()?;
                    out.push((key, value));
                }
                Ok(RawRelationships(out))
            }
        }
        d.deserialize_map(V)
    }
}

/// A string, or a TOML date/time literal read as its text (so `start_date = 2023-01-03` works
/// as well as `start_date = "2023-01-03"`).
pub(crate) struct Text(pub String);

impl<'de> Deserialize<'de> for Text {
    fn deserialize<D: Deserializer<'de>>(d: D) -> Result<Self, D::Error> {
        struct V;
        impl<'de> Visitor<'de> for V {
            type Value = Text;
            fn expecting(&self, f: &mut fmt::Formatter) -> fmt::Result {
                f.write_str("a string")
            }
            fn visit_str<E: de::Error>(self, v: &str) -> Result<Text, E> {
                Ok(Text(v.to_string()))
            }
            fn visit_map<A: MapAccess<'de>>(self, map: A) -> Result<Text, A::Error> {
                let dt =
                    toml::value::Datetime::deserialize(de::value::MapAccessDeserializer::new(map))?;
                Ok(Text(dt.to_string()))
            }
        }
        d.deserialize_any(V)
    }
}
