//! The snapshot a guard compares the tools with: its text, the manifest it holds, and what its
//! version allows.

use std::path::Path;

use serde::Serialize;
use serde_json::Value;

use super::GuardError;

/// The snapshot file: the manifest, and the package it is the contract of.
#[derive(Serialize)]
pub(super) struct Snapshot<'a> {
    pub(super) package: &'a str,
    pub(super) version: &'a str,
    /// The manifest's members: `tools`, and `prompts`, `resources` and `resourceTemplates` when
    /// it has them, in the manifest's order.
    #[serde(flatten)]
    pub(super) manifest: &'a Value,
}

/// The snapshot's text: pretty JSON, every object's keys sorted, a newline at the end.
pub(super) fn snapshot_text(package: &str, version: &str, manifest: &Value) -> String {
    let snapshot = Snapshot {
        package,
        version,
        manifest,
    };
    let mut text = serde_json::to_string_pretty(&snapshot).expect("a snapshot serialises");
    text.push('\n');
    text
}

/// The manifest a snapshot holds: the snapshot without its package and version.
pub(super) fn contract(snapshot: &Value) -> Value {
    let mut manifest = snapshot.clone();
    if let Value::Object(members) = &mut manifest {
        members.remove("package");
        members.remove("version");
    }
    manifest
}

/// The manifest a snapshot holds, and the version it records.
pub(super) fn read_snapshot(path: &Path, text: &str) -> Result<(Value, String), GuardError> {
    let invalid = |reason: &str| GuardError::Snapshot {
        snapshot: path.to_owned(),
        reason: reason.to_owned(),
    };
    let json: Value = serde_json::from_str(text).map_err(|err| invalid(&err.to_string()))?;
    if !json.get("tools").is_some_and(Value::is_array) {
        return Err(invalid("it has no `tools` array"));
    }
    let version = json
        .get("version")
        .and_then(Value::as_str)
        .ok_or_else(|| invalid("it has no `version` string"))?
        .to_owned();
    Ok((json, version))
}

/// Whether `new` is a release that may break `old`'s callers, as Cargo reads versions: a
/// greater major version, or while it is 0 a greater minor one (while that is 0 too, a greater
/// patch). A version that is not `MAJOR.MINOR.PATCH` is never one.
pub(super) fn is_new_major(new: &str, old: &str) -> bool {
    fn level(version: &str) -> Option<(u64, u64, u64)> {
        let core = version.split(['-', '+']).next()?;
        let mut parts = core.split('.').map(|part| part.parse::<u64>().ok());
        let (major, minor, patch) = (parts.next()??, parts.next()??, parts.next()??);
        Some(match (major, minor) {
            (0, 0) => (0, 0, patch),
            (0, minor) => (0, minor, 0),
            (major, _) => (major, 0, 0),
        })
    }
    matches!((level(new), level(old)), (Some(new), Some(old)) if new > old)
}

/// The first version after `version` that may break callers: `2.0.0` after `1.4.2`, `0.3.0`
/// after `0.2.7`.
pub(super) fn next_major(version: &str) -> String {
    let mut parts = version
        .split(['-', '+'])
        .next()
        .unwrap_or("")
        .split('.')
        .map(|part| part.parse::<u64>().unwrap_or(0));
    match (parts.next(), parts.next(), parts.next()) {
        (Some(0), Some(0), Some(patch)) => format!("0.0.{}", patch + 1),
        (Some(0), Some(minor), _) => format!("0.{}.0", minor + 1),
        (Some(major), _, _) => format!("{}.0.0", major + 1),
        _ => "a new major version".to_owned(),
    }
}
