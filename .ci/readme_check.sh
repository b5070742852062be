#!/usr/bin/env bash
# The README's snippets, copied as they stand into fresh crates:
# - a server whose tools live in another crate (the repository's notes-tools): the guarded main
#   with its build script, and the plain main, each serve every tool; a main that names no tools
#   crate has none, and refuses to start (guarded) or --print-manifest refuses it (plain) with the
#   linking advice on the first line;
# - a tools crate with application state, its server and its in-process test: the test passes,
#   the server serves the tool, and without its state it refuses to start as the README says;
# - a crate with the default features whose tools' schemas refuse what serde alone would not name.
set -euo pipefail
repo="$(cd "$(dirname "$0")/.." && pwd)"
work="$repo/target/readme-check"
rm -rf "$work"
# The shared target directory: the fresh crate builds only itself.
export CARGO_TARGET_DIR="$repo/target"
pass=0
ok() { pass=$((pass + 1)); echo "ok $pass $*"; }
fail() { echo "FAIL: $*"; exit 1; }

# The fenced block of README.md whose first line is exactly $1.
snippet() {
    awk -v first="$1" '
        /^```/ { if (inside) { if (found) exit; inside = 0; next } inside = 1; start = 1; next }
        inside && start { start = 0; if ($0 == first) found = 1 }
        inside && found { print }
    ' "$repo/README.md"
}

# A fresh crate at $1 named $2: its manifest, with the dependency tables that follow on stdin, and
# the repository's lock file, so that no dependency is resolved or built anew.
fresh_crate() {
    mkdir -p "$1/src"
    {
        printf '[package]\nname = "%s"\nversion = "0.1.0"\nedition = "2024"\npublish = false\n\n' "$2"
        printf '[workspace]\n\n'
        cat
    } >"$1/Cargo.toml"
    cp "$repo/Cargo.lock" "$1/Cargo.lock"
}

fresh_crate "$work" readme-server <<TOML
[dependencies]
toolwright = { path = "$repo/runtime" }
notes-tools = { path = "$repo/examples/notes-tools" }

[build-dependencies]
toolwright = { path = "$repo/runtime" }
notes-tools = { path = "$repo/examples/notes-tools" }
TOML
expected=$(cargo run --quiet --manifest-path "$repo/Cargo.toml" -p notes-server -- --print-manifest \
    | python3 -c 'import json, sys; print(len(json.load(sys.stdin)["tools"]))')

count() {
    "$CARGO_TARGET_DIR/debug/readme-server" --print-manifest \
        | python3 -c 'import json, sys; print(len(json.load(sys.stdin)["tools"]))'
}

# The guarded server: README's build.rs and src/main.rs. The snapshot is the fresh crate's own,
# written on its first build, as a developer's first build writes it.
snippet '// build.rs' >"$work/build.rs"
snippet '// src/main.rs' >"$work/src/main.rs"
[ -s "$work/build.rs" ] && [ -s "$work/src/main.rs" ] || fail "the README's guarded snippets were not found"
(cd "$work" && env -u CI cargo build --quiet)
[ "$(count)" = "$expected" ] || fail "the guarded server serves $(count) tools, not $expected"
ok "the README's guarded build.rs and main.rs serve all $expected tools of notes-tools"

# The guarded main naming no tools crate: the manifest the build embedded names tools the binary
# lacks, and the refusal says the likely cause on its first line.
sed 's/toolwright::server!(notes_tools)/toolwright::server!()/' "$work/src/main.rs" >"$work/main.rs.new"
mv "$work/main.rs.new" "$work/src/main.rs"
grep -q 'toolwright::server!()' "$work/src/main.rs" || fail "the guarded main was not rewritten"
(cd "$work" && env -u CI cargo build --quiet)
status=0
"$CARGO_TARGET_DIR/debug/readme-server" </dev/null >/dev/null 2>"$work/err.txt" || status=$?
[ "$status" -ne 0 ] || fail "the guarded main naming no tools crate started"
head -n 1 "$work/err.txt" | grep -qF 'the server names no tools crate: write `toolwright::server!(your_tools)`' \
    || fail "the first line of the refusal lacks the naming advice: $(cat "$work/err.txt")"
ok "the guarded main with server!(): the refusal's first line says to name the tools crate"

# The plain server, without a build script.
rm "$work/build.rs"
snippet '// src/main.rs, with `notes_tools` under [dependencies]' >"$work/src/main.rs"
[ -s "$work/src/main.rs" ] || fail "the README's plain snippet was not found"
(cd "$work" && cargo build --quiet)
[ "$(count)" = "$expected" ] || fail "the plain server serves $(count) tools, not $expected"
ok "the README's plain main.rs serves all $expected tools of notes-tools"

# A main that names no tools crate: the linker drops notes-tools, and the manifest is refused.
cat >"$work/src/main.rs" <<'RUST'
fn main() -> std::process::ExitCode {
    toolwright::server!().run()
}
RUST
(cd "$work" && cargo build --quiet)
status=0
"$CARGO_TARGET_DIR/debug/readme-server" --print-manifest >"$work/out.json" 2>"$work/err.txt" || status=$?
[ "$status" -eq 1 ] || fail "--print-manifest of an empty registry exits with $status, not 1"
grep -q 'no MCP tool is registered in this binary' "$work/err.txt" \
    && grep -q 'toolwright::server!(notes_tools)' "$work/err.txt" \
    || fail "the refusal lacks the linking advice: $(cat "$work/err.txt")"
[ ! -s "$work/out.json" ] || fail "an empty registry printed a manifest: $(cat "$work/out.json")"
ok "a main that names no tools crate: --print-manifest exits 1 with the linking advice"

# The tools crate with state, its server and its test.
shop="$repo/target/readme-shop"
rm -rf "$shop"
mkdir -p "$shop/tests"
fresh_crate "$shop" shop-tools <<TOML
[dependencies]
toolwright = { path = "$repo/runtime" }

[dev-dependencies]
serde_json = "1"
tokio = { version = "1", features = ["macros", "rt-multi-thread"] }
TOML
snippet "// src/lib.rs: tools that take the application's state" >"$shop/src/lib.rs"
snippet "// src/main.rs: the server gives the tools their state" >"$shop/src/main.rs"
snippet "// tests/tools.rs: a test calls the tools in-process, through the server's own checks" \
    >"$shop/tests/tools.rs"
for file in src/lib.rs src/main.rs tests/tools.rs; do
    [ -s "$shop/$file" ] || fail "the README's $file snippet with state was not found"
done
(cd "$shop" && cargo test --quiet --test tools 2>&1) | grep -q 'test result: ok. 1 passed' \
    || fail "the README's in-process test does not pass"
ok "the README's tools crate with state: its in-process test passes"
tools=$("$CARGO_TARGET_DIR/debug/shop-tools" --print-manifest \
    | python3 -c 'import json, sys; print(len(json.load(sys.stdin)["tools"]))')
[ "$tools" = 1 ] || fail "the README's server with state serves $tools tools, not 1"
ok "the README's server with state serves its tool"
# Without the state, the server refuses to start with the message the README quotes.
cat >"$shop/src/main.rs" <<'RUST'
fn main() -> std::process::ExitCode {
    toolwright::server!(shop_tools).run()
}
RUST
(cd "$shop" && cargo build --quiet)
status=0
"$CARGO_TARGET_DIR/debug/shop-tools" </dev/null 2>"$shop/err.txt" || status=$?
[ "$status" -eq 1 ] || fail "a server without its state exits with $status, not 1"
# The refusal's one line, as the README quotes it (its lines joined).
python3 - "$repo/README.md" "$shop/err.txt" <<'PY' || fail "the refusal differs from the README's: $(cat "$shop/err.txt")"
import re, sys
readme = " ".join(open(sys.argv[1]).read().split())
refusal = [line.strip()[2:] for line in open(sys.argv[2]) if line.strip().startswith("- tool `add_item`")]
assert refusal and refusal[0] in readme, refusal
PY
ok "a server without its state refuses to start as the README says"
# The OAuth server: it builds with the `oauth` feature, and its tool lists its scope.
guarded="$repo/target/readme-oauth"
rm -rf "$guarded"
fresh_crate "$guarded" readme-oauth <<TOML
[dependencies]
toolwright = { path = "$repo/runtime", features = ["oauth"] }
TOML
snippet "use toolwright::auth::OAuth;" >"$guarded/src/main.rs"
[ -s "$guarded/src/main.rs" ] || fail "the README's OAuth snippet was not found"
(cd "$guarded" && cargo build --quiet)
"$CARGO_TARGET_DIR/debug/readme-oauth" --print-manifest | python3 -c '
import json, sys
tool, = json.load(sys.stdin)["tools"]
assert tool["securitySchemes"] == [{"type": "oauth2", "scopes": ["notes:write"]}], tool
' || fail "the README's OAuth tool does not list its scope"
ok "the README's OAuth server builds, and its tool lists the scope notes:write"

# A fresh crate with toolwright's default features: what a schema refuses is refused, naming the
# argument by its path, for a literal schema, a flattened struct and a nested one, as the text a
# client receives.
defaults="$repo/target/readme-defaults"
rm -rf "$defaults"
mkdir -p "$defaults/tests"
fresh_crate "$defaults" readme-defaults <<TOML
[dependencies]
toolwright = { path = "$repo/runtime" }
serde = { version = "1", features = ["derive"] }
serde_json = "1"
schemars = "1.2"

[dev-dependencies]
tokio = { version = "1", features = ["macros", "rt-multi-thread"] }
TOML
cat >"$defaults/src/lib.rs" <<'RUST'
use schemars::JsonSchema;
use serde::Deserialize;
use serde_json::Value;
use toolwright::mcp_tool;

/// Echoes its text.
#[mcp_tool(input_schema = r#"{"type": "object", "properties": {"text": {"type": "string"}}, "additionalProperties": false}"#)]
pub fn echo_literal(arguments: Value) -> Value {
    arguments
}

#[derive(Deserialize, JsonSchema)]
pub struct Page {
    /// How many items.
    pub limit: u32,
}

/// Searches the items.
#[mcp_tool(name = "search-items")]
pub fn search_items(words: String, #[arg(flatten)] page: Page) -> String {
    format!("{words} {}", page.limit)
}

#[derive(Deserialize, JsonSchema)]
pub struct Address {
    pub city: String,
}

/// Ships to an address.
#[mcp_tool]
pub fn ship(address: Address) -> String {
    address.city
}
RUST
cat >"$defaults/tests/refusals.rs" <<'RUST'
use serde_json::json;

#[tokio::test]
async fn what_the_schema_refuses_is_refused_by_name() {
    let client = toolwright::server!(readme_defaults).test_client().await.unwrap();
    let refused = client.call("echo_literal", json!({"nope": 1})).await.unwrap();
    assert!(refused.is_error());
    assert_eq!(
        refused.text(),
        "invalid arguments for tool `echo_literal`: unknown argument `nope`; expected one of `text`"
    );
    let refused = client.call("search-items", json!({"words": "tea", "limit": "two"})).await.unwrap();
    assert_eq!(
        refused.text(),
        "invalid arguments for tool `search-items`: argument `limit`: \"two\" is not of type \"integer\""
    );
    let refused = client.call("ship", json!({"address": {"city": 7}})).await.unwrap();
    assert_eq!(
        refused.text(),
        "invalid arguments for tool `ship`: argument `address.city`: 7 is not of type \"string\""
    );
    let shipped = client.call("ship", json!({"address": {"city": "Oslo"}})).await.unwrap();
    assert_eq!(shipped.text(), "Oslo");
}
RUST
(cd "$defaults" && cargo test --quiet --test refusals 2>&1) | tee "$defaults/test.out" | grep -q 'test result: ok. 1 passed' \
    || fail "the default-features crate's refusals differ: $(cat "$defaults/test.out")"
ok "default features: a literal schema, a flattened and a nested argument refused by name"
echo "$pass passed, 0 failed"
