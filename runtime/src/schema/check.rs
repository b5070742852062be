//! Checks at call time: a call's arguments against its tool's input schema before the function
//! runs, and, in debug builds, a structured result against the output schema. Messages name the
//! argument or field, for a model to act on.
//!
//! The checks need the `validate` feature (off by default), which brings `jsonschema`. Without
//! it, [`ArgumentCheck`] checks nothing: arguments reach the function as serde reads them, whose
//! errors are less precise; a literal input schema is served but not enforced, and a derived one
//! whose constraints serde does not check is named, both in the manifest's notes.

use serde_json::Value;

use crate::content::ToolResult;

/// What is said of an argument the tool does not take, by the schema check and, without it,
/// when serde refuses an unknown field.
pub(crate) fn unknown_argument(name: &str, expected: &[impl AsRef<str>]) -> String {
    if expected.is_empty() {
        return format!("unknown argument `{name}`: this tool takes no arguments");
    }
    let names: Vec<String> = expected
        .iter()
        .map(|name| format!("`{}`", name.as_ref()))
        .collect();
    format!(
        "unknown argument `{name}`; expected one of {}",
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
#[cfg(feature = "validate")]
pub(crate) struct ArgumentCheck {
    validator: jsonschema::Validator,
    /// The schema, for what a message says beyond the validator's words.
    schema: Value,
    /// The top-level properties, when the schema refuses any other.
    closed: Option<Vec<String>>,
}

#[cfg(feature = "validate")]
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
        Ok(ArgumentCheck {
            validator,
            schema: schema.clone(),
            closed,
        })
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
                problems.push(unknown_argument(key, expected));
            }
        }
        for error in self.validator.iter_errors(arguments) {
            // Reported above, with the expected names.
            if matches!(
                error.kind(),
                jsonschema::error::ValidationErrorKind::AdditionalProperties { .. }
            ) && error.instance_path().as_str().is_empty()
                && self.closed.is_some()
            {
                continue;
            }
            problems.push(problem(&error, &self.schema, "argument", "arguments: "));
        }
        if problems.is_empty() {
            Ok(())
        } else {
            Err(problems.join("\n"))
        }
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
    let path = argument_path(error.instance_path().as_str());
    // An enum whose variants are documented is a `oneOf` of `const`s: say its values, as for an
    // `enum`, rather than that no branch matched.
    let allowed = match error.kind() {
        Kind::OneOfNotValid { .. } | Kind::AnyOf { .. } => {
            constants(schema, error.schema_path().as_str())
        }
        _ => None,
    };
    if let Some(allowed) = allowed {
        let value = shown(error.instance());
        return match path {
            Some(path) => format!("{noun} `{path}`: {value} is not one of {allowed}"),
            None => format!("{root}{value} is not one of {allowed}"),
        };
    }
    match (error.kind(), path) {
        (Kind::Required { property }, None) => format!(
            "missing required {noun} `{}`",
            property.as_str().unwrap_or("?")
        ),
        (Kind::Required { property }, Some(path)) => format!(
            "{noun} `{path}`: missing required field `{}`",
            property.as_str().unwrap_or("?")
        ),
        (_, Some(path)) => format!("{noun} `{path}`: {}", masked(error)),
        (_, None) => format!("{root}{}", masked(error)),
    }
}

/// The values a `oneOf` or `anyOf` at `pointer` allows, when each of its branches is one value
/// (`const`, or an `enum` of one): `"a", "b" or "c"`.
#[cfg(feature = "validate")]
fn constants(schema: &Value, pointer: &str) -> Option<String> {
    let branches = schema.pointer(pointer)?.as_array()?;
    let values: Option<Vec<String>> = branches
        .iter()
        .map(|branch| match (branch.get("const"), branch.get("enum")) {
            (Some(value), _) => Some(value.to_string()),
            (None, Some(Value::Array(one))) if one.len() == 1 => Some(one[0].to_string()),
            _ => None,
        })
        .collect();
    match values?.as_slice() {
        [] => None,
        [one] => Some(one.clone()),
        [init @ .., last] => Some(format!("{} or {last}", init.join(", "))),
    }
}

/// What the validator says, with the value it speaks of cut short: a message echoes what the
/// client sent, which may be long.
#[cfg(feature = "validate")]
fn masked(error: &jsonschema::ValidationError<'_>) -> String {
    error.masked_with(shown(error.instance())).to_string()
}

/// A value the client sent, for a message: as JSON, cut short past 40 characters.
#[cfg(feature = "validate")]
fn shown(value: &Value) -> String {
    const MAX: usize = 40;
    let text = value.to_string();
    match text.char_indices().nth(MAX) {
        Some((end, _)) => format!("{}…", &text[..end]),
        None => text,
    }
}

/// `/tags/0/name` as `tags[0].name`; `None` for the root.
#[cfg(feature = "validate")]
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

/// Without `validate`, arguments are not checked against the schema: serde reads them.
#[cfg(not(feature = "validate"))]
pub(crate) struct ArgumentCheck;

#[cfg(not(feature = "validate"))]
impl ArgumentCheck {
    pub(crate) fn new(_: &Value) -> Result<ArgumentCheck, String> {
        Ok(ArgumentCheck)
    }

    pub(crate) fn check(&self, _: &Value) -> Result<(), String> {
        Ok(())
    }
}

#[cfg(all(test, feature = "validate"))]
mod tests {
    use serde_json::json;

    use super::*;

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
