//! Schemas as clients receive them: derived with schemars, made self-contained, and used to check
//! arguments before a tool runs.

mod profile;

pub use profile::{
    NameCollision, Profile, ProfileError, ProfileReport, Rendering, UnknownProfile, render,
};

use std::collections::BTreeSet;

use schemars::generate::{Contract, SchemaSettings};
use schemars::{Schema, SchemaGenerator};
use serde_json::{Map, Value};

const DEFS_PREFIX: &str = "#/$defs/";

/// A generator for one schema: draft 2020-12, subschemas inlined (recursive types stay in `$defs`),
/// no `$schema`. Inputs are described as they are read, outputs as they are written.
pub(crate) fn generator(contract: Contract) -> SchemaGenerator {
    let mut settings = SchemaSettings::draft2020_12();
    settings.inline_subschemas = true;
    settings.meta_schema = None;
    settings.contract = contract;
    settings.into_generator()
}

/// The input schema of a tool: a closed object at the root.
pub(crate) fn input(derive: fn(&mut SchemaGenerator) -> Schema) -> Value {
    let mut schema = normalise(derive(&mut generator(Contract::Deserialize)));
    if let Value::Object(root) = &mut schema {
        // The arguments struct has no doc comment; a root description can only come from a
        // flattened struct's, and the tool's own description is what describes the arguments.
        root.remove("description");
        let composed = ["allOf", "anyOf", "oneOf", "$ref"]
            .iter()
            .any(|k| root.contains_key(*k));
        if root.get("type").and_then(Value::as_str) == Some("object") && !composed {
            root.entry("properties")
                .or_insert_with(|| Value::Object(Map::new()));
            root.entry("additionalProperties")
                .or_insert(Value::Bool(false));
        }
    }
    schema
}

/// The output schema of a tool, if its return type has one.
pub(crate) fn output(derive: fn(&mut SchemaGenerator) -> Option<Schema>) -> Option<Value> {
    derive(&mut generator(Contract::Serialize)).map(normalise)
}

/// Removes what clients stumble on (`$schema`, the root `title` that names a Rust type) and the
/// definitions nothing reaches.
fn normalise(schema: Schema) -> Value {
    let mut value = schema.to_value();
    if let Value::Object(root) = &mut value {
        root.remove("$schema");
        root.remove("title");
    }
    prune_definitions(&mut value);
    value
}

/// Keeps only the `$defs` entries reachable from the root, and drops `$defs` when none are.
fn prune_definitions(schema: &mut Value) {
    let Some(Value::Object(mut defs)) = schema.as_object_mut().and_then(|r| r.remove("$defs"))
    else {
        return;
    };
    let mut reachable = BTreeSet::new();
    let mut frontier: Vec<String> = definition_refs(schema);
    while let Some(name) = frontier.pop() {
        if reachable.insert(name.clone())
            && let Some(def) = defs.get(&name)
        {
            frontier.extend(definition_refs(def));
        }
    }
    defs.retain(|name, _| reachable.contains(name));
    if !defs.is_empty() {
        schema["$defs"] = Value::Object(defs);
    }
}

/// The names of the local definitions a schema refers to.
fn definition_refs(schema: &Value) -> Vec<String> {
    let mut refs = Vec::new();
    each_ref(schema, &mut |r| {
        if let Some(name) = r.strip_prefix(DEFS_PREFIX) {
            refs.push(unescape_pointer(name));
        }
    });
    refs
}

/// The `$ref`s that point nowhere inside the schema: a client cannot resolve them. A local
/// reference is a JSON pointer into the schema, so `#/definitions/...` of a literal draft-07
/// schema resolves as `#/$defs/...` does.
pub(crate) fn dangling_refs(schema: &Value) -> Vec<String> {
    let mut dangling = Vec::new();
    each_ref(schema, &mut |r| {
        let resolves = r == "#"
            || r.strip_prefix('#').is_some_and(|pointer| {
                pointer.starts_with('/') && schema.pointer(pointer).is_some()
            });
        if !resolves {
            dangling.push(r.to_owned());
        }
    });
    dangling
}

fn each_ref(schema: &Value, visit: &mut impl FnMut(&str)) {
    match schema {
        Value::Object(map) => {
            for (key, value) in map {
                match (key.as_str(), value) {
                    ("$ref", Value::String(r)) => visit(r),
                    // `properties` and `$defs` map names to schemas; a property may itself be
                    // called `$ref`, so look at their values only.
                    (
                        "properties" | "$defs" | "patternProperties" | "dependentSchemas",
                        Value::Object(m),
                    ) => {
                        m.values().for_each(|v| each_ref(v, visit));
                    }
                    (_, v) => each_ref(v, visit),
                }
            }
        }
        Value::Array(items) => items.iter().for_each(|v| each_ref(v, visit)),
        _ => {}
    }
}

fn unescape_pointer(token: &str) -> String {
    token.replace("~1", "/").replace("~0", "~")
}

/// A validator for a schema in its declared dialect (`$schema`, as a literal input schema may
/// name one), or 2020-12 when it declares none, as MCP specifies.
fn validator(schema: &Value) -> Result<jsonschema::Validator, String> {
    let result = if schema.get("$schema").is_some() {
        jsonschema::validator_for(schema)
    } else {
        jsonschema::draft202012::new(schema)
    };
    result.map_err(|e| e.to_string())
}

/// Checks a call's arguments against a tool's input schema, with messages a model can act on.
pub(crate) struct ArgumentCheck {
    validator: jsonschema::Validator,
    /// The top-level properties, when the schema refuses any other.
    closed: Option<Vec<String>>,
}

impl ArgumentCheck {
    pub(crate) fn new(schema: &Value) -> Result<ArgumentCheck, String> {
        let validator = validator(schema)?;
        let closed = (schema.get("additionalProperties") == Some(&Value::Bool(false))).then(|| {
            schema
                .get("properties")
                .and_then(Value::as_object)
                .map(|p| p.keys().cloned().collect())
                .unwrap_or_default()
        });
        Ok(ArgumentCheck { validator, closed })
    }

    /// `Ok` when the arguments are valid; otherwise every problem, one per line.
    pub(crate) fn check(&self, arguments: &Value) -> Result<(), String> {
        // The common case, answered without collecting errors. The validator enforces
        // `additionalProperties: false` too, so valid arguments name no unknown argument.
        if self.validator.is_valid(arguments) {
            return Ok(());
        }
        let mut problems: Vec<String> = Vec::new();
        if let (Some(expected), Value::Object(given)) = (&self.closed, arguments) {
            for key in given.keys().filter(|k| !expected.contains(k)) {
                problems.push(match expected.as_slice() {
                    [] => format!("unknown argument `{key}`: this tool takes no arguments"),
                    names => format!(
                        "unknown argument `{key}`; expected one of {}",
                        names
                            .iter()
                            .map(|n| format!("`{n}`"))
                            .collect::<Vec<_>>()
                            .join(", ")
                    ),
                });
            }
        }
        for error in self.validator.iter_errors(arguments) {
            use jsonschema::error::ValidationErrorKind as Kind;
            let path = argument_path(error.instance_path().as_str());
            let problem = match (error.kind(), path.as_deref()) {
                // Reported above, with the expected names.
                (Kind::AdditionalProperties { .. }, None) if self.closed.is_some() => continue,
                (Kind::Required { property }, None) => {
                    format!(
                        "missing required argument `{}`",
                        property.as_str().unwrap_or("?")
                    )
                }
                (Kind::Required { property }, Some(path)) => format!(
                    "argument `{path}`: missing required field `{}`",
                    property.as_str().unwrap_or("?")
                ),
                (_, Some(path)) => format!("argument `{path}`: {error}"),
                (_, None) => format!("arguments: {error}"),
            };
            problems.push(problem);
        }
        if problems.is_empty() {
            Ok(())
        } else {
            Err(problems.join("\n"))
        }
    }
}

/// Checks a tool's structured results against its output schema, with messages that say where
/// the result went wrong. Built in debug builds only: it catches a tool that breaks its own
/// contract during development, before a client trips on it.
#[cfg(debug_assertions)]
pub(crate) struct OutputCheck {
    validator: jsonschema::Validator,
}

#[cfg(debug_assertions)]
impl OutputCheck {
    pub(crate) fn new(schema: &Value) -> Result<OutputCheck, String> {
        let validator = jsonschema::draft202012::new(schema).map_err(|e| e.to_string())?;
        Ok(OutputCheck { validator })
    }

    /// `Ok` when the value matches the schema; otherwise every problem, one per line.
    pub(crate) fn check(&self, value: &Value) -> Result<(), String> {
        use jsonschema::error::ValidationErrorKind as Kind;
        let problems: Vec<String> = self
            .validator
            .iter_errors(value)
            .map(|error| {
                let path = argument_path(error.instance_path().as_str());
                match (error.kind(), path) {
                    (Kind::Required { property }, None) => format!(
                        "missing required field `{}`",
                        property.as_str().unwrap_or("?")
                    ),
                    (Kind::Required { property }, Some(path)) => format!(
                        "field `{path}`: missing required field `{}`",
                        property.as_str().unwrap_or("?")
                    ),
                    (_, Some(path)) => format!("field `{path}`: {error}"),
                    (_, None) => error.to_string(),
                }
            })
            .collect();
        if problems.is_empty() {
            Ok(())
        } else {
            Err(problems.join("\n"))
        }
    }
}

/// `/tags/0/name` as `tags[0].name`; `None` for the root.
fn argument_path(pointer: &str) -> Option<String> {
    let mut tokens = pointer.split('/').skip(1).map(unescape_pointer);
    let mut path = tokens.next()?;
    for token in tokens {
        if token.bytes().all(|b| b.is_ascii_digit()) && !token.is_empty() {
            path.push_str(&format!("[{token}]"));
        } else {
            path.push('.');
            path.push_str(&token);
        }
    }
    Some(path)
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    #[test]
    fn unreachable_definitions_are_dropped() {
        let mut schema = json!({
            "type": "object",
            "properties": {"t": {"$ref": "#/$defs/Tree"}},
            "$defs": {
                "Tree": {"type": "object", "properties": {"kids": {"items": {"$ref": "#/$defs/Tree"}}}},
                "Unused": {"type": "string"}
            }
        });
        prune_definitions(&mut schema);
        assert_eq!(schema["$defs"].as_object().unwrap().len(), 1);
        assert!(dangling_refs(&schema).is_empty());
    }

    #[test]
    fn a_ref_to_a_missing_definition_is_dangling() {
        let schema = json!({"type": "object", "properties": {"a": {"$ref": "#/$defs/Gone"}, "$ref": {"type": "string"}}});
        assert_eq!(dangling_refs(&schema), vec!["#/$defs/Gone".to_owned()]);
    }

    #[test]
    #[cfg(debug_assertions)]
    fn output_errors_name_the_field() {
        let schema = json!({
            "type": "object",
            "properties": {
                "total": {"type": "integer"},
                "items": {"type": "array", "items": {"type": "object", "properties": {"name": {"type": "string"}}, "required": ["name"]}}
            },
            "required": ["total"]
        });
        let check = OutputCheck::new(&schema).unwrap();
        assert_eq!(
            check.check(&json!({"total": 1, "items": [{"name": "a"}]})),
            Ok(())
        );
        assert_eq!(
            check.check(&json!({})).unwrap_err(),
            "missing required field `total`"
        );
        assert_eq!(
            check
                .check(&json!({"total": "one", "items": [{}]}))
                .unwrap_err(),
            "field `items[0]`: missing required field `name`\nfield `total`: \"one\" is not of type \"integer\""
        );
        assert_eq!(
            check.check(&json!([1])).unwrap_err(),
            "[1] is not of type \"object\""
        );
    }

    #[test]
    fn argument_errors_name_the_argument() {
        let schema = json!({
            "type": "object",
            "properties": {"id": {"type": "integer"}, "tags": {"type": "array", "items": {"type": "string"}}},
            "required": ["id"],
            "additionalProperties": false
        });
        let check = ArgumentCheck::new(&schema).unwrap();
        assert_eq!(check.check(&json!({"id": 1})), Ok(()));
        assert_eq!(
            check.check(&json!({})).unwrap_err(),
            "missing required argument `id`"
        );
        assert_eq!(
            check.check(&json!({"id": "abc"})).unwrap_err(),
            "argument `id`: \"abc\" is not of type \"integer\""
        );
        assert_eq!(
            check
                .check(&json!({"id": 1, "tags": ["a", 2]}))
                .unwrap_err(),
            "argument `tags[1]`: 2 is not of type \"string\""
        );
        assert_eq!(
            check.check(&json!({"id": 1, "colour": "red"})).unwrap_err(),
            "unknown argument `colour`; expected one of `id`, `tags`"
        );
    }
}
