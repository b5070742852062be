//! What changed between two manifests, and what each change means for a client of the old one.
//!
//! The rules are documented on [`diff`], which is public where this module is not.

use std::collections::{BTreeMap, BTreeSet};
use std::fmt;

use crate::apps::ToolMeta;
use crate::schema::ranges::formats_as_ranges;
use serde_json::{Map, Value};

use comparison::{Flow, Schemas};

mod beside;
mod comparison;
mod keywords;
mod node;
mod schema;
#[cfg(test)]
mod tests;
mod values;

/// How a change affects a client written against the old manifest.
///
/// Ordered by how much it matters, so that sorting puts breaking changes first.
#[derive(Clone, Copy, Debug, PartialEq, Eq, PartialOrd, Ord, Hash)]
pub enum Severity {
    /// A call that worked, or a reading of a result that worked, may now fail.
    Breaking,
    /// Something new is possible, and everything that worked still works.
    Additive,
    /// Only what people and models read changed: descriptions, titles, hints.
    Cosmetic,
}

impl fmt::Display for Severity {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(match self {
            Severity::Breaking => "breaking",
            Severity::Additive => "additive",
            Severity::Cosmetic => "cosmetic",
        })
    }
}

/// One difference between two manifests.
///
/// Displays as `` breaking: get_note input /properties/id: type `string` -> `integer` ``.
///
/// The derived order is the order [`diff`] returns: by severity, then place, then detail.
#[derive(Clone, Debug, PartialEq, Eq, PartialOrd, Ord, Hash)]
pub struct Change {
    /// How it affects clients of the old manifest.
    pub severity: Severity,
    /// Where: the tool's name, or the name, `input` or `output`, and a JSON pointer into the
    /// schema (`get_note input /properties/note`); the schema's root has no pointer.
    pub at: String,
    /// What changed, in a few lowercase words, with names in backticks.
    pub detail: String,
}

impl fmt::Display for Change {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(f, "{}: {}: {}", self.severity, self.at, self.detail)
    }
}

impl Change {
    /// How many changes there are of each severity, in one line: `3 changes: 1 breaking, 2
    /// additive, 0 cosmetic`.
    pub fn summary(changes: &[Change]) -> String {
        let count = |severity: Severity| changes.iter().filter(|c| c.severity == severity).count();
        format!(
            "{} change{}: {} {}, {} {}, {} {}",
            changes.len(),
            if changes.len() == 1 { "" } else { "s" },
            count(Severity::Breaking),
            Severity::Breaking,
            count(Severity::Additive),
            Severity::Additive,
            count(Severity::Cosmetic),
            Severity::Cosmetic,
        )
    }
}

/// Every change from the manifest `old` to the manifest `new`, sorted by severity (breaking
/// first), then place, then detail.
///
/// A manifest is a `{ "tools": [...] }` object, with `prompts`, `resources` and
/// `resourceTemplates` beside when it has them: [`Manifest::as_json`](crate::manifest::Manifest::as_json)
/// of a build, or one a client saved. Tools and prompts are matched by name, resources by URI and
/// templates by URI template, whatever their order, and identical manifests give no changes.
///
/// A tool *reads* its arguments and the caller *reads* its structured output, so the two schemas
/// compare in opposite directions. An input that accepts less than before (*narrowed*) refuses
/// calls that used to work; an output that may hold more than before (*widened*) hands callers
/// values they were not written for. Both break clients. The reverse of each is additive.
///
/// # Where a change is
///
/// [`Change::at`] is the tool's name for a change to the tool itself, and otherwise the name,
/// `input` or `output`, and the JSON pointer of the place in the schema:
/// `get_note input /properties/note/properties/id`. The pointer is into the new schema, or into
/// the old one for what is gone. Local `$ref`s (`#/$defs/...`, any `#/...` pointer) are followed
/// within each tool's own schema before comparing, so a changed definition is reported where it
/// is used, at every place it is used, and two tools may each have a definition of the same name
/// that means something different. Each pair of definitions is compared once: the first place
/// that uses it lists its changes, and every other place says ``same changes as at `/pointer` ``
/// with the gravest of their severities. A recursive definition stops where it comes round.
///
/// # Rules
///
/// Changes to the tool object itself:
///
/// | change | detail | severity |
/// | --- | --- | --- |
/// | a tool is removed | `tool removed` | breaking |
/// | a tool is added | `tool added` | additive |
/// | `outputSchema` is removed | `structured output withdrawn` | breaking |
/// | `outputSchema` is added | `structured output added` | additive |
/// | `title`, `description` | ``description changed`` (`added`, `removed`) | cosmetic |
/// | a hint in `annotations` | ``annotation `readOnlyHint` `true` -> unset`` | cosmetic |
/// | `icons` | `icons changed` | cosmetic |
/// | an MCP Apps view (`_meta.ui.resourceUri`) is added | `` view `ui://a/b.html` added `` | additive |
/// | the view changes or is removed | `` view `ui://a/b.html` -> `ui://a/c.html` `` | cosmetic |
/// | `_meta.ui.visibility` loses `model` or `app` | `hidden from the model`, `no longer callable from the app` | breaking |
/// | `_meta.ui.visibility` gains `model` or `app` | `now visible to the model`, `now callable from the app` | additive |
/// | `securitySchemes` asks for a new OAuth scope | ``scope `notes:write` now required`` | breaking |
/// | `securitySchemes` no longer asks for a scope | ``scope `notes:write` no longer required`` | additive |
/// | any other `_meta` member, or of `_meta.ui` | `` `_meta` `anthropic/alwaysLoad` changed ``, `` `_meta` `ui.csp` added `` | cosmetic |
/// | `execution.taskSupport` becomes `optional` (from `forbidden` or `required`): each call that worked, as a task or not, still does | `` task support `forbidden` -> `optional` `` | additive |
/// | `execution.taskSupport` becomes `required` (plain calls are refused) or `forbidden` (calls asking for a task are refused) | `` task support `optional` -> `required` `` | breaking |
/// | any other member of `execution` | `` `execution` `x` changed `` | breaking |
/// | any other field | ``tool field `x` changed`` | breaking |
///
/// A tool without `execution`, or without `taskSupport` in it, is `forbidden`, as the protocol
/// has it. A `taskSupport` that is none of the three is compared as text, and any change to or
/// from it is breaking; an `execution` that is not an object is any other field.
///
/// Changes to prompts, at `prompt <name>`; the client sends the arguments, so what it may no
/// longer send, or must now send, breaks it:
///
/// | change | detail | severity |
/// | --- | --- | --- |
/// | a prompt is removed / added | `prompt removed`, `prompt added` | breaking / additive |
/// | an argument is removed | ``argument `tag` removed`` | breaking |
/// | a new required / optional argument | ``new required argument `tag` `` | breaking / additive |
/// | an argument becomes required / optional | ``argument `tag` now required`` | breaking / additive |
/// | an argument's description or title | ``argument `tag` description changed`` | cosmetic |
/// | `title`, `description`, `icons`, `_meta` | `description changed` | cosmetic |
/// | any other field | ``prompt field `x` changed`` | breaking |
///
/// Changes to resources, at `resource <uri>`, and to templates, at
/// `resource template <uriTemplate>` (a changed template is one removed and one added):
///
/// | change | detail | severity |
/// | --- | --- | --- |
/// | a resource or a template is removed / added | `resource removed`, `resource template added` | breaking / additive |
/// | `mimeType` changes or goes / appears | ``media type "text/plain" -> "text/markdown"`` | breaking / additive |
/// | `name`, `title`, `description`, `annotations`, `icons`, `size`, `_meta` (a view's sandbox) | `description changed` | cosmetic |
/// | any other field | ``resource field `x` changed`` | breaking |
///
/// Changes in a schema, at any depth; a property of the input's root object is an *argument*,
/// any other a *field*:
///
/// | change | detail | in an input | in an output |
/// | --- | --- | --- | --- |
/// | a new required property | `` new required argument `colour` ``; `` new field `id` `` | breaking | additive |
/// | a new optional property | `` new optional argument `colour` `` | additive | additive |
/// | an optional property becomes required | ``argument `a` now required``; ``field `a` now guaranteed`` | breaking | additive |
/// | a required property becomes optional | ``argument `a` now optional``; ``field `id` no longer guaranteed`` | additive | breaking |
/// | a property is removed where unknown ones are refused (`additionalProperties: false`) | ``argument `a` removed`` | breaking | |
/// | a property is removed where unknown ones are accepted | ``argument `a` removed; unknown arguments are accepted`` | additive | |
/// | a required output property is removed | ``field `id` removed`` | | breaking |
/// | an optional output property is removed | ``optional field `note` removed`` | | additive |
/// | `type` loses a type: `number` -> `integer`, any -> `string` | `` type `number` -> `integer` `` | breaking | additive |
/// | `type` gains a type: `integer` -> `number`, `string` -> any | `` type `integer` -> `number` `` | additive | breaking |
/// | `type` changes to an unrelated one; the keywords of the old type are then not reported | `` type `string` -> `integer` `` | breaking | breaking |
/// | `null` leaves `type`, or the `anyOf: [X, {"type": "null"}]` schemars writes for an `Option` goes | `no longer nullable` | breaking | additive |
/// | `null` joins `type`, or such an `anyOf` appears | `now nullable` | additive | breaking |
/// | a value leaves `enum`, `const`, or a `oneOf`/`anyOf` of `const`s (schemars' unit enums) | ``enum value `"json"` removed`` | breaking | additive |
/// | a value joins one | ``enum value `"yaml"` added`` | additive | breaking |
/// | a list of values appears / goes | `` now limited to `["a","b"]` ``; ``no longer limited to ...`` | breaking / additive | additive / breaking |
/// | `minimum`, `exclusiveMinimum`, `minLength`, `minItems`, `minProperties`, `minContains` added or raised; `maximum`, `exclusiveMaximum`, `maxLength`, `maxItems`, `maxProperties`, `maxContains` added or lowered | ``` `minLength` `1` -> `2` ```; ``` `minimum` `0` added ``` | breaking | additive |
/// | any of those bounds relaxed or removed | ``` `maximum` `10` removed ``` | additive | breaking |
/// | `multipleOf` added, or changed to a multiple (2 -> 4) | ``` `multipleOf` `2` -> `4` ``` | breaking | additive |
/// | `multipleOf` removed, or changed to a divisor (4 -> 2) | ``` `multipleOf` `4` -> `2` ``` | additive | breaking |
/// | `multipleOf` changed otherwise (2 -> 3) | ``` `multipleOf` `2` -> `3` ``` | breaking | breaking |
/// | `uniqueItems` turned on / off | `items must now be unique` | breaking / additive | additive / breaking |
/// | `pattern` added / removed | ``` `pattern` `^[a-z]+$` added ``` | breaking / additive | additive / breaking |
/// | `pattern` changed | ``` `pattern` `a` -> `b` ``` | breaking | breaking |
/// | `format` added / removed | ``format `uuid` added`` | breaking / additive | additive / breaking |
/// | a numeric format schemars writes (`uint32`, `int64`, `double`...), in a manifest of an earlier toolwright that kept them, is read as the range it stands for, as schemas are now served, and compared as bounds | ``` `maximum` `65535` -> `4294967295` ``` | as bounds | as bounds |
/// | `format` changed otherwise | `` format `uuid` -> `ulid` `` | breaking | breaking |
/// | `additionalProperties: false` added | `unknown arguments now refused`; `no longer has unlisted fields` | breaking | additive |
/// | `additionalProperties: false` removed | `unknown arguments now accepted`; `may now have unlisted fields` | additive | breaking |
/// | `additionalProperties` (a schema), `items`, each of `prefixItems` | compared in place, at their pointer | | |
/// | `prefixItems` changes length | ``` `prefixItems` changed from 2 to 3 entries ``` | breaking | breaking |
/// | `allOf`, `anyOf`, `oneOf` with as many branches as before | compared by position, at each branch's pointer | | |
/// | `anyOf`/`oneOf` gains branches, the others kept as they were (`oneOf` branches taken as disjoint, as schemars writes tagged enums) | ``` `anyOf` branch 2 added ``` | additive | breaking |
/// | `anyOf`/`oneOf` loses branches, the others kept as they were | ``` `anyOf` branch 1 removed ``` | breaking | additive |
/// | `allOf` gains / loses branches or appears / goes, the others kept as they were | ``` `allOf` branch 1 added ``` | breaking / additive | additive / breaking |
/// | `allOf`, `anyOf`, `oneOf` otherwise changed in length, or `anyOf`/`oneOf` appears or goes | ``` `anyOf` changed from 2 to 3 branches ``` | breaking | breaking |
/// | any change under `not`, `if`, `then`, `else`, `contains`, `propertyNames`, `patternProperties`, `dependentSchemas`, `unevaluatedItems`, `unevaluatedProperties`, `contentSchema`: which way is safe is not worked out | as above, at its pointer | breaking | breaking |
/// | a keyword not named here (`dependentRequired`, a `$ref` that does not resolve locally, `x-unit`) differs | ``keyword `x-unit` changed`` | breaking | breaking |
/// | `description`, `title`, `default`, `examples`, `deprecated`, `readOnly`, `writeOnly`, `$comment` | `description changed`; `` default `1` -> `2` ``; `now deprecated` | cosmetic | cosmetic |
///
/// # Example
///
/// ```
/// use serde_json::json;
/// use toolwright::manifest::{Severity, diff};
///
/// let old = json!({ "tools": [{ "name": "get_note", "description": "Get a note.",
///     "inputSchema": { "type": "object", "properties": { "id": { "type": "string" } },
///                      "required": ["id"], "additionalProperties": false } }] });
/// let mut new = old.clone();
/// new["tools"][0]["inputSchema"]["properties"]["id"]["type"] = json!("integer");
///
/// let changes = diff(&old, &new);
/// assert_eq!(changes.len(), 1);
/// assert_eq!(changes[0].severity, Severity::Breaking);
/// assert_eq!(
///     changes[0].to_string(),
///     "breaking: get_note input /properties/id: type `string` -> `integer`"
/// );
/// ```
pub fn diff(old: &Value, new: &Value) -> Vec<Change> {
    let (old_tools, new_tools) = (tools_by_name(old), tools_by_name(new));
    let mut changes = Vec::new();
    for name in old_tools.keys().filter(|n| !new_tools.contains_key(*n)) {
        changes.push(change(Severity::Breaking, name, "tool removed"));
    }
    for (name, new_tool) in &new_tools {
        match old_tools.get(name) {
            None => changes.push(change(Severity::Additive, name, "tool added")),
            Some(old_tool) => compare_tool(name, old_tool, new_tool, &mut changes),
        }
    }
    beside::compare(old, new, &mut changes);
    changes.sort();
    changes.dedup();
    changes
}

fn change(severity: Severity, at: &str, detail: impl Into<String>) -> Change {
    Change {
        severity,
        at: at.to_owned(),
        detail: detail.into(),
    }
}

/// The tools by name; a tool without a name cannot be matched and is left out, and of two with
/// one name the first counts, as a client looking a name up would find it.
fn tools_by_name(manifest: &Value) -> BTreeMap<&str, &Map<String, Value>> {
    let mut tools = BTreeMap::new();
    let listed = manifest.get("tools").and_then(Value::as_array);
    for tool in listed.into_iter().flatten() {
        if let Some(object) = tool.as_object()
            && let Some(name) = object.get("name").and_then(Value::as_str)
        {
            tools.entry(name).or_insert(object);
        }
    }
    tools
}

/// A schema with its numeric formats as ranges: a manifest written before schemas were served
/// that way still compares equal to today's.
fn ranged(schema: &Value) -> Value {
    let mut schema = schema.clone();
    formats_as_ranges(&mut schema);
    schema
}

/// A schema that allows everything: what an absent subschema means.
static TRUE: Value = Value::Bool(true);

fn compare_tool(
    name: &str,
    old: &Map<String, Value>,
    new: &Map<String, Value>,
    changes: &mut Vec<Change>,
) {
    let fields: BTreeSet<&str> = old.keys().chain(new.keys()).map(String::as_str).collect();
    for field in fields {
        let (o, n) = (old.get(field), new.get(field));
        match field {
            "name" => {}
            "title" | "description" => {
                if let Some(detail) = presence_change(field, o, n) {
                    changes.push(change(Severity::Cosmetic, name, detail));
                }
            }
            "icons" => {
                if o != n {
                    changes.push(change(Severity::Cosmetic, name, "icons changed"));
                }
            }
            "annotations" => {
                let empty = Map::new();
                let o = o.and_then(Value::as_object).unwrap_or(&empty);
                let n = n.and_then(Value::as_object).unwrap_or(&empty);
                let hints: BTreeSet<&String> = o.keys().chain(n.keys()).collect();
                for hint in hints.into_iter().filter(|h| o.get(*h) != n.get(*h)) {
                    let detail = format!(
                        "annotation `{hint}` {} -> {}",
                        shown(o.get(hint)),
                        shown(n.get(hint))
                    );
                    changes.push(change(Severity::Cosmetic, name, detail));
                }
            }
            "_meta" => compare_meta(name, o, n, changes),
            "securitySchemes" => compare_scopes(name, o, n, changes),
            "execution" => compare_execution(name, o, n, changes),
            "inputSchema" => {
                let (o, n) = (ranged(o.unwrap_or(&TRUE)), ranged(n.unwrap_or(&TRUE)));
                Schemas::compare_roots(name, "input", &o, &n, Flow::Input, changes);
            }
            "outputSchema" => {
                let at = format!("{name} output");
                match (o, n) {
                    (Some(o), Some(n)) => {
                        let (o, n) = (ranged(o), ranged(n));
                        Schemas::compare_roots(name, "output", &o, &n, Flow::Output, changes);
                    }
                    (Some(_), None) => {
                        changes.push(change(
                            Severity::Breaking,
                            &at,
                            "structured output withdrawn",
                        ));
                    }
                    (None, Some(_)) => {
                        changes.push(change(Severity::Additive, &at, "structured output added"));
                    }
                    (None, None) => {}
                }
            }
            _ => {
                if let Some(detail) = presence_change(&format!("tool field `{field}`"), o, n) {
                    changes.push(change(Severity::Breaking, name, detail));
                }
            }
        }
    }
}

/// A tool's OAuth scopes (every `oauth2` scheme's), as a set: a caller's token that had what the
/// tool asked for may lack a scope it asks for now.
fn compare_scopes(name: &str, old: Option<&Value>, new: Option<&Value>, changes: &mut Vec<Change>) {
    let scopes = |schemes: Option<&Value>| -> BTreeSet<String> {
        schemes
            .and_then(Value::as_array)
            .into_iter()
            .flatten()
            .filter(|scheme| scheme["type"] == "oauth2")
            .filter_map(|scheme| scheme["scopes"].as_array())
            .flatten()
            .filter_map(Value::as_str)
            .map(str::to_owned)
            .collect()
    };
    let (o, n) = (scopes(old), scopes(new));
    for scope in n.difference(&o) {
        let detail = format!("scope `{scope}` now required");
        changes.push(change(Severity::Breaking, name, detail));
    }
    for scope in o.difference(&n) {
        let detail = format!("scope `{scope}` no longer required");
        changes.push(change(Severity::Additive, name, detail));
    }
}

/// A tool's `execution`: its `taskSupport` by its meaning, any other member as a field a call may
/// depend on.
fn compare_execution(
    name: &str,
    old: Option<&Value>,
    new: Option<&Value>,
    changes: &mut Vec<Change>,
) {
    if [old, new].into_iter().flatten().any(|e| !e.is_object()) {
        if let Some(detail) = presence_change("tool field `execution`", old, new) {
            changes.push(change(Severity::Breaking, name, detail));
        }
        return;
    }
    let (old, new) = (old.unwrap_or(&Value::Null), new.unwrap_or(&Value::Null));
    // What clients read: absent is `forbidden`; a value that is not a string is shown as JSON.
    let task_support = |execution: &Value| match execution.get("taskSupport") {
        None => "forbidden".to_owned(),
        Some(Value::String(support)) => support.clone(),
        Some(other) => other.to_string(),
    };
    let (o, n) = (task_support(old), task_support(new));
    if o != n {
        // Only `optional` accepts both a plain call and a task: a tool that becomes it refuses
        // no call that worked; one that leaves it refuses one kind or the other.
        let severity = if n == "optional" && ["forbidden", "required"].contains(&o.as_str()) {
            Severity::Additive
        } else {
            Severity::Breaking
        };
        changes.push(change(
            severity,
            name,
            format!("task support `{o}` -> `{n}`"),
        ));
    }
    let rest = |execution: &Value| -> BTreeMap<String, Value> {
        execution
            .as_object()
            .into_iter()
            .flatten()
            .filter(|(key, _)| *key != "taskSupport")
            .map(|(key, value)| (key.clone(), value.clone()))
            .collect()
    };
    let (o, n) = (rest(old), rest(new));
    let keys: BTreeSet<&String> = o.keys().chain(n.keys()).collect();
    for key in keys {
        let what = format!("`execution` `{key}`");
        if let Some(detail) = presence_change(&what, o.get(key), n.get(key)) {
            changes.push(change(Severity::Breaking, name, detail));
        }
    }
}

/// A tool's `_meta`: its MCP Apps view and visibility by their meaning, anything else as
/// metadata that clients may show but calls do not depend on.
fn compare_meta(name: &str, old: Option<&Value>, new: Option<&Value>, changes: &mut Vec<Change>) {
    let (old, new) = (old.unwrap_or(&Value::Null), new.unwrap_or(&Value::Null));
    let (o, n) = (ToolMeta::parse(old), ToolMeta::parse(new));
    match (&o.resource_uri, &n.resource_uri) {
        (None, Some(uri)) => changes.push(change(
            Severity::Additive,
            name,
            format!("view `{uri}` added"),
        )),
        (Some(uri), None) => changes.push(change(
            Severity::Cosmetic,
            name,
            format!("view `{uri}` removed"),
        )),
        (Some(a), Some(b)) if a != b => changes.push(change(
            Severity::Cosmetic,
            name,
            format!("view `{a}` -> `{b}`"),
        )),
        _ => {}
    }
    let (o, n) = (o.visibility, n.visibility);
    for (was, is, lost, gained) in [
        (
            o.model,
            n.model,
            "hidden from the model",
            "now visible to the model",
        ),
        (
            o.app,
            n.app,
            "no longer callable from the app",
            "now callable from the app",
        ),
    ] {
        match (was, is) {
            (true, false) => changes.push(change(Severity::Breaking, name, lost)),
            (false, true) => changes.push(change(Severity::Additive, name, gained)),
            _ => {}
        }
    }
    // Everything else is shown, not relied on: the rest of `_meta`, and of an object `ui`.
    let rest = |meta: &Value| -> BTreeMap<String, Value> {
        let mut rest = BTreeMap::new();
        for (key, value) in meta.as_object().into_iter().flatten() {
            match (key.as_str(), value) {
                // The tool's own `securitySchemes` again, compared there.
                ("ui/resourceUri" | "securitySchemes", _) => {}
                ("ui", Value::Object(ui)) => rest.extend(
                    ui.iter()
                        .filter(|(k, _)| *k != "resourceUri" && *k != "visibility")
                        .map(|(k, v)| (format!("ui.{k}"), v.clone())),
                ),
                _ => {
                    rest.insert(key.clone(), value.clone());
                }
            }
        }
        rest
    };
    let (o, n) = (rest(old), rest(new));
    let keys: BTreeSet<&String> = o.keys().chain(n.keys()).collect();
    for key in keys {
        if let Some(detail) = presence_change(&format!("`_meta` `{key}`"), o.get(key), n.get(key)) {
            changes.push(change(Severity::Cosmetic, name, detail));
        }
    }
}

/// `"{what} added"`, `"... removed"` or `"... changed"`, or `None` when equal.
fn presence_change(what: &str, old: Option<&Value>, new: Option<&Value>) -> Option<String> {
    match (old, new) {
        (None, Some(_)) => Some(format!("{what} added")),
        (Some(_), None) => Some(format!("{what} removed")),
        (Some(o), Some(n)) if o != n => Some(format!("{what} changed")),
        _ => None,
    }
}

/// A value for a detail: `` `true` `` or `unset`.
fn shown(value: Option<&Value>) -> String {
    match value {
        Some(v) => format!("`{v}`"),
        None => "unset".to_owned(),
    }
}
