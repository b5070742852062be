//! A server given a manifest made at build time: it serves those bytes, and refuses to start when
//! they do not describe the tools linked in.

use serde_json::{Value, json};
use toolwright::__private::{Annotations, ToolRegistration};
use toolwright::registry::{Conflict, Registry};
use toolwright::{Error, Server, mcp_tool};
use toolwright_tests::Client;

/// Add two numbers.
#[mcp_tool(read_only, title = "Addition")]
fn add(
    /// The first.
    a: i64,
    /// The second.
    b: i64,
) -> i64 {
    a + b
}

/// Repeat a word.
#[mcp_tool(read_only)]
fn repeat(
    /// The word.
    word: String,
    /// How many times.
    times: u8,
) -> String {
    word.repeat(usize::from(times))
}

/// The manifest the tools of this binary derive, as a build script would emit it.
fn derived() -> Value {
    let registry = Registry::collect().expect("the tools do not conflict");
    registry.manifest().as_json().clone()
}

/// `manifest` as the `&'static` bytes `embedded_manifest!` gives.
fn embed(manifest: &Value) -> &'static [u8] {
    Box::leak(serde_json::to_vec(manifest).unwrap().into_boxed_slice())
}

/// The conflicts a server with this embedded manifest stops with, as text.
async fn refusals(manifest: &Value) -> Vec<String> {
    refusals_of(embed(manifest)).await
}

/// The conflicts a server with these embedded bytes stops with, as text.
async fn refusals_of(bytes: &'static [u8]) -> Vec<String> {
    let server = Server::new("t", "1").embedded_manifest(bytes);
    let mut client = Client::serving(server);
    match client.served().await {
        Err(Error::Registry(err)) => err
            .conflicts()
            .iter()
            .map(|conflict| {
                assert!(
                    matches!(
                        conflict,
                        Conflict::EmbeddedMismatch { .. } | Conflict::NotLinked { .. }
                    ),
                    "{conflict:?}"
                );
                conflict.to_string()
            })
            .collect(),
        other => panic!("the server started: {other:?}"),
    }
}

fn tools(manifest: &mut Value) -> &mut Vec<Value> {
    manifest["tools"].as_array_mut().unwrap()
}

#[tokio::test]
async fn the_embedded_bytes_are_served_and_the_tools_called() {
    let manifest = derived();
    let bytes = embed(&manifest);
    let mut client = Client::serving(Server::new("t", "1").embedded_manifest(bytes));
    client.initialize().await;
    let response = client.request(1, "tools/list", json!({})).await;
    assert_eq!(response["result"], manifest);
    let sum = client.call(2, "add", json!({"a": 2, "b": 3})).await;
    assert_eq!(sum["structuredContent"], json!(null));
    assert_eq!(sum["content"][0]["text"], "5");
    let refused = client
        .call(3, "repeat", json!({"word": "a", "times": 300}))
        .await;
    assert_eq!(refused["isError"], true, "{refused}");
    let text = refused["content"][0]["text"].as_str().unwrap();
    assert!(text.contains("`times`: 300"), "{text}");
}

#[tokio::test]
async fn a_tool_missing_from_either_side_is_named() {
    let mut manifest = derived();
    tools(&mut manifest).retain(|tool| tool["name"] != "repeat");
    let mut extra = tools(&mut manifest)[0].clone();
    extra["name"] = json!("gone");
    tools(&mut manifest).push(extra);
    tools(&mut manifest).sort_by_key(|tool| tool["name"].as_str().unwrap().to_owned());
    let refusals = refusals(&manifest).await;
    assert_eq!(refusals.len(), 2, "{refusals:#?}");
    assert!(
        refusals[0].starts_with(
            "the server names no tools crate: write `toolwright::server!(your_tools)` with the \
             crate its build script names, or refer to it with `use your_tools as _;`. The \
             linker drops a crate nothing refers to, and a tool of the embedded manifest is not \
             linked into the binary: `gone`. If the server names it, the manifest embedded at \
             build time was made from other tools than the ones linked in"
        ),
        "{}",
        refusals[0]
    );
    assert!(
        refusals[1].starts_with(
            "tool `repeat`: it is linked into the binary (at tests/tests/embedded.rs:"
        ) && refusals[1].contains("but not in the embedded manifest"),
        "{}",
        refusals[1]
    );
}

#[tokio::test]
async fn a_changed_description_is_named() {
    let mut manifest = derived();
    tools(&mut manifest)[0]["description"] = json!("Add up.");
    let expected = "tool `add`: its title, description, annotations, `execution` or `_meta` \
        differ from the embedded manifest's; the manifest embedded at build time was made from other tools than \
        the ones linked in: build the tools crate with the same features under \
        [build-dependencies] as under [dependencies], and make the build script and the server \
        agree on namespacing (Guard::namespaced, Server::namespaced)";
    assert_eq!(refusals(&manifest).await, [expected]);
    // Release builds check the annotations too, without deriving anything.
    let mut manifest = derived();
    tools(&mut manifest)[1]["annotations"]["readOnlyHint"] = json!(false);
    let refusals = refusals(&manifest).await;
    assert_eq!(refusals.len(), 1);
    assert!(refusals[0].starts_with("tool `repeat`: its title, description, annotations"));
    // And its `_meta`, which clients read as it is served: a manifest cannot hide a tool from
    // the model (`visibility` other than the binary's, even `null`) or link a view the binary
    // does not declare (the deprecated key too).
    for meta in [
        json!({"ui": {"visibility": ["app"]}}),
        json!({"ui": {"visibility": null}}),
        json!({"ui/resourceUri": "ui://elsewhere/view.html"}),
        json!(null),
    ] {
        let mut manifest = derived();
        tools(&mut manifest)[0]["_meta"] = meta.clone();
        assert_eq!(
            self::refusals(&manifest).await,
            [expected],
            "`_meta`: {meta}"
        );
    }
    // And its `execution`: a manifest cannot offer a task of a tool the binary runs only as a
    // call.
    let mut manifest = derived();
    tools(&mut manifest)[0]["execution"] = json!({"taskSupport": "optional"});
    assert_eq!(self::refusals(&manifest).await, [expected]);
}

#[tokio::test]
#[cfg(debug_assertions)]
async fn debug_builds_compare_the_schemas_too() {
    let mut manifest = derived();
    tools(&mut manifest)[1]["inputSchema"]["properties"]["times"]["maximum"] = json!(9);
    let refusals = refusals(&manifest).await;
    assert_eq!(refusals.len(), 1);
    assert!(
        refusals[0].starts_with(
            "tool `repeat`: its schemas differ from the embedded manifest's (debug builds derive \
             them to check); the manifest embedded"
        ),
        "{}",
        refusals[0]
    );
}

#[tokio::test]
async fn bytes_that_are_not_a_manifest_are_refused() {
    for broken in [
        json!({"tools": {}}),
        json!([]),
        json!({"tools": [{"title": "x"}]}),
    ] {
        let refusals = refusals(&broken).await;
        assert_eq!(refusals.len(), 1);
        assert!(
            refusals[0].starts_with("tool `*`: the embedded manifest cannot be read: "),
            "{}",
            refusals[0]
        );
    }
}

#[tokio::test]
async fn a_namespaced_server_takes_a_namespaced_manifest() {
    let registry = Registry::collect().unwrap().namespaced().unwrap();
    let manifest = registry.manifest().as_json().clone();
    let server = Server::new("t", "1")
        .namespaced()
        .embedded_manifest(embed(&manifest));
    let mut client = Client::serving(server);
    client.initialize().await;
    let listed = client.result(1, "tools/list", json!({})).await;
    assert_eq!(listed, manifest);
    let sum = client
        .call(2, "toolwright-tests__add", json!({"a": 1, "b": 1}))
        .await;
    assert_eq!(sum["content"][0]["text"], "2");
    // The plain manifest does not do for a namespaced server.
    let plain = Server::new("t", "1")
        .namespaced()
        .embedded_manifest(embed(&derived()));
    assert!(Client::serving(plain).served().await.is_err());
}

/// What `build::emit` writes for `embedded_manifest!`: the manifest, then its index.
fn indexed(registry: &Registry) -> &'static [u8] {
    Box::leak(registry.embedded_bytes().into_boxed_slice())
}

#[tokio::test]
async fn the_index_the_build_writes_is_read_and_the_manifest_served() {
    let bytes = indexed(&Registry::collect().unwrap());
    let mut client = Client::serving(Server::new("t", "1").embedded_manifest(bytes));
    client.initialize().await;
    assert_eq!(client.result(1, "tools/list", json!({})).await, derived());
    let sum = client.call(2, "add", json!({"a": 2, "b": 3})).await;
    assert_eq!(sum["content"][0]["text"], "5");
    // Namespaced on both sides.
    let namespaced = Registry::collect().unwrap().namespaced().unwrap();
    let server = Server::new("t", "1")
        .namespaced()
        .embedded_manifest(indexed(&namespaced));
    let mut client = Client::serving(server);
    client.initialize().await;
    let listed = client.result(1, "tools/list", json!({})).await;
    assert_eq!(listed, *namespaced.manifest().as_json());
    let sum = client
        .call(2, "toolwright-tests__add", json!({"a": 1, "b": 1}))
        .await;
    assert_eq!(sum["content"][0]["text"], "2");
}

#[tokio::test]
async fn an_index_made_from_other_tools_names_them() {
    // A build script whose `add` says something else, and that has no `repeat`.
    let other_add = Box::leak(Box::new(ToolRegistration {
        title: Some("Addition"),
        annotations: Annotations {
            read_only: Some(true),
            ..Annotations::default()
        },
        provider: "toolwright-tests",
        ..toolwright_tests::registration("add", "Add up.")
    }));
    let index = indexed(&Registry::from_registrations([&*other_add]).unwrap());
    let refusals = refusals_of(index).await;
    assert_eq!(refusals.len(), 2, "{refusals:#?}");
    assert!(
        refusals[0].starts_with(
            "tool `add`: its title, description, annotations, `execution` or `_meta` differ \
             from the embedded manifest's"
        ),
        "{}",
        refusals[0]
    );
    assert!(
        refusals[1].starts_with("tool `repeat`: it is linked into the binary")
            && refusals[1].contains("but not in the embedded manifest"),
        "{}",
        refusals[1]
    );
    // The plain index does not do for a namespaced server.
    let plain = Server::new("t", "1")
        .namespaced()
        .embedded_manifest(indexed(&Registry::collect().unwrap()));
    assert!(Client::serving(plain).served().await.is_err());
}

#[tokio::test]
async fn bytes_cut_short_are_refused() {
    let bytes = Registry::collect().unwrap().embedded_bytes();
    let cut: &'static [u8] = Box::leak(bytes[..bytes.len() - 1].to_vec().into_boxed_slice());
    let refusals = refusals_of(cut).await;
    assert_eq!(
        refusals,
        [
            "tool `*`: the embedded manifest cannot be read: it is cut short, or its index does \
          not fit its JSON; build the crate again; pass `toolwright::build::embedded_manifest!()`, the \
          bytes toolwright::build::emit!() wrote"
        ]
    );
}

#[tokio::test]
#[cfg(debug_assertions)]
async fn debug_builds_read_each_tool_the_index_points_at() {
    // The layout holds, but the JSON of `add` does not read: release builds trust it.
    let mut bytes = Registry::collect().unwrap().embedded_bytes();
    let first_tool = br#"{"tools":["#.len();
    let colon = first_tool + bytes[first_tool..].iter().position(|&b| b == b':').unwrap();
    bytes[colon] = b';';
    let refusals = refusals_of(Box::leak(bytes.into_boxed_slice())).await;
    assert_eq!(refusals.len(), 1, "{refusals:#?}");
    assert!(
        refusals[0].starts_with("tool `add`: its JSON in the embedded manifest does not read ("),
        "{}",
        refusals[0]
    );
}
