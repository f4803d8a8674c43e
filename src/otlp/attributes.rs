//! Reading OTLP attributes the way agents really send them: one record's attributes
//! as a map from key to value, with getters that accept a number sent as a string
//! (`"1200"`), a boolean sent as a string (`"true"`), an integer sent as a double and
//! the other way round, and that treat an empty value (`{}`) as absent.
//!
//! Invariant: a getter never fails; a value of a type it cannot read is absent, and
//! the mapping decides whether a record without it is still an event. Which of the
//! record's own attributes a getter looked at is remembered (the first 128), so what a
//! mapping never reads can be counted as drift (`sessions::drift`).

use opentelemetry_proto::tonic::common::v1::{AnyValue, KeyValue, any_value::Value};

/// The attributes of one record, the record's own over its resource's. A record has a
/// few dozen at most, so a look-up is a scan (cheaper than hashing every key).
#[derive(Debug, Default)]
pub struct Attributes<'a> {
    resource: &'a [KeyValue],
    record: &'a [KeyValue],
    /// Bit i: the record's i-th attribute was looked up.
    read: std::cell::Cell<u128>,
}

struct Found<'a>(&'a Value);

impl<'a> Attributes<'a> {
    /// The resource's attributes and the record's (a record's key wins).
    pub fn of(resource: &'a [KeyValue], record: &'a [KeyValue]) -> Self {
        Attributes { resource, record, read: Default::default() }
    }

    fn get(&self, key: &str) -> Option<Found<'a>> {
        let value = |pair: &'a KeyValue| pair.value.as_ref().and_then(|any: &AnyValue| any.value.as_ref());
        if let Some((index, pair)) = self.record.iter().enumerate().rev().find(|(_, pair)| pair.key == key) {
            if index < 128 {
                self.read.set(self.read.get() | 1 << index);
            }
            if let Some(found) = value(pair) {
                return Some(Found(found));
            }
        }
        self.resource.iter().rev().find(|pair| pair.key == key).and_then(value).map(Found)
    }

    /// The keys of the record's own attributes (not its resource's) no getter has looked
    /// up, among its first 128.
    pub fn unread(&self) -> impl Iterator<Item = &'a str> + '_ {
        let read = self.read.get();
        self.record
            .iter()
            .take(128)
            .enumerate()
            .filter(move |(index, _)| read & (1 << index) == 0)
            .map(|(_, pair)| pair.key.as_str())
    }

    /// A text value; numbers and booleans are given as their text. Empty text is absent.
    pub fn text(&self, key: &str) -> Option<String> {
        let text = match self.get(key)?.0 {
            Value::StringValue(text) => text.trim().to_string(),
            Value::IntValue(number) => number.to_string(),
            Value::DoubleValue(number) => number.to_string(),
            Value::BoolValue(flag) => flag.to_string(),
            _ => return None,
        };
        (!text.is_empty()).then_some(text)
    }

    /// The first of `keys` that has a text value (current names before old ones).
    pub fn first_text(&self, keys: &[&str]) -> Option<String> {
        keys.iter().find_map(|key| self.text(key))
    }

    /// A whole number: an integer, a double with no fraction, or text of either.
    pub fn integer(&self, key: &str) -> Option<i64> {
        match self.get(key)?.0 {
            Value::IntValue(number) => Some(*number),
            Value::DoubleValue(number) => whole(*number),
            Value::StringValue(text) => {
                let text = text.trim();
                text.parse::<i64>().ok().or_else(|| text.parse::<f64>().ok().and_then(whole))
            }
            _ => None,
        }
    }

    /// A count: a whole number that is not negative.
    pub fn count(&self, key: &str) -> Option<i64> {
        self.integer(key).filter(|number| *number >= 0)
    }

    /// A decimal number: a double, an integer, or text of either.
    pub fn number(&self, key: &str) -> Option<f64> {
        match self.get(key)?.0 {
            Value::IntValue(number) => Some(*number as f64),
            Value::DoubleValue(number) => Some(*number),
            Value::StringValue(text) => text.trim().parse::<f64>().ok(),
            _ => None,
        }
        .filter(|number| number.is_finite())
    }

    /// A boolean: `true`/`false` as a boolean or as text (`"true"`, `"1"`, `"false"`, `"0"`).
    pub fn flag(&self, key: &str) -> Option<bool> {
        match self.get(key)?.0 {
            Value::BoolValue(flag) => Some(*flag),
            Value::IntValue(0) => Some(false),
            Value::IntValue(1) => Some(true),
            Value::StringValue(text) => match text.trim().to_ascii_lowercase().as_str() {
                "true" | "1" => Some(true),
                "false" | "0" => Some(false),
                _ => None,
            },
            _ => None,
        }
    }
}

/// `number` as an integer if it is one (and fits).
fn whole(number: f64) -> Option<i64> {
    (number.is_finite() && number.fract() == 0.0 && number.abs() < 9.0e15).then_some(number as i64)
}

#[cfg(test)]
mod tests {
    use super::*;

    fn pair(key: &str, value: Value) -> KeyValue {
        KeyValue { key: key.to_string(), value: Some(AnyValue { value: Some(value) }), ..Default::default() }
    }

    #[test]
    fn numbers_and_flags_are_read_in_every_form_agents_send() {
        let record = vec![
            pair("as_text", Value::StringValue(" 1200 ".into())),
            pair("as_int", Value::IntValue(1200)),
            pair("as_double", Value::DoubleValue(1200.0)),
            pair("fraction", Value::DoubleValue(0.0123)),
            pair("fraction_text", Value::StringValue("0.0123".into())),
            pair("yes", Value::StringValue("true".into())),
            pair("no", Value::BoolValue(false)),
            pair("negative", Value::StringValue("-3".into())),
            pair("empty", Value::StringValue(String::new())),
            KeyValue { key: "nothing".into(), value: Some(AnyValue { value: None }), ..Default::default() },
        ];
        let attributes = Attributes::of(&[], &record);
        for key in ["as_text", "as_int", "as_double"] {
            assert_eq!(attributes.integer(key), Some(1200), "{key}");
        }
        assert_eq!(attributes.integer("fraction"), None, "a fraction is not a whole number");
        assert_eq!(attributes.number("fraction_text"), Some(0.0123));
        assert_eq!(attributes.flag("yes"), Some(true));
        assert_eq!(attributes.flag("no"), Some(false));
        assert_eq!(attributes.count("negative"), None, "a count is never negative");
        assert_eq!(attributes.text("empty"), None);
        assert_eq!(attributes.text("nothing"), None, "an empty AnyValue is absent");
        assert_eq!(attributes.text("as_int").as_deref(), Some("1200"));
    }

    #[test]
    fn a_record_attribute_wins_over_its_resource() {
        let resource = vec![pair("session.id", Value::StringValue("from-resource".into()))];
        let record = vec![pair("session.id", Value::StringValue("from-record".into()))];
        assert_eq!(Attributes::of(&resource, &record).text("session.id").as_deref(), Some("from-record"));
        assert_eq!(Attributes::of(&resource, &[]).text("session.id").as_deref(), Some("from-resource"));
    }

    #[test]
    fn what_no_getter_looked_at_is_unread() {
        let record = vec![
            pair("model", Value::StringValue("m".into())),
            pair("new.field", Value::IntValue(1)),
            pair("empty", Value::StringValue(String::new())),
        ];
        let attributes = Attributes::of(&[], &record);
        assert_eq!(attributes.unread().collect::<Vec<_>>(), ["model", "new.field", "empty"]);
        attributes.text("model");
        attributes.text("empty");
        attributes.text("absent");
        assert_eq!(attributes.unread().collect::<Vec<_>>(), ["new.field"], "an empty value was still looked at");
    }
}
