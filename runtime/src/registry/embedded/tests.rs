//! The embedded bytes' layout, written and read, and a registry served from them.

use serde_json::{Value, json};

use super::index::{DAMAGED, MAGIC, head, open, registration_head};
use crate::apps::{ToolUi, Visibility};
use crate::registration::{Annotations, ToolRegistration};
use crate::registry::{Conflict, Registry};
use crate::tasks::TaskSupport;

fn registration(
    name: &'static str,
    title: Option<&'static str>,
    description: &'static str,
    annotations: Annotations,
    ui: ToolUi,
    task: TaskSupport,
    structured: bool,
) -> &'static ToolRegistration {
    Box::leak(Box::new(ToolRegistration {
        title,
        annotations,
        ui,
        task,
        output_schema: if structured {
            |_| Some(schemars::json_schema!({"type": "object"}))
        } else {
            |_| None
        },
        ..crate::fixtures::tool(name, description)
    }))
}

/// Three tools that differ in every member an entry's head holds.
fn registry() -> Registry {
    Registry::from_registrations([
        registration(
            "sum",
            Some("Sum"),
            "Add \"two\" numbers: a + b.\n",
            Annotations {
                read_only: Some(true),
                destructive: Some(false),
                idempotent: None,
                open_world: Some(false),
            },
            ToolUi::NONE,
            TaskSupport::Optional,
            true,
        ),
        registration(
            "hidden",
            None,
            "Seen by views only, café.",
            Annotations::default(),
            ToolUi {
                resource_uri: None,
                visibility: Some(Visibility::APP_ONLY),
            },
            TaskSupport::Required,
            false,
        ),
        registration(
            "plain",
            None,
            "",
            Annotations::default(),
            ToolUi::NONE,
            TaskSupport::Forbidden,
            false,
        ),
    ])
    .expect("valid tools")
}

fn leak(bytes: Vec<u8>) -> &'static [u8] {
    Box::leak(bytes.into_boxed_slice())
}

#[test]
fn the_index_says_what_a_parser_reads_in_the_json() {
    let registry = registry();
    let embedded = leak(registry.embedded_bytes());
    let (json, indexed) = open(embedded).unwrap();
    assert_eq!(json, registry.manifest().as_bytes());
    let parsed = open(leak(json.to_vec())).unwrap().1;
    assert_eq!(indexed, parsed);
    let names: Vec<&str> = indexed.iter().map(|entry| &*entry.name).collect();
    assert_eq!(names, ["hidden", "plain", "sum"]);
    assert_eq!(
        indexed.iter().map(|e| e.structured).collect::<Vec<_>>(),
        [false, false, true]
    );
    for (entry, tool) in indexed.iter().zip(registry.tools()) {
        assert_eq!(&json[entry.range.clone()], tool.json());
        let mut linked = Vec::new();
        registration_head(&mut linked, tool.registration().unwrap());
        assert_eq!(*entry.head, *linked, "{}", tool.name());
    }
    // Each member counts: another description is another head.
    let mut other = Vec::new();
    head(
        &mut other,
        Some("Sum"),
        "Add two numbers.",
        &registry.tools()[2].annotations(),
        Some(&json!({"taskSupport": "optional"})),
        None,
    );
    assert_ne!(*indexed[2].head, *other);
}

/// One entry of an index, as the test writes it: start, end, flag byte, name, head.
type Raw = (u32, u32, u8, Vec<u8>, Vec<u8>);

/// Embedded bytes for `json` with these entries, `count` said in the footer: the layout
/// written out again, independently of [`indexed`].
fn encode(json: &[u8], entries: &[Raw], count: u32) -> Vec<u8> {
    let mut out = json.to_vec();
    for (start, end, flag, name, head) in entries {
        out.extend_from_slice(&start.to_le_bytes());
        out.extend_from_slice(&end.to_le_bytes());
        out.push(*flag);
        for bytes in [name, head] {
            out.extend_from_slice(&(bytes.len() as u32).to_le_bytes());
            out.extend_from_slice(bytes);
        }
    }
    out.extend_from_slice(&(json.len() as u32).to_le_bytes());
    out.extend_from_slice(&count.to_le_bytes());
    out.extend_from_slice(MAGIC);
    out
}

/// The registry's manifest and its entries, as the test writes them.
fn raw() -> (Vec<u8>, Vec<Raw>) {
    let registry = registry();
    let (json, entries) = open(leak(registry.embedded_bytes())).unwrap();
    let raw = entries
        .into_iter()
        .map(|e| {
            let start = u32::try_from(e.range.start).unwrap();
            let end = u32::try_from(e.range.end).unwrap();
            let name = e.name.as_bytes().to_vec();
            (
                start,
                end,
                u8::from(e.structured),
                name,
                e.head.into_owned(),
            )
        })
        .collect();
    (json.to_vec(), raw)
}

#[test]
fn the_index_is_laid_out_as_documented() {
    let (json, raw) = raw();
    assert_eq!(encode(&json, &raw, 3), registry().embedded_bytes());
    // No tools at all is a manifest too.
    let empty = encode(br#"{"tools":[]}"#, &[], 0);
    let (json, entries) = open(leak(empty)).unwrap();
    assert_eq!((json, entries.len()), (&br#"{"tools":[]}"#[..], 0));
}

#[test]
fn an_index_that_does_not_fit_its_json_is_refused() {
    let (json, raw) = raw();
    let refused = |what: &str, json: &[u8], entries: &[Raw], count: usize| {
        let bytes = encode(json, entries, u32::try_from(count).unwrap());
        assert_eq!(open(leak(bytes)).unwrap_err(), DAMAGED, "{what}");
    };
    let with = |change: &dyn Fn(&mut Vec<Raw>)| {
        let mut entries = raw.clone();
        change(&mut entries);
        entries
    };
    refused("names out of order", &json, &with(&|e| e.swap(0, 1)), 3);
    refused(
        "a name twice",
        &json,
        &with(&|e| e[1].3 = e[0].3.clone()),
        3,
    );
    refused("a flag neither 0 nor 1", &json, &with(&|e| e[0].2 = 2), 3);
    refused(
        "a name that is not UTF-8",
        &json,
        &with(&|e| e[0].3 = vec![0xff]),
        3,
    );
    refused("a tool starting late", &json, &with(&|e| e[0].0 += 1), 3);
    refused("a tool ending early", &json, &with(&|e| e[1].1 -= 1), 3);
    refused(
        "the last tool short of `]}`",
        &json,
        &with(&|e| e[2].1 -= 1),
        3,
    );
    refused("a tool left out", &json, &with(&|e| drop(e.pop())), 2);
    refused("one tool more than listed", &json, &raw, 4);
    refused("one tool fewer than listed", &json, &raw, 2);
    refused(
        "a range past the JSON",
        &json,
        &with(&|e| e[2].1 = u32::MAX),
        3,
    );
    // The JSON between two tools is not `,`.
    let mut spaced = json.clone();
    spaced[usize::try_from(raw[0].1).unwrap()] = b' ';
    refused("no `,` between tools", &spaced, &raw, 3);
    // Bytes left over after the last entry.
    let mut bytes = encode(&json, &raw, 3);
    let footer = bytes.len() - MAGIC.len() - 8;
    bytes.insert(footer, 0);
    assert_eq!(open(leak(bytes)).unwrap_err(), DAMAGED, "bytes left over");
}

#[test]
fn cut_or_changed_bytes_are_refused_or_read_never_panic() {
    let embedded = registry().embedded_bytes();
    let json_len = registry().manifest().as_bytes().len();
    for len in 0..embedded.len() {
        let opened = open(leak(embedded[..len].to_vec()));
        // Cut at the end of the JSON, the bytes are the JSON alone.
        assert_eq!(opened.is_ok(), len == json_len, "cut to {len} bytes");
    }
    assert_eq!(
        open(leak(embedded[..embedded.len() - 3].to_vec())).unwrap_err(),
        DAMAGED
    );
    for at in 0..embedded.len() {
        for byte in [0x00, 0x01, 0x2c, 0x7b, 0x7d, 0xff] {
            let mut bytes = embedded.clone();
            bytes[at] = byte;
            let _ = open(leak(bytes));
        }
    }
}

#[test]
fn each_member_of_a_head_counts() {
    let heads = [
        (None, "A.", Annotations::default(), None, None),
        (Some(""), "A.", Annotations::default(), None, None),
        (None, "A!", Annotations::default(), None, None),
        (
            None,
            "A.",
            Annotations {
                read_only: Some(false),
                ..Annotations::default()
            },
            None,
            None,
        ),
        (
            None,
            "A.",
            Annotations {
                open_world: Some(true),
                ..Annotations::default()
            },
            None,
            None,
        ),
        (
            None,
            "A.",
            Annotations::default(),
            Some(json!({"taskSupport": "optional"})),
            None,
        ),
        (
            None,
            "A.",
            Annotations::default(),
            Some(json!({"taskSupport": "required"})),
            None,
        ),
        (None, "A.", Annotations::default(), Some(json!({})), None),
        (None, "A.", Annotations::default(), None, Some(Value::Null)),
        (None, "A.", Annotations::default(), None, Some(json!({}))),
    ]
    .map(|(title, description, annotations, execution, meta)| {
        let mut out = Vec::new();
        head(
            &mut out,
            title,
            description,
            &annotations,
            execution.as_ref(),
            meta.as_ref(),
        );
        out
    });
    for (i, a) in heads.iter().enumerate() {
        for b in &heads[i + 1..] {
            assert_ne!(a, b);
        }
    }
}

#[test]
fn tools_of_the_index_that_are_not_linked_are_named() {
    // This test binary links no `#[mcp_tool]`.
    let embedded = leak(registry().embedded_bytes());
    let err = Registry::embedded(embedded, false).unwrap_err();
    assert_eq!(
        err.conflicts(),
        [Conflict::NotLinked {
            tools: vec!["hidden".to_owned(), "plain".to_owned(), "sum".to_owned()]
        }]
    );
    // The likely cause, on the first line.
    let text = err.to_string();
    assert!(
        text.starts_with(
            "the tools cannot be served: the server names no tools crate: write \
             `toolwright::server!(your_tools)` with the crate its build script names, or refer to \
             it with `use your_tools as _;`. The linker drops a crate nothing refers to, and tools \
             of the embedded manifest are not linked into the binary: `hidden`, `plain`, `sum`. If \
             the server names it, the manifest embedded at build time was made from other tools"
        ),
        "{text}"
    );
    assert_eq!(text.lines().count(), 1, "{text}");
}

#[test]
fn the_json_alone_reads_as_its_tools_in_order() {
    let manifest = br#"{"tools":[{"description":"A.","name":"a","outputSchema":{}},{"name":"b","title":"B"}]}"#;
    let (json, entries) = open(manifest).unwrap();
    assert_eq!(json, manifest);
    assert_eq!(entries.len(), 2);
    assert_eq!(
        &manifest[entries[1].range.clone()],
        br#"{"name":"b","title":"B"}"#
    );
    assert!(entries[0].structured && !entries[1].structured);
    let mut b = Vec::new();
    head(&mut b, Some("B"), "", &Annotations::default(), None, None);
    assert_eq!(*entries[1].head, *b);
    let unsorted = br#"{"tools":[{"name":"b"},{"name":"a"}]}"#;
    assert_eq!(
        open(unsorted).unwrap_err(),
        "its tools are not sorted by name"
    );
}
