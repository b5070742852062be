//! `toolwright::build::Guard`: the comparison a build script or a test makes between the tools
//! and their committed snapshot.

use std::path::{Path, PathBuf};
use std::sync::atomic::{AtomicUsize, Ordering};

use serde_json::{Value, json};
use toolwright::build::{Checked, Guard, GuardError};
use toolwright::manifest::Severity;
use toolwright::{mcp_prompt, mcp_tool};

/// Plan a trip to a city.
#[mcp_prompt]
fn plan(
    /// The city.
    city: String,
) -> String {
    format!("Plan three days in {city}.")
}

/// Find a city's weather.
#[mcp_tool(read_only)]
fn forecast(
    /// The city.
    city: String,
    /// How many days ahead, 1 to 16.
    days: Option<u8>,
) -> String {
    format!("{city}: sunny for {} days", days.unwrap_or(1))
}

/// Say hello.
#[mcp_tool]
fn greet(
    /// Who to greet.
    name: String,
) -> String {
    format!("hello {name}")
}

/// A directory of its own for each test, removed at the end.
struct Dir(PathBuf);

impl Dir {
    fn new() -> Dir {
        static NEXT: AtomicUsize = AtomicUsize::new(0);
        let path = std::env::temp_dir().join(format!(
            "toolwright-guard-{}-{}",
            std::process::id(),
            NEXT.fetch_add(1, Ordering::Relaxed)
        ));
        std::fs::create_dir_all(&path).unwrap();
        Dir(path)
    }

    fn snapshot(&self) -> PathBuf {
        self.0.join("mcp-manifest.json")
    }
}

impl Drop for Dir {
    fn drop(&mut self) {
        let _ = std::fs::remove_dir_all(&self.0);
    }
}

/// A guard over this binary's tools for package `weather` at `version`, outside CI.
fn guard(snapshot: &Path, version: &str) -> Guard {
    Guard::new()
        .snapshot(snapshot)
        .package("weather", version)
        .ci(false)
        .accept_breaking(false)
}

fn read(path: &Path) -> Value {
    serde_json::from_slice(&std::fs::read(path).unwrap()).unwrap()
}

/// Writes the snapshot after `edit` changes it.
fn edit(path: &Path, edit: impl FnOnce(&mut Value)) {
    let mut snapshot = read(path);
    edit(&mut snapshot);
    std::fs::write(path, serde_json::to_vec_pretty(&snapshot).unwrap()).unwrap();
}

fn tool<'a>(snapshot: &'a mut Value, name: &str) -> &'a mut Value {
    snapshot["tools"]
        .as_array_mut()
        .unwrap()
        .iter_mut()
        .find(|tool| tool["name"] == name)
        .unwrap()
}

#[test]
fn the_first_check_writes_the_snapshot_and_the_next_finds_it_unchanged() {
    let dir = Dir::new();
    let created = guard(&dir.snapshot(), "1.0.0").check().unwrap();
    assert!(matches!(created, Checked::Created { .. }), "{created:?}");
    let snapshot = read(&dir.snapshot());
    assert_eq!(snapshot["package"], "weather");
    assert_eq!(snapshot["version"], "1.0.0");
    let names: Vec<&Value> = snapshot["tools"]
        .as_array()
        .unwrap()
        .iter()
        .map(|t| &t["name"])
        .collect();
    assert_eq!(names, [&json!("forecast"), &json!("greet")]);
    let text = std::fs::read_to_string(dir.snapshot()).unwrap();
    assert!(
        text.starts_with("{\n  \"package\": \"weather\",\n"),
        "{text}"
    );
    assert!(text.ends_with("}\n"));

    let again = guard(&dir.snapshot(), "1.0.0").check().unwrap();
    assert!(matches!(again, Checked::Unchanged), "{again:?}");
    assert_eq!(std::fs::read_to_string(dir.snapshot()).unwrap(), text);
}

#[test]
fn additive_and_cosmetic_changes_rewrite_the_snapshot() {
    let dir = Dir::new();
    guard(&dir.snapshot(), "1.0.0").check().unwrap();
    let fresh = std::fs::read_to_string(dir.snapshot()).unwrap();
    // As if the snapshot were older: `greet` is new, and `forecast` was described otherwise.
    edit(&dir.snapshot(), |snapshot| {
        snapshot["tools"].as_array_mut().unwrap().pop();
        tool(snapshot, "forecast")["description"] = json!("Weather.");
    });
    let Checked::Updated { changes, .. } = guard(&dir.snapshot(), "1.0.0").check().unwrap() else {
        panic!("not updated");
    };
    let lines: Vec<String> = changes.iter().map(ToString::to_string).collect();
    assert_eq!(
        lines,
        [
            "additive: greet: tool added",
            "cosmetic: forecast: description changed"
        ]
    );
    assert_eq!(std::fs::read_to_string(dir.snapshot()).unwrap(), fresh);
}

#[test]
fn a_breaking_change_is_refused_with_what_to_do() {
    let dir = Dir::new();
    guard(&dir.snapshot(), "1.2.0").check().unwrap();
    // As if `city` used to be optional: now requiring it breaks callers.
    edit(&dir.snapshot(), |snapshot| {
        tool(snapshot, "forecast")["inputSchema"]["required"] = json!([]);
    });
    let before = std::fs::read_to_string(dir.snapshot()).unwrap();
    let err = guard(&dir.snapshot(), "1.3.0").check().unwrap_err();
    let GuardError::Breaking { changes, .. } = &err else {
        panic!("{err}");
    };
    assert_eq!(changes[0].severity, Severity::Breaking);
    assert_eq!(
        err.to_string(),
        format!(
            "the MCP tools of weather 1.3.0 break callers of the contract in {} (1 change: 1 \
             breaking, 0 additive, 0 cosmetic):\n  - breaking: forecast input /properties/city: argument `city` now \
             required\nTo accept these changes, either raise the version of weather above 1.2.0 \
             to a new major release (2.0.0), which the snapshot will then record, or build once \
             with TOOLWRIGHT_ACCEPT_BREAKING=1; otherwise, undo the breaking changes.",
            dir.snapshot().display()
        )
    );
    assert_eq!(std::fs::read_to_string(dir.snapshot()).unwrap(), before);
}

#[test]
fn a_new_major_version_or_the_variable_accepts_a_breaking_change() {
    let dir = Dir::new();
    guard(&dir.snapshot(), "0.4.1").check().unwrap();
    let remove_greet = |snapshot: &mut Value| {
        let tools = snapshot["tools"].as_array_mut().unwrap();
        let mut gone = tools[0].clone();
        gone["name"] = json!("gone");
        tools.insert(1, gone);
    };
    edit(&dir.snapshot(), remove_greet);
    // 0.4.2 is no new major release of a 0.x crate; 0.5.0 is.
    assert!(guard(&dir.snapshot(), "0.4.2").check().is_err());
    let outcome = guard(&dir.snapshot(), "0.5.0").check().unwrap();
    assert!(matches!(outcome, Checked::Updated { .. }), "{outcome:?}");
    assert_eq!(read(&dir.snapshot())["version"], "0.5.0");

    edit(&dir.snapshot(), remove_greet);
    let accepted = guard(&dir.snapshot(), "0.5.0")
        .accept_breaking(true)
        .check();
    assert!(
        matches!(accepted, Ok(Checked::Updated { .. })),
        "{accepted:?}"
    );
}

#[test]
fn in_ci_a_snapshot_that_needs_writing_is_an_error() {
    let dir = Dir::new();
    let missing = guard(&dir.snapshot(), "1.0.0")
        .ci(true)
        .check()
        .unwrap_err();
    assert!(
        matches!(missing, GuardError::Stale { missing: true, .. }),
        "{missing}"
    );
    assert!(!dir.snapshot().exists());

    guard(&dir.snapshot(), "1.0.0").check().unwrap();
    // A version raised without the snapshot is stale too: the snapshot records the version.
    let stale = guard(&dir.snapshot(), "1.0.1")
        .ci(true)
        .check()
        .unwrap_err();
    assert_eq!(
        stale.to_string(),
        format!(
            "the MCP manifest snapshot {} is out of date (the version changed), and CI is set, \
             so it is not rewritten:\nBuild without CI to update it, then commit it.",
            dir.snapshot().display()
        )
    );
    assert_eq!(read(&dir.snapshot())["version"], "1.0.0");
}

#[test]
fn a_file_that_is_not_a_snapshot_is_refused() {
    let dir = Dir::new();
    for (text, reason) in [
        ("{", "EOF while parsing an object at line 1 column 1"),
        (r#"{"version": "1.0.0"}"#, "it has no `tools` array"),
        (r#"{"tools": []}"#, "it has no `version` string"),
    ] {
        std::fs::write(dir.snapshot(), text).unwrap();
        let err = guard(&dir.snapshot(), "1.0.0").check().unwrap_err();
        assert_eq!(
            err.to_string(),
            format!(
                "{} is not a manifest snapshot: {reason}",
                dir.snapshot().display()
            )
        );
    }
}

#[test]
fn line_endings_and_layout_do_not_make_a_snapshot_stale() {
    let dir = Dir::new();
    guard(&dir.snapshot(), "1.0.0").check().unwrap();
    let text = std::fs::read_to_string(dir.snapshot()).unwrap();
    let crlf = text.replace('\n', "\r\n");
    std::fs::write(dir.snapshot(), &crlf).unwrap();
    let outcome = guard(&dir.snapshot(), "1.0.0").ci(true).check().unwrap();
    assert!(matches!(outcome, Checked::Unchanged), "{outcome:?}");
    assert_eq!(std::fs::read_to_string(dir.snapshot()).unwrap(), crlf);
}

#[test]
fn a_build_script_without_tools_is_told_to_link_them() {
    let dir = Dir::new();
    let empty = toolwright::registry::Registry::from_registrations([]).unwrap();
    let err = guard(&dir.snapshot(), "1.0.0")
        .registry(empty)
        .check()
        .unwrap_err();
    assert!(matches!(err, GuardError::NoTools), "{err}");
    assert_eq!(
        err.to_string(),
        "no MCP tool is linked into the build script: name the tools crates, as in \
         `toolwright::build::emit!(notes_tools)`, since the linker drops a crate nothing refers \
         to; each must be under [build-dependencies] too"
    );
    assert!(!dir.snapshot().exists());
}

#[test]
fn the_prompts_are_part_of_the_contract() {
    let dir = Dir::new();
    guard(&dir.snapshot(), "1.2.0").check().unwrap();
    let snapshot = read(&dir.snapshot());
    assert_eq!(
        snapshot["prompts"],
        json!([{"name": "plan", "description": "Plan a trip to a city.", "arguments": [
            {"name": "city", "description": "The city.", "required": true}
        ]}])
    );
    // As if `plan` took a budget too: a client that sends it is now refused.
    edit(&dir.snapshot(), |snapshot| {
        snapshot["prompts"][0]["arguments"]
            .as_array_mut()
            .unwrap()
            .push(json!({"name": "budget"}));
    });
    let err = guard(&dir.snapshot(), "1.2.1").check().unwrap_err();
    let GuardError::Breaking { changes, .. } = &err else {
        panic!("{err}");
    };
    let lines: Vec<String> = changes.iter().map(ToString::to_string).collect();
    assert_eq!(lines, ["breaking: prompt plan: argument `budget` removed"]);
}
