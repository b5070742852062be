//! Reading a request's `params` with what its client declares of itself in their `_meta` (the
//! 2026-07-28 envelope's capabilities and client information) taken out as a [`Client`].
//!
//! A client of 2026-07-28 repeats the same declaration on every request, and read into a tree
//! each time it was most of what the envelope cost a server: here each member is read as raw
//! text, and made a tree only when its text differs from the one last read on this thread.

use std::cell::RefCell;
use std::fmt;
use std::sync::Arc;

use serde::Deserialize;
use serde::de::value::SeqAccessDeserializer;
use serde::de::{DeserializeSeed, Deserializer, MapAccess, SeqAccess, Visitor};
use serde_json::value::RawValue;
use serde_json::{Map, Value};

use super::{CLIENT_CAPABILITIES_KEY, CLIENT_INFO_KEY, Client};

/// The longest declaration kept for the next request to reuse: a longer one is read each time,
/// so that a client cannot have each thread keep a large one.
const LONGEST_KEPT: usize = 4096;

thread_local! {
    /// The declarations last read on this thread: capabilities, then client information.
    static LAST: RefCell<[Option<Kept>; 2]> = const { RefCell::new([None, None]) };
}

/// A declaration as written, and as read.
struct Kept {
    text: Box<str>,
    value: Arc<Value>,
}

/// A request's `params`, read as a tree but for the client's capabilities and information in
/// their `_meta`, which are taken out into `client`.
pub(super) struct Params<'c> {
    pub(super) client: &'c mut Client,
}

impl<'de> DeserializeSeed<'de> for Params<'_> {
    type Value = Value;

    fn deserialize<D: Deserializer<'de>>(self, deserializer: D) -> Result<Value, D::Error> {
        // `params` written twice count as written last, as in a `Value`: what the first
        // declared is forgotten.
        *self.client = Client::default();
        Level {
            at: At::Params,
            client: self.client,
        }
        .deserialize(deserializer)
    }
}

impl Client {
    /// What the `params` of a request made in this process, not read, declare of its client:
    /// taken out of their `_meta`, as reading a message takes it.
    pub(crate) fn taken_from(params: &mut Value) -> Client {
        let Some(meta) = params.get_mut("_meta").and_then(Value::as_object_mut) else {
            return Client::default();
        };
        Client {
            capabilities: meta.remove(CLIENT_CAPABILITIES_KEY).map(Arc::new),
            info: meta.remove(CLIENT_INFO_KEY).map(Arc::new),
        }
    }
}

/// Where in `params` a value stands: the levels above the declaration.
#[derive(Clone, Copy, PartialEq)]
enum At {
    /// `params`, whose `_meta` leads down.
    Params,
    /// `params._meta`, whose members hold the declaration.
    Meta,
}

/// A value at `at`, read as a tree as [`Value`]'s own `Deserialize` reads it, but for the
/// member that leads down (or, in `_meta`, the declaration's members). Every other member is a
/// `Value`, read by its own `Deserialize`.
struct Level<'c> {
    at: At,
    client: &'c mut Client,
}

impl<'de> DeserializeSeed<'de> for Level<'_> {
    type Value = Value;

    fn deserialize<D: Deserializer<'de>>(self, deserializer: D) -> Result<Value, D::Error> {
        deserializer.deserialize_any(self)
    }
}

impl<'de> Visitor<'de> for Level<'_> {
    type Value = Value;

    fn expecting(&self, formatter: &mut fmt::Formatter<'_>) -> fmt::Result {
        formatter.write_str("any JSON value")
    }

    fn visit_map<A: MapAccess<'de>>(self, mut map: A) -> Result<Value, A::Error> {
        if self.at == At::Meta {
            return meta(map, self.client);
        }
        let mut members = Map::new();
        while let Some(key) = map.next_key::<String>()? {
            let value = if key == "_meta" {
                // A `_meta` written twice counts as written last, as in a `Value`.
                *self.client = Client::default();
                map.next_value_seed(Level {
                    at: At::Meta,
                    client: &mut *self.client,
                })?
            } else {
                map.next_value()?
            };
            members.insert(key, value);
        }
        Ok(Value::Object(members))
    }

    fn visit_seq<A: SeqAccess<'de>>(self, seq: A) -> Result<Value, A::Error> {
        Value::deserialize(SeqAccessDeserializer::new(seq))
    }

    fn visit_bool<E>(self, value: bool) -> Result<Value, E> {
        Ok(Value::Bool(value))
    }

    fn visit_i64<E>(self, value: i64) -> Result<Value, E> {
        Ok(Value::from(value))
    }

    fn visit_u64<E>(self, value: u64) -> Result<Value, E> {
        Ok(Value::from(value))
    }

    fn visit_f64<E>(self, value: f64) -> Result<Value, E> {
        // As `Value` reads one: a float JSON cannot write is null.
        Ok(Value::from(value))
    }

    fn visit_str<E>(self, value: &str) -> Result<Value, E> {
        Ok(Value::String(value.to_owned()))
    }

    fn visit_string<E>(self, value: String) -> Result<Value, E> {
        Ok(Value::String(value))
    }

    fn visit_unit<E>(self) -> Result<Value, E> {
        Ok(Value::Null)
    }
}

/// `params._meta`: its members as a tree, but the declaration's, taken into `client`.
fn meta<'de, A: MapAccess<'de>>(mut map: A, client: &mut Client) -> Result<Value, A::Error> {
    let mut members = Map::new();
    while let Some(key) = map.next_key::<String>()? {
        let (declaration, kept) = match key.as_str() {
            CLIENT_CAPABILITIES_KEY => (&mut client.capabilities, 0),
            CLIENT_INFO_KEY => (&mut client.info, 1),
            _ => {
                members.insert(key, map.next_value()?);
                continue;
            }
        };
        let text: &RawValue = map.next_value()?;
        *declaration = Some(declared(kept, text.get()).map_err(|err| unplaced(&err, &key))?);
    }
    Ok(Value::Object(members))
}

/// `err`, met reading the declaration `key` from its own text, as an error of the message: its
/// place in that text left out, for the message's reader to add the place in the message.
fn unplaced<E: serde::de::Error>(err: &serde_json::Error, key: &str) -> E {
    let text = err.to_string();
    let problem = match text.rfind(" at line ") {
        Some(at) if err.line() > 0 => &text[..at],
        _ => &text,
    };
    E::custom(format_args!("{problem} in `{key}`"))
}

/// The declaration written `text`, kept in `LAST[kept]`: the one last read on this thread if it
/// was written the same, or read now (and kept, if it is short).
fn declared(kept: usize, text: &str) -> Result<Arc<Value>, serde_json::Error> {
    LAST.with_borrow_mut(|last| {
        if let Some(known) = &last[kept]
            && *known.text == *text
        {
            return Ok(Arc::clone(&known.value));
        }
        let value = Arc::new(serde_json::from_str::<Value>(text)?);
        if text.len() <= LONGEST_KEPT {
            last[kept] = Some(Kept {
                text: text.into(),
                value: Arc::clone(&value),
            });
        }
        Ok(value)
    })
}

#[cfg(test)]
mod tests {
    use serde_json::json;

    use super::*;

    /// `line`, read as a request's `params`.
    fn read(line: &[u8]) -> Result<(Value, Client), serde_json::Error> {
        let mut client = Client::default();
        let mut deserializer = serde_json::Deserializer::from_slice(line);
        let value = Params {
            client: &mut client,
        }
        .deserialize(&mut deserializer)?;
        deserializer.end()?;
        Ok((value, client))
    }

    fn read_json(params: &Value) -> (Value, Client) {
        read(params.to_string().as_bytes()).unwrap()
    }

    #[test]
    fn the_declaration_is_taken_out_and_the_rest_kept() {
        let (value, client) = read_json(&json!({
            "name": "echo", "arguments": {"text": "hi", "_meta": {CLIENT_INFO_KEY: 1}},
            "_meta": {
                "io.modelcontextprotocol/protocolVersion": "2026-07-28",
                CLIENT_CAPABILITIES_KEY: {"sampling": {}},
                CLIENT_INFO_KEY: {"name": "c", "version": "1"},
                "progressToken": 4,
            },
        }));
        assert_eq!(
            value,
            json!({
                "name": "echo", "arguments": {"text": "hi", "_meta": {CLIENT_INFO_KEY: 1}},
                "_meta": {
                    "io.modelcontextprotocol/protocolVersion": "2026-07-28",
                    "progressToken": 4,
                },
            })
        );
        assert_eq!(
            client.capabilities.as_deref(),
            Some(&json!({"sampling": {}}))
        );
        assert_eq!(
            client.info.as_deref(),
            Some(&json!({"name": "c", "version": "1"}))
        );
    }

    #[test]
    fn params_without_one_read_as_a_value_does() {
        let lines = [
            r#"{"x":[1,-2,3.5,1e300,true,null,"\u00e9",{"a\"b":{}}],"_meta":{"k":[{}]}}"#,
            r#"{"_meta":[1,2],"_meta":7}"#,
            r#"{"x":1e400}"#,
            r#"[{"_meta":{}}]"#,
            r#""just a string""#,
            r#"18446744073709551615"#,
            r#"null"#,
        ];
        for line in lines {
            let read = read(line.as_bytes()).map(|(value, _)| value).ok();
            let value = serde_json::from_str::<Value>(line).ok();
            assert_eq!(read, value, "{line}");
        }
    }

    #[test]
    fn a_declaration_repeated_on_this_thread_is_read_once() {
        let params = |capabilities: Value| json!({"_meta": {CLIENT_CAPABILITIES_KEY: capabilities, CLIENT_INFO_KEY: {"name": "c"}}});
        let (_, first) = read_json(&params(json!({"roots": {}})));
        let (_, second) = read_json(&params(json!({"roots": {}})));
        let first_capabilities = first.capabilities.unwrap();
        assert!(Arc::ptr_eq(
            &first_capabilities,
            &second.capabilities.unwrap()
        ));
        assert!(Arc::ptr_eq(&first.info.unwrap(), &second.info.unwrap()));
        // Another declaration is read as written.
        let (_, changed) = read_json(&params(json!({"sampling": {}})));
        assert_eq!(
            changed.capabilities.as_deref(),
            Some(&json!({"sampling": {}}))
        );
        assert_eq!(*first_capabilities, json!({"roots": {}}));
    }

    #[test]
    fn a_meta_written_twice_declares_what_the_last_says() {
        let line = format!(r#"{{"_meta":{{"{CLIENT_CAPABILITIES_KEY}":{{}}}},"_meta":{{}}}}"#);
        let (value, client) = read(line.as_bytes()).unwrap();
        assert_eq!(value, json!({"_meta": {}}));
        assert!(client.capabilities.is_none());
    }

    #[test]
    fn a_declaration_that_is_no_json_value_is_an_error_placed_in_the_message() {
        let line = format!(r#"{{"_meta":{{"{CLIENT_INFO_KEY}":{{"n":1e400}}}}}}"#);
        let error = read(line.as_bytes()).unwrap_err();
        // Placed where the message's reader stands: past the declaration, which ends at 58.
        assert_eq!(
            error.to_string(),
            format!("number out of range in `{CLIENT_INFO_KEY}` at line 1 column 59")
        );
    }
}
