#!/usr/bin/env bash
# The build-time manifest guard, as a developer meets it: in a copy of the repository, a new
# required argument on a notes tool fails `cargo build -p notes-server` with a report naming the
# tool; making the argument optional builds and rewrites the committed snapshot; with CI set, a
# stale snapshot fails the build; TOOLWRIGHT_SKIP_GUARD turns the comparison off.
#
# Run from anywhere: `bash .ci/manifest_guard.sh [TARGET_DIR]`. The copy builds in TARGET_DIR,
# by default target/manifest-guard, which no other build of the repository reads or writes, so
# that it can run beside them. .ci/beside.sh gives it instead the directory the published crates
# were built in just before (.ci/package.sh): the dependencies the two build with the same
# features and settings are built once. The copy's crates cannot be taken for the published
# ones there, nor these for the copy's: cargo tells path crates apart by their place in their
# workspace, and the copy's workspace is the repository's, the published crates' their own
# unpacked tarballs. Never the repository's own target/: there a crate of the copy would be
# the same unit as the repository's, and the guard's edited build would stand for the other.
set -euo pipefail
cd "$(dirname "$0")/.."
root=$PWD
# Made absolute: the builds below run in the copy.
target_dir=$(realpath -m "${1:-$root/target/manifest-guard}")
export CARGO_TARGET_DIR="$target_dir"
work=$(mktemp -d)
trap 'rm -rf "$work"' EXIT
copy="$work/repository"
mkdir "$copy"
git ls-files -z | (cd "$root" && xargs -0 cp --parents -t "$copy")
cd "$copy"
snapshot=examples/notes-server/mcp-manifest.json
tool=examples/notes-tools/src/read.rs
cp "$snapshot" "$work/snapshot.json"
passed=0
pass() { passed=$((passed + 1)); echo "ok $passed $*"; }
fail() { echo "FAILED: $*"; echo "$passed passed, 1 failed"; exit 1; }

unset CI TOOLWRIGHT_ACCEPT_BREAKING
cargo build -p notes-server 2>"$work/log" || fail "the copy does not build: $(cat "$work/log")"
cmp -s "$snapshot" "$work/snapshot.json" || fail "a clean build changed the committed snapshot"
pass "the copy builds and its snapshot is current"

# A new required argument breaks callers of get_note.
python3 - "$tool" <<'PY'
import sys
path = sys.argv[1]
text = open(path).read()
old = "    /// The note's id.\n    id: u64,\n) -> Result<Note, NotesError> {"
assert old in text, "get_note's signature moved"
new = "    /// The note's id.\n    id: u64,\n    /// The revision to read.\n    revision: u32,\n) -> Result<Note, NotesError> {\n    let _ = revision;"
open(path, "w").write(text.replace(old, new, 1))
PY
if cargo build -p notes-server 2>"$work/log"; then
    fail "a new required argument built"
fi
grep -q 'breaking: get_note input /properties/revision: new required argument `revision`' "$work/log" \
    || fail "the report does not name the tool and the change: $(cat "$work/log")"
grep -q 'TOOLWRIGHT_ACCEPT_BREAKING=1' "$work/log" || fail "the report does not say how to accept"
cmp -s "$snapshot" "$work/snapshot.json" || fail "a refused build changed the snapshot"
pass "a new required argument fails the build, naming get_note"
grep -A3 'breaking: get_note' "$work/log" | sed 's/^/    /'

# TOOLWRIGHT_SKIP_GUARD builds anyway, comparing nothing and writing no snapshot.
TOOLWRIGHT_SKIP_GUARD=1 cargo build -p notes-server 2>"$work/log" \
    || fail "TOOLWRIGHT_SKIP_GUARD=1 does not build: $(cat "$work/log")"
cmp -s "$snapshot" "$work/snapshot.json" || fail "TOOLWRIGHT_SKIP_GUARD=1 changed the snapshot"
pass "TOOLWRIGHT_SKIP_GUARD=1 builds without comparing"

# An optional argument is additive: the build goes on and rewrites the snapshot.
sed -i 's/    revision: u32,/    revision: Option<u32>,/' "$tool"
cargo build -p notes-server 2>"$work/log" || fail "an optional argument fails: $(cat "$work/log")"
grep -q 'updated the MCP manifest snapshot' "$work/log" || fail "no warning: $(cat "$work/log")"
grep -q '"revision"' "$snapshot" || fail "the snapshot was not rewritten"
pass "an optional argument builds, and the snapshot is rewritten with a warning"
grep 'warning' "$work/log" | sed 's/^/    /'

# With CI set, the stale snapshot fails the build instead of being rewritten.
cp "$work/snapshot.json" "$snapshot"
if CI=true cargo build -p notes-server 2>"$work/log"; then
    fail "CI=true built with a stale snapshot"
fi
grep -q 'is out of date (1 change: 0 breaking, 1 additive, 0 cosmetic), and CI is set' "$work/log" \
    || fail "CI=true fails without saying why: $(cat "$work/log")"
cmp -s "$snapshot" "$work/snapshot.json" || fail "CI=true rewrote the snapshot"
pass "CI=true fails on the stale snapshot and leaves it alone"

echo "$passed passed, 0 failed"
