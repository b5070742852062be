use schemars::{JsonSchema, Schema, SchemaGenerator};

use super::*;
use crate::registration::{InputSchema, ToolRegistration};
use crate::registry::Registry;

#[expect(dead_code, reason = "only the schema is used")]
#[derive(JsonSchema)]
struct Args1 {
    /// The tree to draw.
    tree: Tree1,
    /// How to draw it.
    format: Format1,
    /// How deep to go.
    depth: Option<u32>,
}

#[expect(dead_code, reason = "only the schema is used")]
#[derive(JsonSchema)]
struct Tree1 {
    label: String,
    children: Vec<Tree1>,
}

#[expect(dead_code, reason = "only the schema is used")]
#[derive(JsonSchema)]
enum Format1 {
    /// Plain text.
    Text,
    /// An SVG picture.
    Svg,
}

#[expect(dead_code, reason = "only the schema is used")]
#[derive(JsonSchema)]
struct Args2 {
    /// The tree to draw.
    tree: Tree2,
    /// How to draw it.
    format: Format2,
    /// How deep to go.
    depth: u32,
}

#[expect(dead_code, reason = "only the schema is used")]
#[derive(JsonSchema)]
struct Tree2 {
    label: u64,
    children: Vec<Tree2>,
}

#[expect(dead_code, reason = "only the schema is used")]
#[derive(JsonSchema)]
enum Format2 {
    /// Plain text.
    Text,
    /// An SVG picture.
    Svg,
    /// A PNG picture.
    Png,
}

#[expect(dead_code, reason = "only the schema is used")]
#[derive(JsonSchema)]
struct Drawing {
    width: u32,
    tree: Tree1,
}

fn input<T: JsonSchema>(generator: &mut SchemaGenerator) -> Schema {
    generator.root_schema_for::<T>()
}

fn output<T: JsonSchema>(generator: &mut SchemaGenerator) -> Option<Schema> {
    Some(generator.root_schema_for::<T>())
}

fn draw(
    input_schema: fn(&mut SchemaGenerator) -> Schema,
    output_schema: fn(&mut SchemaGenerator) -> Option<Schema>,
) -> Value {
    let registration = Box::leak(Box::new(ToolRegistration {
        input_schema: InputSchema::Derived(input_schema),
        output_schema,
        ..crate::fixtures::tool("draw", "Draw a tree.")
    }));
    let registry = Registry::from_registrations([&*registration]).expect("valid tools");
    registry.manifest().as_json().clone()
}

#[test]
fn a_real_manifest_diffed_against_itself_is_empty() {
    let manifest = draw(input::<Args1>, output::<Drawing>);
    assert!(manifest.to_string().contains("$defs"), "{manifest}");
    assert_eq!(
        diff(&manifest, &draw(input::<Args1>, output::<Drawing>)),
        vec![]
    );
}

#[test]
fn a_real_manifest_reports_each_change_where_it_is_used() {
    let old = draw(input::<Args1>, output::<Drawing>);
    let new = draw(input::<Args2>, |_| None);
    assert_eq!(
        diff(&old, &new),
        vec![
            change(
                Breaking,
                "draw input /properties/depth",
                "argument `depth` now required"
            ),
            change(
                Breaking,
                "draw input /properties/depth",
                "no longer nullable"
            ),
            // schemars inlines the first `Tree` and refers to it below: two places.
            change(
                Breaking,
                "draw input /properties/tree/properties/children/items/properties/label",
                "type `string` -> `integer`"
            ),
            change(
                Breaking,
                "draw input /properties/tree/properties/label",
                "type `string` -> `integer`"
            ),
            change(Breaking, "draw output", "structured output withdrawn"),
            change(
                Additive,
                "draw input /properties/format",
                "enum value `\"Png\"` added"
            ),
        ]
    );
}
