//! Checks at call time: a call's arguments against its tool's input schema before the function
//! runs, and, in debug builds with the `validate` feature, a structured result against the
//! output schema. Messages name the argument or field, for a model to act on.
//!
//! Arguments are checked with every feature set: toolwright's own validator
//! ([`super::validator`]) enforces what schemas commonly say; a schema that asks more is checked
//! by jsonschema with the `validate` feature and refused at start without it.

use std::fmt;

use serde_json::Value;

use super::validator::{Problem, Unsupported, Validator, What, first_unsupported};
#[cfg(feature = "validate")]
use super::validator::{listed, shown};
use crate::content::ToolResult;

/// What is said of a member an object does not take (`noun`: `argument` at the top level,
/// `field` below it), by the schema check and, without it, when serde refuses an unknown field.
pub(crate) fn unknown(noun: &str, name: &str, expected: &[impl AsRef<str>]) -> String {
    if expected.is_empty() {
        return if noun == "argument" {
            format!("unknown argument `{name}`: this tool takes no arguments")
        } else {
            format!("unknown {noun} `{name}`: no {noun} is allowed here")
        };
    }
    let names: Vec<String> = expected
        .iter()
        .map(|name| format!("`{}`", name.as_ref()))
        .collect();
    format!(
        "unknown {noun} `{name}`; expected one of {}",
        names.join(", ")
    )
}

#[cfg(feature = "validate")]
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
///
/// toolwright's own [`Validator`] checks every schema it can compile, which is every schema
/// schemars derives and most written by hand, with or without features. A schema that asks more
/// (`if`, `dependentSchemas`, ...) is checked by jsonschema with the `validate` feature, and
/// refused without it: a server does not publish a constraint it would not keep.
pub(crate) struct ArgumentCheck {
    engine: Engine,
}

enum Engine {
    Own(Validator),
    #[cfg(feature = "validate")]
    Full {
        validator: jsonschema::Validator,
        /// The schema, for what a message says beyond the validator's words.
        schema: Value,
        /// The top-level properties, when the schema refuses any other.
        closed: Option<Vec<String>>,
    },
}

impl ArgumentCheck {
    /// The check for `schema`, or why no call could be checked against it.
    pub(crate) fn new(schema: &Value) -> Result<ArgumentCheck, CheckError> {
        let engine = match Validator::new(schema) {
            Ok(own) => Engine::Own(own),
            Err(unsupported) => full(schema, unsupported)?,
        };
        Ok(ArgumentCheck { engine })
    }

    /// Why [`ArgumentCheck::new`] would refuse `schema` for asking what no check enforces, found
    /// without compiling it (see [`first_unsupported`]).
    pub(crate) fn refusal(schema: &Value) -> Option<CheckError> {
        if cfg!(feature = "validate") {
            return None;
        }
        first_unsupported(schema).map(CheckError::Unenforceable)
    }

    /// `Ok` when the arguments are valid; otherwise every problem, one per line.
    pub(crate) fn check(&self, arguments: &Value) -> Result<(), String> {
        let problems: Vec<String> = match &self.engine {
            Engine::Own(validator) => {
                // The common case, answered without collecting problems.
                if validator.is_valid(arguments) {
                    return Ok(());
                }
                let mut problems = validator.problems(arguments);
                // Unknown arguments first, as the first thing to fix.
                problems.sort_by_key(|problem| !matches!(problem.what, What::Unknown { .. }));
                problems
                    .into_iter()
                    .map(|problem| said(problem, "argument", "arguments: "))
                    .collect()
            }
            #[cfg(feature = "validate")]
            Engine::Full {
                validator,
                schema,
                closed,
            } => {
                if validator.is_valid(arguments) {
                    return Ok(());
                }
                let mut problems = Vec::new();
                if let (Some(expected), Value::Object(given)) = (closed, arguments) {
                    for key in given.keys().filter(|k| !expected.contains(k)) {
                        problems.push(unknown("argument", key, expected));
                    }
                }
                for error in validator.iter_errors(arguments) {
                    // Reported above, with the expected names.
                    if matches!(
                        error.kind(),
                        jsonschema::error::ValidationErrorKind::AdditionalProperties { .. }
                    ) && error.instance_path().as_str().is_empty()
                        && closed.is_some()
                    {
                        continue;
                    }
                    problems.push(problem(&error, schema, "argument", "arguments: "));
                }
                problems
            }
        };
        if problems.is_empty() {
            Ok(())
        } else {
            Err(problems.join("\n"))
        }
    }
}

/// Why no call could be checked against a schema.
#[derive(Debug)]
pub(crate) enum CheckError {
    /// It asks what toolwright's validator does not enforce, and the `validate` feature is off.
    Unenforceable(Unsupported),
    /// jsonschema does not compile it.
    #[cfg_attr(not(feature = "validate"), allow(dead_code))]
    Invalid(String),
}

impl fmt::Display for CheckError {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            CheckError::Unenforceable(Unsupported { at, reason }) if at.is_empty() => {
                write!(f, "it cannot be enforced: {reason}")
            }
            CheckError::Unenforceable(Unsupported { at, reason }) => {
                write!(f, "it cannot be enforced: at `{at}`, {reason}")
            }
            CheckError::Invalid(error) => f.write_str(error),
        }
    }
}

/// The check of a schema toolwright's validator does not cover: jsonschema's, with the
/// `validate` feature.
#[cfg(feature = "validate")]
fn full(schema: &Value, _: Unsupported) -> Result<Engine, CheckError> {
    let closed = (schema.get("additionalProperties") == Some(&Value::Bool(false))).then(|| {
        schema
            .get("properties")
            .and_then(Value::as_object)
            .map(|p| p.keys().cloned().collect())
            .unwrap_or_default()
    });
    Ok(Engine::Full {
        validator: validator(schema).map_err(CheckError::Invalid)?,
        schema: schema.clone(),
        closed,
    })
}

/// Without the `validate` feature, a schema toolwright's validator does not cover is refused.
#[cfg(not(feature = "validate"))]
fn full(_: &Value, unsupported: Unsupported) -> Result<Engine, CheckError> {
    Err(CheckError::Unenforceable(unsupported))
}

/// A problem toolwright's validator found, for a message: where it is, as a `noun` (`argument`,
/// `field`) and its path, or `root` before a problem of the whole value.
fn said(problem: Problem, noun: &str, root: &str) -> String {
    let path = argument_path(&problem.at);
    match (problem.what, path) {
        (What::Missing(name), None) => format!("missing required {noun} `{name}`"),
        (What::Missing(name), Some(path)) => {
            format!("{noun} `{path}`: missing required field `{name}`")
        }
        (What::Unknown { name, expected }, None) => unknown(noun, &name, &expected),
        (What::Unknown { name, expected }, Some(path)) => {
            format!("{noun} `{path}`: {}", unknown("field", &name, &expected))
        }
        (What::Said(text), None) => format!("{root}{text}"),
        (What::Said(text), Some(path)) => format!("{noun} `{path}`: {text}"),
    }
}

/// Checks a tool's structured results against its output schema, with messages that say where
/// the result went wrong. It checks in debug builds with `validate` only: it catches a tool that
/// breaks its own contract during development, before a client trips on it; elsewhere it is
/// empty and passes everything.
pub(crate) struct OutputCheck {
    /// The validator, and the schema it checks.
    #[cfg(all(debug_assertions, feature = "validate"))]
    validator: Option<(jsonschema::Validator, Value)>,
}

impl OutputCheck {
    /// The check for a tool with this output schema, if it has one.
    #[cfg_attr(
        not(all(debug_assertions, feature = "validate")),
        allow(clippy::unnecessary_wraps)
    )]
    pub(crate) fn new(schema: Option<&Value>) -> Result<OutputCheck, String> {
        #[cfg(all(debug_assertions, feature = "validate"))]
        let check = OutputCheck {
            validator: schema
                .map(|schema| match jsonschema::draft202012::new(schema) {
                    Ok(validator) => Ok((validator, schema.clone())),
                    Err(error) => Err(error.to_string()),
                })
                .transpose()?,
        };
        #[cfg(not(all(debug_assertions, feature = "validate")))]
        let check = {
            let _ = schema;
            OutputCheck {}
        };
        Ok(check)
    }

    /// `Ok` for a tool without an output schema, for a tool error, and for a successful result
    /// whose `structuredContent` matches the schema; otherwise every problem, one per line.
    pub(crate) fn check(&self, result: &ToolResult) -> Result<(), String> {
        #[cfg(all(debug_assertions, feature = "validate"))]
        if let Some((validator, schema)) = &self.validator
            && !result.is_error()
        {
            return match result.structured_content() {
                Some(value) => problems(validator, schema, value),
                None => Err("the result has no `structuredContent`".to_owned()),
            };
        }
        let _ = result;
        Ok(())
    }
}

/// Every way `value` breaks the output schema, one per line.
#[cfg(all(debug_assertions, feature = "validate"))]
fn problems(
    validator: &jsonschema::Validator,
    schema: &Value,
    value: &Value,
) -> Result<(), String> {
    let problems: Vec<String> = validator
        .iter_errors(value)
        .map(|error| problem(&error, schema, "field", ""))
        .collect();
    if problems.is_empty() {
        Ok(())
    } else {
        Err(problems.join("\n"))
    }
}

/// One problem the validator found, for a message: where it is, as a `noun` (`argument`,
/// `field`) and its path, or `root` before a problem of the whole value.
#[cfg(feature = "validate")]
fn problem(
    error: &jsonschema::ValidationError<'_>,
    schema: &Value,
    noun: &str,
    root: &str,
) -> String {
    use jsonschema::error::ValidationErrorKind as Kind;
    // An enum whose variants are documented is a `oneOf` of `const`s: say its values, as for an
    // `enum`, rather than that no branch matched.
    let allowed = match error.kind() {
        Kind::OneOfNotValid { .. } | Kind::AnyOf { .. } => {
            constants(schema, error.schema_path().as_str())
        }
        _ => None,
    };
    let what = match (error.kind(), allowed) {
        (_, Some(allowed)) => What::Said(format!(
            "{} is not one of {allowed}",
            shown(error.instance())
        )),
        (Kind::Required { property }, None) => {
            What::Missing(property.as_str().unwrap_or("?").to_owned())
        }
        (_, None) => What::Said(masked(error)),
    };
    let at = error.instance_path().as_str().to_owned();
    said(Problem { at, what }, noun, root)
}

/// The values a `oneOf` or `anyOf` at `pointer` allows, when each of its branches is one value
/// (`const`, or an `enum` of one): `"a", "b" or "c"`.
#[cfg(feature = "validate")]
fn constants(schema: &Value, pointer: &str) -> Option<String> {
    let branches = schema.pointer(pointer)?.as_array()?;
    let values: Option<Vec<Value>> = branches
        .iter()
        .map(|branch| match (branch.get("const"), branch.get("enum")) {
            (Some(value), _) => Some(value.clone()),
            (None, Some(Value::Array(one))) if one.len() == 1 => Some(one[0].clone()),
            _ => None,
        })
        .collect();
    Some(listed(&values?)).filter(|listed| !listed.is_empty())
}

/// What the validator says, with the value it speaks of cut short: a message echoes what the
/// client sent, which may be long.
#[cfg(feature = "validate")]
fn masked(error: &jsonschema::ValidationError<'_>) -> String {
    error.masked_with(shown(error.instance())).to_string()
}

/// `/tags/0/name` as `tags[0].name`; `None` for the root.
fn argument_path(pointer: &str) -> Option<String> {
    let mut tokens = pointer.split('/').skip(1).map(super::unescape_pointer);
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

/// A message for problems found, one per line: on one line for one problem, a list for several.
pub(crate) fn problem_list(head: &str, problems: &str) -> String {
    if problems.contains('\n') {
        format!("{head}:\n- {}", problems.replace('\n', "\n- "))
    } else {
        format!("{head}: {problems}")
    }
}

/// Checks a schema against the meta-schema of its dialect: a literal input schema at every start,
/// a derived one in debug builds.
#[cfg(feature = "validate")]
pub(crate) fn meta_schema(schema: &Value) -> Result<(), String> {
    jsonschema::meta::validate(schema).map_err(|error| error.to_string())
}

/// Without `validate`, nothing is checked against a meta-schema.
#[cfg(not(feature = "validate"))]
pub(crate) fn meta_schema(_: &Value) -> Result<(), String> {
    Ok(())
}

#[cfg(test)]
mod tests {
    use serde_json::json;

    use super::*;

    #[test]
    #[cfg(all(debug_assertions, feature = "validate"))]
    fn output_errors_name_the_field() {
        let schema = json!({
            "type": "object",
            "properties": {
                "total": {"type": "integer"},
                "items": {"type": "array", "items": {"type": "object", "properties": {"name": {"type": "string"}}, "required": ["name"]}}
            },
            "required": ["total"]
        });
        let check = OutputCheck::new(Some(&schema)).unwrap();
        let structured = |value: Value| ToolResult::text("").with_structured(value);
        assert_eq!(
            check.check(&structured(json!({"total": 1, "items": [{"name": "a"}]}))),
            Ok(())
        );
        assert_eq!(
            check.check(&structured(json!({}))).unwrap_err(),
            "missing required field `total`"
        );
        assert_eq!(
            check
                .check(&structured(json!({"total": "one", "items": [{}]})))
                .unwrap_err(),
            "field `items[0]`: missing required field `name`\nfield `total`: \"one\" is not of type \"integer\""
        );
        assert_eq!(
            check.check(&structured(json!([1]))).unwrap_err(),
            "[1] is not of type \"object\""
        );
        assert_eq!(
            check.check(&ToolResult::text("no structure")).unwrap_err(),
            "the result has no `structuredContent`"
        );
        assert_eq!(check.check(&ToolResult::error("failed")), Ok(()));
    }

    #[test]
    fn a_documented_enum_says_its_values_as_a_plain_one_does() {
        // What schemars makes of an enum whose variants carry doc comments, and of one without.
        let schema = json!({
            "type": "object",
            "properties": {
                "documented": {"oneOf": [
                    {"type": "string", "const": "low", "description": "Quietly."},
                    {"type": "string", "const": "high", "description": "Loudly."},
                    {"type": "string", "enum": ["off"], "description": "Not at all."},
                ]},
                "plain": {"type": "string", "enum": ["low", "high", "off"]},
            },
        });
        let check = ArgumentCheck::new(&schema).unwrap();
        assert_eq!(
            check.check(&json!({"documented": "loud"})).unwrap_err(),
            r#"argument `documented`: "loud" is not one of "low", "high" or "off""#
        );
        assert_eq!(
            check.check(&json!({"plain": "loud"})).unwrap_err(),
            r#"argument `plain`: "loud" is not one of "low", "high" or "off""#
        );
        // A `oneOf` of schemas that are not values keeps the validator's words.
        let shapes = json!({"oneOf": [{"type": "string"}, {"type": "integer"}]});
        let check = ArgumentCheck::new(&json!({"properties": {"shape": shapes}})).unwrap();
        assert!(
            check
                .check(&json!({"shape": true}))
                .unwrap_err()
                .contains("is not valid under any of the schemas listed in the 'oneOf' keyword")
        );
    }

    #[test]
    fn values_in_messages_are_cut_short() {
        use super::super::validator::shown;
        assert_eq!(shown(&json!(51)), "51");
        assert_eq!(
            shown(&json!("x".repeat(100))),
            format!("\"{}…", "x".repeat(39))
        );
        let schema = json!({"type": "object", "properties": {"d": {"enum": ["a", "b"]}}});
        let check = ArgumentCheck::new(&schema).unwrap();
        let refused = check.check(&json!({"d": "y".repeat(10_000)})).unwrap_err();
        assert!(refused.len() < 120, "{refused}");
    }

    #[test]
    fn nested_members_items_and_options_are_named_by_their_path() {
        // As schemars derives `address: Address`, `items: Vec<Item>` and `owner: Option<Person>`
        // (a struct in `$defs`, as a recursive one stays).
        let schema = json!({
            "type": "object",
            "properties": {
                "address": {
                    "type": "object",
                    "properties": {"city": {"type": "string"}, "zip": {"type": "string", "pattern": "^[0-9]{5}$"}},
                    "required": ["city"],
                    "additionalProperties": false
                },
                "items": {"type": "array", "items": {"$ref": "#/$defs/Item"}},
                "owner": {"anyOf": [{"$ref": "#/$defs/Person"}, {"type": "null"}]},
                "limit": {"type": ["integer", "null"], "minimum": 1, "maximum": 100}
            },
            "$defs": {
                "Item": {"type": "object", "properties": {"qty": {"type": "integer", "minimum": 0}, "parts": {"type": "array", "items": {"$ref": "#/$defs/Item"}}}, "required": ["qty"]},
                "Person": {"type": "object", "properties": {"name": {"type": "string", "minLength": 1}}, "required": ["name"]}
            },
            "additionalProperties": false
        });
        let check = ArgumentCheck::new(&schema).unwrap();
        let refused = |arguments: Value| check.check(&arguments).unwrap_err();
        assert_eq!(
            check.check(&json!({"address": {"city": "Oslo"}, "owner": null, "limit": 3.0})),
            Ok(())
        );
        assert_eq!(
            refused(json!({"address": {"city": 7}})),
            "argument `address.city`: 7 is not of type \"string\""
        );
        assert_eq!(
            refused(json!({"address": {"zip": "ab"}})),
            "argument `address`: missing required field `city`\n\
             argument `address.zip`: \"ab\" does not match \"^[0-9]{5}$\""
        );
        assert_eq!(
            refused(json!({"address": {"city": "Oslo", "country": "NO"}})),
            "argument `address`: unknown field `country`; expected one of `city`, `zip`"
        );
        assert_eq!(
            refused(json!({"items": [{"qty": 1}, {"qty": 2, "parts": [{"qty": -1}]}]})),
            "argument `items[1].parts[0].qty`: -1 is less than the minimum of 0"
        );
        assert_eq!(
            refused(json!({"owner": {"name": ""}})),
            "argument `owner.name`: \"\" is shorter than 1 character"
        );
        assert_eq!(
            refused(json!({"owner": "Ada"})),
            "argument `owner`: \"Ada\" is not valid under any of the schemas listed in the \
             'anyOf' keyword"
        );
        assert_eq!(
            refused(json!({"limit": 101})),
            "argument `limit`: 101 is greater than the maximum of 100"
        );
        assert_eq!(
            refused(json!({"limit": "two"})),
            "argument `limit`: \"two\" is not of types \"integer\", \"null\""
        );
        assert_eq!(
            refused(json!([])),
            "arguments: [] is not of type \"object\""
        );
    }

    #[test]
    fn the_keywords_of_a_literal_schema_are_enforced() {
        let schema = json!({
            "type": "object",
            "properties": {
                "tags": {"type": "array", "items": {"type": "string"}, "minItems": 1, "maxItems": 2, "uniqueItems": true},
                "ratio": {"type": "number", "exclusiveMinimum": 0, "exclusiveMaximum": 1},
                "step": {"type": "integer", "multipleOf": 5},
                "mode": {"const": "fast"},
                "labels": {"type": "object", "additionalProperties": {"type": "string"}, "maxProperties": 1},
                "point": {"type": "array", "prefixItems": [{"type": "number"}, {"type": "number"}], "items": false},
                "either": {"oneOf": [{"type": "integer"}, {"type": "number"}]},
                "other": {"not": {"type": "null"}}
            }
        });
        let check = ArgumentCheck::new(&schema).unwrap();
        let refused = |arguments: Value| check.check(&arguments).unwrap_err();
        assert_eq!(
            check.check(&json!({"tags": ["a"], "ratio": 0.5, "step": 10, "mode": "fast", "point": [1, 2], "either": 1.5})),
            Ok(())
        );
        assert_eq!(
            refused(json!({"tags": []})),
            "argument `tags`: [] has less than 1 item"
        );
        assert_eq!(
            refused(json!({"tags": ["a", "a"]})),
            "argument `tags`: [\"a\",\"a\"] has non-unique elements"
        );
        assert_eq!(
            refused(json!({"ratio": 1})),
            "argument `ratio`: 1 is greater than or equal to the maximum of 1"
        );
        assert_eq!(
            refused(json!({"step": 7})),
            "argument `step`: 7 is not a multiple of 5"
        );
        assert_eq!(
            refused(json!({"mode": "slow"})),
            "argument `mode`: \"fast\" was expected"
        );
        assert_eq!(
            refused(json!({"labels": {"a": "x", "b": 2}})),
            "argument `labels`: {\"a\":\"x\",\"b\":2} has more than 1 property\n\
             argument `labels.b`: 2 is not of type \"string\""
        );
        assert_eq!(
            refused(json!({"point": [1, 2, 3]})),
            "argument `point[2]`: 3 is not allowed"
        );
        assert_eq!(
            refused(json!({"either": 2})),
            "argument `either`: 2 is valid under more than one of the schemas listed in the \
             'oneOf' keyword"
        );
        assert_eq!(
            refused(json!({"other": null})),
            "argument `other`: {\"type\":\"null\"} is not allowed for null"
        );
    }

    #[test]
    fn a_literal_schema_that_refuses_unknown_arguments_names_them() {
        let schema = json!({"type": "object", "properties": {"text": {"type": "string"}}, "additionalProperties": false});
        let check = ArgumentCheck::new(&schema).unwrap();
        assert_eq!(
            check.check(&json!({"nope": 1})).unwrap_err(),
            "unknown argument `nope`; expected one of `text`"
        );
        let none =
            ArgumentCheck::new(&json!({"type": "object", "additionalProperties": false})).unwrap();
        assert_eq!(
            none.check(&json!({"nope": 1})).unwrap_err(),
            "unknown argument `nope`: this tool takes no arguments"
        );
    }

    #[test]
    fn a_schema_beyond_the_own_validator_needs_the_validate_feature() {
        let schema = json!({
            "type": "object",
            "properties": {"kind": {"type": "string"}, "size": {"type": "integer"}},
            "if": {"properties": {"kind": {"const": "box"}}},
            "then": {"required": ["size"]}
        });
        let check = ArgumentCheck::new(&schema);
        #[cfg(feature = "validate")]
        assert!(check.unwrap().check(&json!({"kind": "box"})).is_err());
        #[cfg(not(feature = "validate"))]
        assert_eq!(
            check.err().unwrap().to_string(),
            "it cannot be enforced: at `/if`, `if` is checked only with toolwright's `validate` \
             feature"
        );
        let remote = json!({"properties": {"a": {"$ref": "https://example.com/a.json"}}});
        #[cfg(not(feature = "validate"))]
        assert_eq!(
            ArgumentCheck::new(&remote).err().unwrap().to_string(),
            "it cannot be enforced: at `/properties/a/$ref`, `$ref` to \
             `https://example.com/a.json`, which is not a place in this schema, is checked only \
             with toolwright's `validate` feature"
        );
        #[cfg(feature = "validate")]
        let _ = remote;
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
