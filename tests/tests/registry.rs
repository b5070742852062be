//! The registry a binary collects and the manifest `tools/list` serves: tools from two modules of
//! this file and from the `notes-tools` crate, checked as the JSON a client receives.

use serde_json::{Value, json};
use toolwright::registry::Registry;
use toolwright::tasks::TaskSupport;

/// Tools about files: flattened, borrowed, renamed and defaulted arguments; recursive types.
mod files {
    use std::path::Path;

    use schemars::JsonSchema;
    use serde::{Deserialize, Serialize};
    use toolwright::mcp_tool;

    /// Where to look.
    #[derive(Deserialize, JsonSchema)]
    pub(crate) struct Window {
        /// The first line to show, from 1.
        first: u32,
        /// How many lines to show.
        lines: Option<u32>,
    }

    /// Show lines of a file.
    ///
    /// Lines are numbered from 1.
    /// Tabs are shown as they are.
    ///
    /// - the file must be UTF-8
    /// - long lines are kept whole
    #[mcp_tool(read_only, open_world = false, title = "Show lines")]
    fn show_lines(
        /// The file to read.
        path: &Path,
        /// Words to highlight.
        highlight: &[String],
        /// A label for the output.
        label: &str,
        #[arg(flatten)] window: Window,
        /// Whether to number the lines.
        #[arg(default = true)]
        numbered: bool,
        /// The character set.
        ///
        /// Anything `encoding_rs` knows.
        #[arg(rename = "charset", default = "utf-8")]
        encoding: String,
        /// Spaces to put before each line.
        indent: Option<u8>,
    ) -> Vec<String> {
        vec![format!(
            "{} {highlight:?} {label} {} {:?} {numbered} {encoding} {indent:?}",
            path.display(),
            window.first,
            window.lines
        )]
    }

    /// Copy a file.
    ///
    /// A large file takes a while, so a client may run the copy as a task.
    #[mcp_tool(blocking, task = "optional")]
    fn copy_file(
        /// The file to copy.
        from: &Path,
        /// Where to put the copy.
        to: &Path,
    ) -> std::io::Result<()> {
        std::fs::copy(from, to).map(drop)
    }

    /// A tree of labels.
    #[derive(Serialize, Deserialize, JsonSchema)]
    pub(crate) struct Tree {
        /// The node's label.
        pub(crate) label: String,
        /// The node's children.
        pub(crate) children: Vec<Tree>,
    }

    impl Tree {
        fn size(&self) -> usize {
            1 + self.children.iter().map(Tree::size).sum::<usize>()
        }
    }

    /// A point on the page.
    #[derive(Serialize, Deserialize, JsonSchema)]
    pub(crate) struct Point {
        /// Across.
        x: f64,
        /// Down.
        y: f64,
    }

    /// How big a tree is.
    #[derive(Serialize, JsonSchema)]
    pub(crate) struct TreeSize {
        /// How many nodes.
        nodes: usize,
        /// Where it is drawn.
        origin: Point,
    }

    /// Count a tree's nodes.
    #[mcp_tool(idempotent)]
    fn count_nodes(
        /// The tree.
        tree: Tree,
        /// Where to draw it.
        origin: Point,
    ) -> TreeSize {
        TreeSize {
            nodes: tree.size(),
            origin,
        }
    }
}

/// Tools whose names test the order: upper case and dots sort before lower case in byte order.
mod misc {
    use toolwright::mcp_tool;

    use crate::files::Tree;

    /// Say hello.
    #[mcp_tool(name = "Greet")]
    fn greet(
        /// Who to greet.
        name: String,
    ) -> String {
        format!("Hello, {name}!")
    }

    /// Do nothing, calmly.
    #[mcp_tool(name = "a.dotted", idempotent)]
    fn dotted() {}

    /// Grow a tree of the given depth.
    #[mcp_tool]
    async fn echo_tree(
        /// How deep the tree is.
        depth: u8,
    ) -> Tree {
        let mut tree = Tree {
            label: "leaf".into(),
            children: vec![],
        };
        for _ in 0..depth {
            tree = Tree {
                label: "node".into(),
                children: vec![tree],
            };
        }
        tree
    }
}

// Referring to the crate keeps it, and its tools, linked into this binary.
use notes_tools as _;

fn registry() -> Registry {
    Registry::collect().expect("the tools of this binary do not conflict")
}

/// The tool object `tools/list` serves for `name`.
fn listed(registry: &Registry, name: &str) -> Value {
    registry.manifest().as_json()["tools"]
        .as_array()
        .expect("`tools` is an array")
        .iter()
        .find(|t| t["name"] == name)
        .unwrap_or_else(|| panic!("`{name}` is not in the manifest"))
        .clone()
}

fn listed_names(registry: &Registry) -> Vec<String> {
    registry.manifest().as_json()["tools"]
        .as_array()
        .expect("`tools` is an array")
        .iter()
        .map(|t| t["name"].as_str().expect("a name is a string").to_owned())
        .collect()
}

#[test]
fn every_tool_of_both_modules_and_the_other_crate_is_listed_in_byte_order() {
    let registry = registry();
    // Byte order: `G` (0x47) before `a`, `.` (0x2e) before `d`.
    let expected = [
        "Greet",
        "a.dotted",
        "add_note",
        "copy_file",
        "count_nodes",
        "delete_note",
        "echo_tree",
        "export_notes",
        "get_note",
        "list_notes",
        "list_tags",
        "move_note",
        "search_notes",
        "show_board",
        "show_lines",
        "tag_note",
        "untag_note",
        "update_note",
        "wait_for_note",
    ];
    assert_eq!(listed_names(&registry), expected);
    let names: Vec<&str> = registry.tools().iter().map(|t| t.name()).collect();
    assert_eq!(names, expected);
    assert_eq!(
        registry
            .get("add_note")
            .map(|t| t.location().unwrap().module_path),
        Some("notes_tools::edit")
    );
    assert_eq!(
        registry
            .get("Greet")
            .map(|t| t.location().unwrap().module_path),
        Some("registry::misc")
    );
    assert!(registry.get("greet").is_none(), "names are case-sensitive");
}

#[test]
fn flattened_borrowed_renamed_and_defaulted_arguments() {
    assert_eq!(
        listed(&registry(), "show_lines"),
        json!({
            "name": "show_lines",
            "title": "Show lines",
            "description": "Show lines of a file.\n\nLines are numbered from 1. Tabs are shown as \
                            they are.\n\n- the file must be UTF-8\n- long lines are kept whole",
            "inputSchema": {
                "type": "object",
                "properties": {
                    "path": {"description": "The file to read.", "type": "string"},
                    "highlight": {
                        "description": "Words to highlight.",
                        "type": "array",
                        "items": {"type": "string"}
                    },
                    "label": {"description": "A label for the output.", "type": "string"},
                    "first": {
                        "description": "The first line to show, from 1.",
                        "type": "integer",
                        "minimum": 0,
                        "maximum": u32::MAX
                    },
                    "lines": {
                        "description": "How many lines to show.",
                        "type": ["integer", "null"],
                        "minimum": 0,
                        "maximum": u32::MAX
                    },
                    "numbered": {
                        "description": "Whether to number the lines.",
                        "type": "boolean",
                        "default": true
                    },
                    "charset": {
                        "description": "The character set.\n\nAnything `encoding_rs` knows.",
                        "type": "string",
                        "default": "utf-8"
                    },
                    "indent": {
                        "description": "Spaces to put before each line.",
                        "type": ["integer", "null"],
                        "minimum": 0,
                        "maximum": 255
                    }
                },
                "required": ["path", "highlight", "label", "first"],
                "additionalProperties": false
            },
            "annotations": {"readOnlyHint": true, "openWorldHint": false}
        })
    );
}

#[test]
fn a_recursive_type_lives_in_defs_and_a_plain_nested_struct_is_inlined() {
    let tree = json!({
        "type": "object",
        "properties": {
            "label": {"description": "The node's label.", "type": "string"},
            "children": {
                "description": "The node's children.",
                "type": "array",
                "items": {"$ref": "#/$defs/Tree"}
            }
        },
        "required": ["label", "children"]
    });
    let point = json!({
        "type": "object",
        "properties": {
            "x": {"description": "Across.", "type": "number"},
            "y": {"description": "Down.", "type": "number"}
        },
        "required": ["x", "y"]
    });
    let with = |mut schema: Value, key: &str, value: &str| {
        schema[key] = json!(value);
        schema
    };
    assert_eq!(
        listed(&registry(), "count_nodes"),
        json!({
            "name": "count_nodes",
            "description": "Count a tree's nodes.",
            "inputSchema": {
                "type": "object",
                "properties": {
                    "tree": with(tree.clone(), "description", "The tree."),
                    "origin": with(point.clone(), "description", "Where to draw it.")
                },
                "required": ["tree", "origin"],
                "additionalProperties": false,
                "$defs": {"Tree": with(tree, "description", "A tree of labels.")}
            },
            "outputSchema": {
                "type": "object",
                "description": "How big a tree is.",
                "properties": {
                    "nodes": {
                        "description": "How many nodes.",
                        "type": "integer",
                        "minimum": 0,
                        "maximum": usize::MAX
                    },
                    "origin": with(point, "description", "Where it is drawn.")
                },
                "required": ["nodes", "origin"]
            },
            "annotations": {"idempotentHint": true}
        })
    );
}

#[test]
fn a_recursive_output_refers_to_its_own_root() {
    assert_eq!(
        listed(&registry(), "echo_tree")["outputSchema"],
        json!({
            "type": "object",
            "description": "A tree of labels.",
            "properties": {
                "label": {"description": "The node's label.", "type": "string"},
                "children": {
                    "description": "The node's children.",
                    "type": "array",
                    "items": {"$ref": "#"}
                }
            },
            "required": ["label", "children"]
        })
    );
}

#[test]
fn a_text_output_has_no_output_schema_and_no_annotations_unless_set() {
    let registry = registry();
    assert_eq!(
        listed(&registry, "Greet"),
        json!({
            "name": "Greet",
            "description": "Say hello.",
            "inputSchema": {
                "type": "object",
                "properties": {"name": {"description": "Who to greet.", "type": "string"}},
                "required": ["name"],
                "additionalProperties": false
            }
        })
    );
    assert_eq!(
        listed(&registry, "a.dotted"),
        json!({
            "name": "a.dotted",
            "description": "Do nothing, calmly.",
            "inputSchema": {"type": "object", "properties": {}, "additionalProperties": false},
            "annotations": {"idempotentHint": true}
        })
    );
}

#[test]
fn a_tool_that_may_run_as_a_task_says_so_and_no_other_tool_says_anything() {
    let registry = registry();
    assert_eq!(
        listed(&registry, "copy_file"),
        json!({
            "name": "copy_file",
            "description": "Copy a file.\n\nA large file takes a while, so a client may run the \
                            copy as a task.",
            "inputSchema": {
                "type": "object",
                "properties": {
                    "from": {"description": "The file to copy.", "type": "string"},
                    "to": {"description": "Where to put the copy.", "type": "string"}
                },
                "required": ["from", "to"],
                "additionalProperties": false
            },
            "execution": {"taskSupport": "optional"}
        })
    );
    let copy = registry.get("copy_file").unwrap();
    assert_eq!(copy.task_support(), TaskSupport::Optional);
    // Absent is `forbidden` to clients: a tool that never runs as a task lists no `execution`.
    // The notes tools' export and wait run as tasks too.
    let tasks = ["copy_file", "export_notes", "wait_for_note"];
    for tool in registry
        .tools()
        .iter()
        .filter(|t| !tasks.contains(&t.name()))
    {
        assert_eq!(
            tool.task_support(),
            TaskSupport::Forbidden,
            "{}",
            tool.name()
        );
        assert_eq!(tool.descriptor().get("execution"), None, "{}", tool.name());
    }
}

#[test]
fn the_notes_name_each_tool_served_as_text_and_no_other() {
    let registry = registry();
    let note = |name: &str, root: &str| {
        let tool = registry.get(name).expect("the tool is registered");
        format!(
            "tool `{name}` at {}: its output's schema root is `{root}`, not an object, so it has \
             no `outputSchema` and its results are served as text",
            tool.origin()
        )
    };
    assert_eq!(
        registry.manifest().notes(),
        [
            note("Greet", "string"),
            note("export_notes", "string"),
            note("show_lines", "array"),
        ]
    );
    let greet = registry.get("Greet").unwrap().location().unwrap();
    assert_eq!((greet.file, greet.column), (file!(), 5));
    assert!(
        registry.manifest().notes()[1].contains("examples/notes-tools/src/read.rs:"),
        "{}",
        registry.manifest().notes()[1]
    );
}

#[test]
fn notes_tools_as_listed() {
    let registry = registry();
    let summary = json!({
        "description": "A note in a list: everything but the body.",
        "type": "object",
        "properties": {
            "id": {"description": "The note's id.", "type": "integer", "minimum": 0, "maximum": u64::MAX},
            "title": {"description": "Its title.", "type": "string"},
            "tags": {"description": "Its tags.", "type": "array", "items": {"type": "string"}},
            "updated_at": {
                "description": "When it last changed, in seconds since the Unix epoch.",
                "type": "integer",
                "minimum": 0,
                "maximum": u64::MAX
            }
        },
        "required": ["id", "title", "tags", "updated_at"]
    });
    assert_eq!(
        listed(&registry, "list_notes"),
        json!({
            "name": "list_notes",
            "description": "List notes, newest first, optionally only those with a tag.",
            "inputSchema": {
                "type": "object",
                "properties": {
                    "tag": {"description": "Only notes with this tag.", "type": ["string", "null"]},
                    "limit": {
                        "description": "How many notes to return at most.",
                        "type": "integer",
                        "minimum": 0,
                        "maximum": u32::MAX,
                        "default": 20
                    },
                    "offset": {
                        "description": "How many matching notes to skip, for the next page.",
                        "type": "integer",
                        "minimum": 0,
                        "maximum": u32::MAX,
                        "default": 0
                    }
                },
                "additionalProperties": false
            },
            "outputSchema": {
                "description": "One page of notes.",
                "type": "object",
                "properties": {
                    "notes": {
                        "description": "The notes on this page, newest first.",
                        "type": "array",
                        "items": summary
                    },
                    "total": {
                        "description": "How many notes match in all.",
                        "type": "integer",
                        "minimum": 0,
                        "maximum": usize::MAX
                    }
                },
                "required": ["notes", "total"]
            },
            "annotations": {"readOnlyHint": true, "openWorldHint": false}
        })
    );
    assert_eq!(
        listed(&registry, "export_notes"),
        json!({
            "name": "export_notes",
            "description": "Export the whole notebook as one document, oldest note first.",
            "inputSchema": {
                "type": "object",
                "properties": {
                    "format": {
                        "description": "The document's format.",
                        "default": "markdown",
                        "oneOf": [
                            {"const": "markdown", "type": "string", "description": "One Markdown section per note."},
                            {"const": "json", "type": "string", "description": "The notes as a JSON array."}
                        ]
                    }
                },
                "additionalProperties": false
            },
            "annotations": {"readOnlyHint": true, "openWorldHint": false},
            "execution": {"taskSupport": "optional"}
        })
    );
    assert_eq!(
        listed(&registry, "delete_note")["description"],
        "Delete a note for good.\n\nThere is no undo: check the id with `get_note` first when in \
         doubt."
    );
}

/// Every `$ref` in a schema, wherever it sits.
fn refs(schema: &Value, out: &mut Vec<String>) {
    match schema {
        Value::Object(map) => {
            for (key, value) in map {
                match (key.as_str(), value) {
                    ("$ref", Value::String(r)) => out.push(r.clone()),
                    (_, v) => refs(v, out),
                }
            }
        }
        Value::Array(items) => items.iter().for_each(|v| refs(v, out)),
        _ => {}
    }
}

#[test]
fn every_listed_schema_is_self_contained_described_and_free_of_rust_names() {
    let registry = registry();
    for tool in registry.manifest().as_json()["tools"].as_array().unwrap() {
        let name = &tool["name"];
        assert!(
            tool["description"].as_str().is_some_and(|d| !d.is_empty()),
            "{name} has no description"
        );
        let input = &tool["inputSchema"];
        assert_eq!(input["type"], "object", "{name}");
        assert_eq!(input["additionalProperties"], false, "{name}");
        for (property, schema) in input["properties"].as_object().unwrap() {
            assert!(
                schema["description"]
                    .as_str()
                    .is_some_and(|d| !d.is_empty()),
                "{name}: property `{property}` has no description"
            );
        }
        for schema in [input, &tool["outputSchema"]] {
            let root = schema.as_object();
            for key in ["$schema", "title"] {
                assert!(
                    root.is_none_or(|r| !r.contains_key(key)),
                    "{name}: `{key}` at the root of {schema}"
                );
            }
            let mut found = Vec::new();
            refs(schema, &mut found);
            for reference in found {
                let resolves = reference == "#"
                    || reference
                        .strip_prefix("#/$defs/")
                        .is_some_and(|def| schema["$defs"].get(def).is_some());
                assert!(
                    resolves,
                    "{name}: `{reference}` does not resolve in {schema}"
                );
            }
        }
    }
}

#[test]
fn the_manifest_is_the_same_bytes_every_time() {
    let first = registry();
    let second = registry();
    let bytes = serde_json::to_vec(first.manifest().as_json()).unwrap();
    assert_eq!(
        bytes,
        serde_json::to_vec(first.manifest().as_json()).unwrap()
    );
    assert_eq!(first.manifest().as_bytes(), &bytes[..]);
    assert_eq!(second.manifest().as_bytes(), first.manifest().as_bytes());
    let names = listed_names(&first);
    assert!(
        names.is_sorted_by(|a, b| a.as_bytes() < b.as_bytes()),
        "not strictly in byte order: {names:?}"
    );
    let text = String::from_utf8(bytes).unwrap();
    // The notes tools' prompt, resource template and view come first, their keys sorted too.
    assert!(
        text.starts_with(r#"{"prompts":[{"arguments":[{"description":"The tag whose"#),
        "keys are sorted and the JSON is compact: {text}"
    );
    let members: Vec<&String> = first
        .manifest()
        .as_json()
        .as_object()
        .unwrap()
        .keys()
        .collect();
    assert_eq!(
        members,
        ["prompts", "resourceTemplates", "resources", "tools"]
    );
    // `tools/list` serves the tools alone.
    let tools = std::str::from_utf8(first.manifest().tools_list_bytes()).unwrap();
    assert!(
        tools.starts_with(r#"{"tools":[{"description":"Say hello.","inputSchema":{"#),
        "{tools}"
    );
    assert!(
        text.ends_with(&tools[1..]),
        "the tools come last, as they are listed"
    );
    assert!(!text.contains('\n'), "one line, as stdio needs");
}

#[test]
fn canonical_names_name_the_defining_crate() {
    let registry = registry();
    let canonical = |wire: &str| registry.get(wire).unwrap().canonical_name().to_string();
    assert_eq!(canonical("add_note"), "mcp::notes-tools::add_note");
    assert_eq!(
        canonical("count_nodes"),
        "mcp::toolwright-tests::count_nodes"
    );
}

#[test]
fn a_namespaced_registry_prefixes_every_wire_name_with_its_provider() {
    let plain = registry();
    let expected: Vec<String> = {
        let mut names: Vec<String> = plain
            .tools()
            .iter()
            .map(|t| t.canonical_name().namespaced().unwrap())
            .collect();
        names.sort();
        names
    };
    let namespaced = registry().namespaced().unwrap();
    assert_eq!(listed_names(&namespaced), expected);
    assert!(expected.contains(&"notes-tools__add_note".to_owned()));
    assert!(expected.contains(&"toolwright-tests__count_nodes".to_owned()));
    let tool = namespaced.get("notes-tools__add_note").unwrap();
    assert_eq!(tool.name(), "add_note");
    assert_eq!(tool.descriptor()["name"], "notes-tools__add_note");
    assert!(namespaced.get("add_note").is_none());
}

#[test]
fn hashes_pin_the_manifest_and_each_tool() {
    let registry = registry();
    let manifest = registry.manifest();
    let again = Registry::collect().unwrap();
    assert_eq!(manifest.sha256(), again.manifest().sha256());
    assert_eq!(manifest.sha256().len(), 64);
    assert!(
        manifest
            .sha256()
            .bytes()
            .all(|b| b.is_ascii_hexdigit() && !b.is_ascii_uppercase())
    );
    let add = manifest.tool_sha256("add_note").unwrap().to_owned();
    let get = manifest.tool_sha256("get_note").unwrap().to_owned();
    assert_ne!(add, get);
    assert_eq!(manifest.tool_sha256("no_such_tool"), None);
    // A tool's hash covers its descriptor only: namespacing renames it, and so changes it.
    let namespaced = again.namespaced().unwrap();
    assert_ne!(
        namespaced
            .manifest()
            .tool_sha256("notes-tools__add_note")
            .unwrap(),
        add
    );
}
