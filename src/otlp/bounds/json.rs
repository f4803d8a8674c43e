//! The walk of an OTLP/JSON export: serde's tokens, with keys borrowed and every value
//! the schema does not name skipped (`IgnoredAny`), so counting a body costs nothing in
//! proportion to it. A refusal is kept in the walk and the parse stopped with a marker
//! error, so the caller sees the refusal and not serde's wording of it.

use std::borrow::Cow;
use std::fmt;

use serde::de::{self, DeserializeSeed, Deserializer, IgnoredAny, MapAccess, SeqAccess, Visitor};

use super::schema::{Holds, Msg, shape};
use super::{Refusal, Walk};

/// Walks `body` as a JSON export of `root`.
pub fn walk(body: &[u8], root: Msg, walk: &mut Walk<'_>) -> Result<(), Refusal> {
    let mut state = State { walk, refusal: None };
    let mut deserializer = serde_json::Deserializer::from_slice(body);
    let parsed = MessageSeed { msg: root, depth: 0, state: &mut state }
        .deserialize(&mut deserializer)
        .and_then(|()| deserializer.end());
    match (state.refusal, parsed) {
        (Some(refusal), _) => Err(refusal),
        (None, Ok(())) => Ok(()),
        (None, Err(err)) => Err(Refusal::Malformed(err.to_string())),
    }
}

struct State<'w, 'l> {
    walk: &'w mut Walk<'l>,
    refusal: Option<Refusal>,
}

impl State<'_, '_> {
    /// Keeps the first refusal and gives serde an error that ends the parse.
    fn refuse<E: de::Error>(&mut self, refusal: Refusal) -> E {
        self.refusal.get_or_insert(refusal);
        E::custom("refused")
    }

    fn check<E: de::Error>(&mut self, counted: Result<(), Refusal>) -> Result<(), E> {
        counted.map_err(|refusal| self.refuse(refusal))
    }
}

/// One message (a JSON object) of type `msg`, already entered.
struct MessageSeed<'s, 'w, 'l> {
    msg: Msg,
    depth: u32,
    state: &'s mut State<'w, 'l>,
}

impl<'de> DeserializeSeed<'de> for MessageSeed<'_, '_, '_> {
    type Value = ();
    fn deserialize<D: Deserializer<'de>>(self, deserializer: D) -> Result<(), D::Error> {
        deserializer.deserialize_any(self)
    }
}

impl<'de> Visitor<'de> for MessageSeed<'_, '_, '_> {
    type Value = ();
    fn expecting(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(f, "an OTLP {:?} object", self.msg)
    }

    /// `null` stands for an absent message.
    fn visit_unit<E: de::Error>(self) -> Result<(), E> {
        Ok(())
    }

    fn visit_map<A: MapAccess<'de>>(self, mut map: A) -> Result<(), A::Error> {
        let shape = shape(self.msg);
        let mut attributes = [0u64; 8];
        while let Some(key) = map.next_key::<Cow<'de, str>>()? {
            let known = shape.fields.iter().position(|field| field.json == key.as_ref());
            let field = known.map(|slot| (slot, shape.fields[slot].holds));
            match field {
                Some((slot, Holds::Message(child))) => map.next_value_seed(ValueSeed {
                    child,
                    depth: self.depth + 1,
                    attributes: (child == Msg::KeyValue).then_some(&mut attributes[slot]),
                    state: &mut *self.state,
                })?,
                Some((_, Holds::Numbers | Holds::PackedVarints)) => {
                    map.next_value_seed(ScalarsSeed { state: &mut *self.state })?
                }
                None => map.next_value_seed(ScalarsSeed { state: &mut *self.state })?,
            }
        }
        Ok(())
    }
}

/// A field holding `child`: one object, or an array of them (a repeated field).
struct ValueSeed<'s, 'w, 'l, 'a> {
    child: Msg,
    depth: u32,
    /// The list's count, for a field of attributes.
    attributes: Option<&'a mut u64>,
    state: &'s mut State<'w, 'l>,
}

impl ValueSeed<'_, '_, '_, '_> {
    fn one<E: de::Error>(&mut self) -> Result<(), E> {
        if let Some(count) = self.attributes.as_deref_mut() {
            *count += 1;
            let counted = self.state.walk.attribute(*count);
            self.state.check(counted)?;
        }
        let entered = self.state.walk.enter(self.child, self.depth);
        self.state.check(entered)
    }
}

impl<'de> DeserializeSeed<'de> for ValueSeed<'_, '_, '_, '_> {
    type Value = ();
    fn deserialize<D: Deserializer<'de>>(self, deserializer: D) -> Result<(), D::Error> {
        deserializer.deserialize_any(self)
    }
}

impl<'de> Visitor<'de> for ValueSeed<'_, '_, '_, '_> {
    type Value = ();
    fn expecting(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(f, "an OTLP {:?} object or an array of them", self.child)
    }

    fn visit_unit<E: de::Error>(self) -> Result<(), E> {
        Ok(())
    }

    fn visit_map<A: MapAccess<'de>>(mut self, map: A) -> Result<(), A::Error> {
        self.one()?;
        MessageSeed { msg: self.child, depth: self.depth, state: self.state }.visit_map(map)
    }

    fn visit_seq<A: SeqAccess<'de>>(mut self, mut seq: A) -> Result<(), A::Error> {
        // Each element is counted when it is seen to be an object (`visit_map`).
        while seq
            .next_element_seed(ValueSeed {
                child: self.child,
                depth: self.depth,
                attributes: self.attributes.as_deref_mut(),
                state: &mut *self.state,
            })?
            .is_some()
        {}
        Ok(())
    }
}

/// Any other value: a scalar, a string, an array of numbers or strings, an object the
/// schema does not name. Counted as it would decode, at eight bytes a number.
struct ScalarsSeed<'s, 'w, 'l> {
    state: &'s mut State<'w, 'l>,
}

impl ScalarsSeed<'_, '_, '_> {
    fn cost<E: de::Error>(self, bytes: u64) -> Result<(), E> {
        let counted = self.state.walk.memory(bytes);
        self.state.check(counted)
    }
}

impl<'de> DeserializeSeed<'de> for ScalarsSeed<'_, '_, '_> {
    type Value = ();
    fn deserialize<D: Deserializer<'de>>(self, deserializer: D) -> Result<(), D::Error> {
        deserializer.deserialize_any(self)
    }
}

impl<'de> Visitor<'de> for ScalarsSeed<'_, '_, '_> {
    type Value = ();
    fn expecting(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str("a JSON value")
    }
    fn visit_unit<E: de::Error>(self) -> Result<(), E> {
        Ok(())
    }
    fn visit_bool<E: de::Error>(self, _: bool) -> Result<(), E> {
        self.cost(8)
    }
    fn visit_i64<E: de::Error>(self, _: i64) -> Result<(), E> {
        self.cost(8)
    }
    fn visit_u64<E: de::Error>(self, _: u64) -> Result<(), E> {
        self.cost(8)
    }
    fn visit_f64<E: de::Error>(self, _: f64) -> Result<(), E> {
        self.cost(8)
    }
    fn visit_str<E: de::Error>(self, text: &str) -> Result<(), E> {
        // A number sent as text decodes to eight bytes; a string to itself.
        self.cost((text.len() as u64).max(8))
    }
    fn visit_borrowed_str<E: de::Error>(self, text: &'de str) -> Result<(), E> {
        self.visit_str(text)
    }
    fn visit_seq<A: SeqAccess<'de>>(self, mut seq: A) -> Result<(), A::Error> {
        while seq.next_element_seed(ScalarsSeed { state: &mut *self.state })?.is_some() {}
        Ok(())
    }
    fn visit_map<A: MapAccess<'de>>(self, mut map: A) -> Result<(), A::Error> {
        // An object no field of the schema names: serde skips it, keeping nothing.
        while map.next_entry::<IgnoredAny, IgnoredAny>()?.is_some() {}
        Ok(())
    }
}
