use super::*;
use serde_json::json;

use Severity::{Additive, Breaking, Cosmetic};

fn change(severity: Severity, at: &str, detail: &str) -> Change {
    super::change(severity, at, detail)
}

fn tool(name: &str, input: Value) -> Value {
    json!({ "name": name, "description": "Does a thing.", "inputSchema": input })
}

fn manifest(tools: Vec<Value>) -> Value {
    json!({ "tools": tools })
}

/// A closed argument object, as the registry emits it.
fn args(properties: Value, required: &[&str]) -> Value {
    json!({ "type": "object", "properties": properties, "required": required,
            "additionalProperties": false })
}

fn inputs(old: Value, new: Value) -> Vec<Change> {
    diff(
        &manifest(vec![tool("t", old)]),
        &manifest(vec![tool("t", new)]),
    )
}

fn outputs(old: Value, new: Value) -> Vec<Change> {
    let with = |output: Value| {
        let mut t = tool("t", args(json!({}), &[]));
        t["outputSchema"] = output;
        manifest(vec![t])
    };
    diff(&with(old), &with(new))
}

/// An output object: not closed, as schemars derives a return type.
fn object(properties: Value, required: &[&str]) -> Value {
    json!({ "type": "object", "properties": properties, "required": required })
}

mod beside;
mod compositions;
mod definitions;
mod inputs;
mod outputs;

/// Tools built by the real registry from schemars-derived types.
mod registry;

#[test]
fn identical_manifests_have_no_changes() {
    let m = manifest(vec![
        tool("a", args(json!({ "x": { "type": "string" } }), &["x"])),
        tool("b", args(json!({}), &[])),
    ]);
    assert_eq!(diff(&m, &m.clone()), vec![]);
}

#[test]
fn tool_order_does_not_matter() {
    let (a, b) = (
        tool("a", args(json!({}), &[])),
        tool("b", args(json!({}), &[])),
    );
    let old = manifest(vec![a.clone(), b.clone()]);
    let new = manifest(vec![b, a]);
    assert_eq!(diff(&old, &new), vec![]);
}

#[test]
fn a_removed_tool_breaks_and_a_new_one_adds() {
    let old = manifest(vec![
        tool("a", args(json!({}), &[])),
        tool("b", args(json!({}), &[])),
    ]);
    let new = manifest(vec![
        tool("a", args(json!({}), &[])),
        tool("c", args(json!({}), &[])),
    ]);
    assert_eq!(
        diff(&old, &new),
        vec![
            change(Breaking, "b", "tool removed"),
            change(Additive, "c", "tool added"),
        ]
    );
}

#[test]
fn descriptions_titles_and_hints_are_cosmetic() {
    let old = manifest(vec![json!({
        "name": "t", "title": "T", "description": "Does a thing.",
        "inputSchema": args(json!({ "a": { "type": "string", "description": "A." } }), &[]),
        "annotations": { "readOnlyHint": true, "idempotentHint": true }
    })]);
    let new = manifest(vec![json!({
        "name": "t", "title": "The T", "description": "Does a thing well.",
        "inputSchema": args(json!({ "a": { "type": "string", "description": "An a.",
                                           "title": "A" } }), &[]),
        "annotations": { "readOnlyHint": false, "openWorldHint": true }
    })]);
    assert_eq!(
        diff(&old, &new),
        vec![
            change(Cosmetic, "t", "annotation `idempotentHint` `true` -> unset"),
            change(Cosmetic, "t", "annotation `openWorldHint` unset -> `true`"),
            change(Cosmetic, "t", "annotation `readOnlyHint` `true` -> `false`"),
            change(Cosmetic, "t", "description changed"),
            change(Cosmetic, "t", "title changed"),
            change(Cosmetic, "t input /properties/a", "description changed"),
            change(Cosmetic, "t input /properties/a", "title added"),
        ]
    );
}

#[test]
fn views_and_visibility_compare_by_meaning() {
    let with = |meta: Value| {
        let mut t = tool("t", args(json!({}), &[]));
        if !meta.is_null() {
            t["_meta"] = meta;
        }
        manifest(vec![t])
    };
    let view = |uri: &str| json!({ "ui": { "resourceUri": uri } });
    assert_eq!(
        diff(&with(Value::Null), &with(view("ui://a/b.html"))),
        vec![change(Additive, "t", "view `ui://a/b.html` added")]
    );
    assert_eq!(
        diff(&with(view("ui://a/b.html")), &with(view("ui://a/c.html"))),
        vec![change(
            Cosmetic,
            "t",
            "view `ui://a/b.html` -> `ui://a/c.html`"
        )]
    );
    assert_eq!(
        diff(&with(view("ui://a/b.html")), &with(Value::Null)),
        vec![change(Cosmetic, "t", "view `ui://a/b.html` removed")]
    );
    // Visibility written out as the default it is changes nothing.
    assert_eq!(
        diff(
            &with(Value::Null),
            &with(json!({ "ui": { "visibility": ["model", "app"] } }))
        ),
        vec![]
    );
    assert_eq!(
        diff(
            &with(Value::Null),
            &with(json!({ "ui": { "visibility": ["app"] } }))
        ),
        vec![change(Breaking, "t", "hidden from the model")]
    );
    assert_eq!(
        diff(
            &with(json!({ "ui": { "visibility": ["app"] } })),
            &with(json!({ "ui": { "visibility": ["model"] } }))
        ),
        vec![
            change(Breaking, "t", "no longer callable from the app"),
            change(Additive, "t", "now visible to the model"),
        ]
    );
    assert_eq!(
        diff(
            &with(json!({ "vendor/x": 1 })),
            &with(json!({ "vendor/x": 2, "vendor/y": true }))
        ),
        vec![
            change(Cosmetic, "t", "`_meta` `vendor/x` changed"),
            change(Cosmetic, "t", "`_meta` `vendor/y` added"),
        ]
    );
    assert_eq!(
        diff(
            &with(view("ui://a/b.html")),
            &with(json!({ "ui": { "resourceUri": "ui://a/b.html", "csp": {} } }))
        ),
        vec![change(Cosmetic, "t", "`_meta` `ui.csp` added")]
    );
    assert_eq!(
        diff(&with(json!({ "ui": "x" })), &with(json!({ "ui": "y" }))),
        vec![change(Cosmetic, "t", "`_meta` `ui` changed")]
    );
}

#[test]
fn a_scope_asked_for_breaks_and_one_no_longer_asked_for_adds() {
    let with = |scopes: &[&str]| {
        let mut t = tool("t", args(json!({}), &[]));
        if !scopes.is_empty() {
            let schemes = json!([{ "type": "oauth2", "scopes": scopes }]);
            t["securitySchemes"] = schemes.clone();
            t["_meta"] = json!({ "securitySchemes": schemes });
        }
        manifest(vec![t])
    };
    assert_eq!(
        diff(&with(&[]), &with(&["notes:write"])),
        vec![change(Breaking, "t", "scope `notes:write` now required")]
    );
    assert_eq!(
        diff(
            &with(&["notes:read", "notes:write"]),
            &with(&["notes:admin", "notes:read"])
        ),
        vec![
            change(Breaking, "t", "scope `notes:admin` now required"),
            change(Additive, "t", "scope `notes:write` no longer required"),
        ]
    );
    assert_eq!(
        diff(&with(&["notes:write"]), &with(&[])),
        vec![change(
            Additive,
            "t",
            "scope `notes:write` no longer required"
        )]
    );
    assert_eq!(diff(&with(&["a", "b"]), &with(&["b", "a"])), vec![]);
}

#[test]
fn task_support_compares_by_what_each_call_may_ask() {
    let with = |execution: Value| {
        let mut t = tool("t", args(json!({}), &[]));
        if !execution.is_null() {
            t["execution"] = execution;
        }
        manifest(vec![t])
    };
    let support = |s: &str| with(json!({ "taskSupport": s }));
    let none = || with(Value::Null);
    let changed = |old: Value, new: Value| diff(&old, &new);
    assert_eq!(
        changed(none(), support("optional")),
        vec![change(
            Additive,
            "t",
            "task support `forbidden` -> `optional`"
        )]
    );
    assert_eq!(
        changed(support("optional"), support("required")),
        vec![change(
            Breaking,
            "t",
            "task support `optional` -> `required`"
        )]
    );
    assert_eq!(
        changed(none(), support("required")),
        vec![change(
            Breaking,
            "t",
            "task support `forbidden` -> `required`"
        )]
    );
    assert_eq!(
        changed(support("required"), support("optional")),
        vec![change(
            Additive,
            "t",
            "task support `required` -> `optional`"
        )]
    );
    assert_eq!(
        changed(support("optional"), none()),
        vec![change(
            Breaking,
            "t",
            "task support `optional` -> `forbidden`"
        )]
    );
    assert_eq!(
        changed(support("required"), support("forbidden")),
        vec![change(
            Breaking,
            "t",
            "task support `required` -> `forbidden`"
        )]
    );
    // `forbidden` written out, or `execution` without `taskSupport`, is what absent means.
    assert_eq!(changed(none(), support("forbidden")), vec![]);
    assert_eq!(changed(with(json!({})), none()), vec![]);
    // A value the protocol does not have: no way of knowing which calls still work.
    assert_eq!(
        changed(support("sometimes"), support("optional")),
        vec![change(
            Breaking,
            "t",
            "task support `sometimes` -> `optional`"
        )]
    );
    assert_eq!(
        changed(support("optional"), with(json!({ "taskSupport": true }))),
        vec![change(Breaking, "t", "task support `optional` -> `true`")]
    );
    // Other members of `execution`, and an `execution` that is not an object, are fields.
    assert_eq!(
        changed(
            support("optional"),
            with(json!({ "taskSupport": "optional", "ttl": 60 }))
        ),
        vec![change(Breaking, "t", "`execution` `ttl` added")]
    );
    assert_eq!(
        changed(none(), with(json!("tasks"))),
        vec![change(Breaking, "t", "tool field `execution` added")]
    );
}

#[test]
fn changes_display_and_sort_breaking_first() {
    let old = manifest(vec![
        tool("b", args(json!({}), &[])),
        tool("z", args(json!({}), &[])),
    ]);
    let mut new = manifest(vec![
        tool("a", args(json!({}), &[])),
        tool("b", args(json!({}), &[])),
    ]);
    new["tools"][1]["description"] = json!("Does another thing.");
    let shown: Vec<String> = diff(&old, &new).iter().map(ToString::to_string).collect();
    assert_eq!(
        shown,
        [
            "breaking: z: tool removed",
            "additive: a: tool added",
            "cosmetic: b: description changed",
        ]
    );
}
