//! OpenAI's strict mode: every object closed, with every property required.

use serde_json::{Map, Value, json};

use super::{Rewrite, escape, is_object, types};

impl Rewrite<'_> {
    /// OpenAI's strict mode: every object closed, with every property required.
    pub(super) fn close(&mut self, node: &mut Map<String, Value>, at: &str) {
        if !is_object(node) {
            return;
        }
        let listed = node.contains_key("properties");
        let properties = match node.get("properties") {
            Some(Value::Object(properties)) => properties.clone(),
            _ => Map::new(),
        };
        match node.get("additionalProperties") {
            Some(Value::Object(_)) => self.report(
                at,
                "`additionalProperties` with a schema (a map, or keys beyond the listed \
                 properties) cannot be expressed in strict mode, where every key is listed: only \
                 the listed properties can be given",
            ),
            Some(Value::Bool(false)) => {}
            // Without a list of properties, any key was meant; with one, serde ignores the
            // keys a struct does not list, so closing it keeps the meaning.
            _ if !listed => self.report(
                at,
                "an object with any keys cannot be expressed in strict mode, where every key is \
                 listed: only `{}` can be given",
            ),
            _ => {}
        }
        node.insert("properties".into(), Value::Object(properties.clone()));
        node.insert("additionalProperties".into(), json!(false));
        let mut required: Vec<Value> = match node.get("required") {
            Some(Value::Array(required)) => required.clone(),
            _ => Vec::new(),
        };
        for (name, schema) in &properties {
            if required.contains(&json!(name)) {
                continue;
            }
            if !self.accepts_null(schema, 0) {
                let change = match schema.get("default") {
                    Some(default) => format!(
                        "optional with a default (`{default}`), but strict mode requires every \
                         property: the model must always give it (the default is in its \
                         description)"
                    ),
                    None => "optional, but strict mode requires every property and this one does \
                             not accept `null`: the model must always give it"
                        .to_owned(),
                };
                self.report(&format!("{at}/properties/{}", escape(name)), change);
            }
            required.push(json!(name));
        }
        node.insert("required".into(), Value::Array(required));
    }

    /// Whether `null` is valid for `schema`: then the tool reads `null` as absent (serde reads
    /// `null` as `None`), and a property can be required without changing its meaning.
    pub(super) fn accepts_null(&self, schema: &Value, depth: usize) -> bool {
        let Value::Object(s) = schema else {
            return *schema == json!(true);
        };
        if depth > 32 || s.contains_key("not") {
            return false;
        }
        let any = |key: &str| match s.get(key) {
            Some(Value::Array(branches)) => {
                branches.iter().any(|b| self.accepts_null(b, depth + 1))
            }
            _ => true,
        };
        s.get("type")
            .is_none_or(|t| types(t).iter().any(|t| t == "null"))
            && s.get("enum")
                .is_none_or(|e| e.as_array().is_some_and(|e| e.contains(&Value::Null)))
            && s.get("const").is_none_or(Value::is_null)
            && any("anyOf")
            && any("oneOf")
            && s.get("allOf")
                .and_then(Value::as_array)
                .is_none_or(|all| all.iter().all(|b| self.accepts_null(b, depth + 1)))
            && s.get("$ref").and_then(Value::as_str).is_none_or(|target| {
                self.resolve(target)
                    .is_some_and(|t| self.accepts_null(&t, depth + 1))
            })
    }
}
