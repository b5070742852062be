//! Prompts, resources and templates, compared beside the tools.

use super::*;

fn prompts(prompts: Value) -> Value {
    json!({ "tools": [], "prompts": prompts })
}

fn summarise(arguments: Value) -> Value {
    json!({ "name": "summarise", "description": "Summarise a tag.", "arguments": arguments })
}

#[test]
fn what_a_prompt_takes_compares_as_a_client_sends_it() {
    let tag = json!({"name": "tag", "description": "The tag.", "required": true});
    let limit = json!({"name": "limit", "description": "How many."});
    let old = prompts(json!([summarise(json!([tag, limit]))]));
    assert_eq!(diff(&old, &old.clone()), vec![]);

    let mut new_tag = tag.clone();
    new_tag["description"] = json!("The tag, lowercase.");
    let words = json!({"name": "words", "required": true});
    let new = prompts(json!([summarise(json!([new_tag, words]))]));
    assert_eq!(
        diff(&old, &new),
        vec![
            change(Breaking, "prompt summarise", "argument `limit` removed"),
            change(
                Breaking,
                "prompt summarise",
                "new required argument `words`"
            ),
            change(
                Cosmetic,
                "prompt summarise",
                "argument `tag` description changed"
            ),
        ]
    );

    let mut optional = tag.clone();
    optional.as_object_mut().unwrap().remove("required");
    let mut required_limit = limit.clone();
    required_limit["required"] = json!(true);
    let new = prompts(json!([summarise(json!([optional, required_limit]))]));
    assert_eq!(
        diff(&old, &new),
        vec![
            change(
                Breaking,
                "prompt summarise",
                "argument `limit` now required"
            ),
            change(Additive, "prompt summarise", "argument `tag` now optional"),
        ]
    );
}

#[test]
fn prompts_come_and_go_by_name() {
    let old = prompts(json!([summarise(json!([]))]));
    let mut renamed = summarise(json!([]));
    renamed["name"] = json!("summary");
    renamed["title"] = json!("Summary");
    let new = prompts(json!([renamed]));
    assert_eq!(
        diff(&old, &new),
        vec![
            change(Breaking, "prompt summarise", "prompt removed"),
            change(Additive, "prompt summary", "prompt added"),
        ]
    );
    let mut retitled = summarise(json!([]));
    retitled["title"] = json!("Summary");
    assert_eq!(
        diff(&old, &prompts(json!([retitled]))),
        vec![change(Cosmetic, "prompt summarise", "title added")]
    );
    // A manifest of tools alone has none: every prompt of the new one is added.
    assert_eq!(
        diff(&json!({"tools": []}), &old),
        vec![change(Additive, "prompt summarise", "prompt added")]
    );
}

#[test]
fn a_resource_is_matched_by_its_uri_and_read_by_its_media_type() {
    let note = json!({"uriTemplate": "notes://{id}", "name": "note", "mimeType": "text/markdown"});
    let tags = json!({"uri": "notes://tags", "name": "tags", "mimeType": "application/json"});
    let old = json!({"tools": [], "resources": [tags], "resourceTemplates": [note]});

    let mut plain = note.clone();
    plain["mimeType"] = json!("text/plain");
    plain["description"] = json!("One note.");
    let mut renamed = tags.clone();
    renamed["name"] = json!("all-tags");
    renamed.as_object_mut().unwrap().remove("mimeType");
    let new = json!({"tools": [], "resources": [renamed], "resourceTemplates": [plain]});
    assert_eq!(
        diff(&old, &new),
        vec![
            change(
                Breaking,
                "resource notes://tags",
                "media type \"application/json\" removed"
            ),
            change(
                Breaking,
                "resource template notes://{id}",
                "media type \"text/markdown\" -> \"text/plain\""
            ),
            change(Cosmetic, "resource notes://tags", "name changed"),
            change(
                Cosmetic,
                "resource template notes://{id}",
                "description added"
            ),
        ]
    );

    // A template written otherwise is another template.
    let mut moved = note.clone();
    moved["uriTemplate"] = json!("notes://note/{id}");
    let new = json!({"tools": [], "resources": [tags], "resourceTemplates": [moved]});
    assert_eq!(
        diff(&old, &new),
        vec![
            change(
                Breaking,
                "resource template notes://{id}",
                "resource template removed"
            ),
            change(
                Additive,
                "resource template notes://note/{id}",
                "resource template added"
            ),
        ]
    );
}
