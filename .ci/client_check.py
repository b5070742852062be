"""Drive an MCP stdio server (the notes-server example) with the official Python MCP SDK client.

Usage:
    pip install -r .ci/requirements.txt
    python .ci/client_check.py -- <server command> [args...]
    python .ci/client_check.py -- target/debug/notes-server
    python .ci/client_check.py --http -- target/debug/notes-server   # over Streamable HTTP

The SDK (mcp 2.x) spawns the server itself over its stdio transport. The suite below runs twice,
each time against a fresh server process:

  [auto]    `Client(...)` with the default mode="auto": the SDK first probes `server/discover`
            and falls back to the `initialize` handshake only when the server rejects it. The
            server speaks both eras, so this connection must negotiate the stateless protocol
            2026-07-28 through `server/discover` (no `initialize`);
  [legacy]  `Client(..., mode="legacy")`: the `initialize` handshake only, which must
            negotiate 2025-11-25.

Each connection first checks the era it negotiated (above) and that the server named itself
(`serverInfo`, or the `_meta` serverInfo stamp of the discover result in 2026-07-28), then:
  1. tools/list (following nextCursor): >= 8 tools, names sorted by byte order, non-empty tool
     descriptions and a non-empty description on every inputSchema property;
  2. every inputSchema/outputSchema is a valid JSON Schema 2020-12 document with root
     type "object", no `$schema`, no root `title`, `additionalProperties: false` on input roots,
     and `$ref` only to a (recursive) definition under the same schema's `$defs`;
  3. tool calls: add/get/list/search/update/tag/untag/delete round trips (structuredContent valid
     against the outputSchema and mirrored as JSON in a text block), plus the error paths (unknown
     id, wrong-typed / missing / unknown arguments -> isError naming the argument; unknown tool ->
     JSON-RPC error -32602);
  4. MCP Apps: `show_board` names its view `ui://notes/board.html` in `_meta.ui.resourceUri`;
     `resources/list` and `resources/read` serve it as `text/html;profile=mcp-app`; an unknown
     `ui://` URI is a JSON-RPC error (-32002 in 2025-11-25, -32602 in 2026-07-28); the view-only
     `move_note` is not listed to this client, which does not declare the extension, and a
     second connection that declares it (`Client(extensions=[...])`) lists it as
     `visibility: ["app"]` and calls it.

With --http the same suite runs over Streamable HTTP: for each mode the script starts
`<server command> --http 127.0.0.1:<free port>`, connects with `Client("http://.../mcp", ...)`,
and at the end stops the server with SIGTERM, which must exit with status 0. The server speaks
both eras over HTTP too, so [http auto] negotiates 2026-07-28 through `server/discover` (every
request a POST of its own, without a session) and [http legacy] 2025-11-25 through `initialize`
(with a session).

Prints one line per passed check and ends with "N passed, 0 failed"; on the first failure it
prints the reason, ends with "N passed, 1 failed" and exits 1.

Note on client-side validation in mcp 2.x: `Client.call_tool` does NOT validate *arguments*
against the inputSchema (they are sent as given), so the wrong-typed / missing / unknown argument
checks exercise the SERVER's validation without needing a raw request. It DOES validate the
structuredContent of successful (non-isError) results against the listed outputSchema and raises
RuntimeError on a mismatch; such an exception is reported as a failure of the check that made it.
"""

import json
import re
import sys
import uuid

import anyio
from jsonschema import Draft202012Validator
from mcp import Client, MCPError
from mcp.client.extension import ClientExtension
from mcp.types import INVALID_PARAMS, CallToolResult, TextContent

from mcp_checks import (TIMEOUT, CheckFailed, Checks, reported, server_command, serving,
                        stdio_params, text_of)

EXPECTED_ERA = {  # mode -> (protocol version, how it was negotiated), on stdio and over HTTP
    "auto": ("2026-07-28", "server/discover"),
    "legacy": ("2025-11-25", "initialize"),
}
BOARD = "ui://notes/board.html"
APP_MIME = "text/html;profile=mcp-app"
NOT_FOUND = {"auto": INVALID_PARAMS, "legacy": -32002}  # mode -> code of an unknown resource


class McpApps(ClientExtension):
    """What a host that shows MCP Apps views declares."""

    identifier = "io.modelcontextprotocol/ui"

    def settings(self) -> dict:
        return {"mimeTypes": [APP_MIME]}


REQUIRED_TOOLS = ["add_note", "delete_note", "get_note", "list_notes", "search_notes",
                  "tag_note", "untag_note", "update_note"]
def mentions(result: CallToolResult, word: str) -> bool:
    return re.search(rf"\b{re.escape(word)}\b", text_of(result)) is not None


def refs_in(node: object) -> list[str]:
    """Every string-valued `$ref` in a schema tree."""
    if isinstance(node, dict):
        own = [node["$ref"]] if isinstance(node.get("$ref"), str) else []
        return own + [r for v in node.values() for r in refs_in(v)]
    if isinstance(node, list):
        return [r for v in node for r in refs_in(v)]
    return []


def ref_problems(schema: dict) -> list[str]:
    """`$ref`s that do not point to a recursive definition under this schema's own `$defs`."""
    defs = schema.get("$defs") or {}
    problems = []
    for ref in refs_in(schema):
        name = ref.removeprefix("#/$defs/")
        if name == ref or name not in defs:
            problems.append(f"$ref {ref!r} does not resolve within this schema's $defs")
            continue
        seen, todo = set(), [name]  # is `name` reachable from its own definition?
        while todo:
            for r in refs_in(defs.get(todo.pop(), {})):
                target = r.removeprefix("#/$defs/")
                if target not in seen:
                    seen.add(target)
                    todo.append(target)
        if name not in seen:
            problems.append(f"$ref {ref!r} targets a non-recursive type (inline it instead)")
    return problems


async def list_all_tools(client: Client) -> list:
    tools, cursor = [], None
    for _ in range(100):
        page = await client.list_tools(cursor=cursor)
        tools += page.tools
        cursor = page.next_cursor
        if not cursor:
            return tools
    raise CheckFailed("tools/list pagination did not end after 100 pages")


def check_tools(c: Checks, tools: list) -> dict:
    names = [t.name for t in tools]
    c.ok(len(tools) >= 8, "at least 8 tools", f"got {len(tools)}: {names}")
    c.ok(not set(REQUIRED_TOOLS) - set(names), "required tools present",
         f"missing {sorted(set(REQUIRED_TOOLS) - set(names))}")
    c.ok(names == sorted(names, key=lambda n: n.encode()), "tool names sorted (byte order)", names)
    c.ok(len(set(names)) == len(names), "tool names unique", names)
    c.ok(all((t.description or "").strip() for t in tools), "every tool has a description",
         [t.name for t in tools if not (t.description or "").strip()])
    undocumented = [f"{t.name}.{p}" for t in tools
                    for p, s in (t.input_schema.get("properties") or {}).items()
                    if not (isinstance(s, dict) and str(s.get("description", "")).strip())]
    c.ok(not undocumented, "every input property has a description", undocumented)

    problems = []
    for t in tools:
        for kind, schema in (("inputSchema", t.input_schema), ("outputSchema", t.output_schema)):
            if schema is None:
                continue
            where = f"{t.name}.{kind}"
            try:
                Draft202012Validator.check_schema(schema)
            except Exception as e:  # jsonschema.SchemaError
                problems.append(f"{where}: not valid JSON Schema 2020-12: {e}")
            if schema.get("type") != "object":
                problems.append(f"{where}: root type is {schema.get('type')!r}, not 'object'")
            if "$schema" in schema:
                problems.append(f"{where}: has a $schema key")
            if "title" in schema:
                problems.append(f"{where}: has a root title {schema['title']!r}")
            if kind == "inputSchema" and schema.get("additionalProperties") is not False:
                problems.append(f"{where}: additionalProperties is "
                                f"{schema.get('additionalProperties', '<absent>')!r}, not false")
            problems += [f"{where}: {p}" for p in ref_problems(schema)]
    c.ok(not problems, "schemas: 2020-12, object roots, no $schema/title, closed inputs, $refs",
         "\n  " + "\n  ".join(problems))
    return {t.name: t for t in tools}


async def run_suite(c: Checks, client: Client) -> None:
    tools = check_tools(c, await list_all_tools(client))
    for name in ("add_note", "get_note", "list_notes", "search_notes"):
        c.ok(tools[name].output_schema is not None, f"{name} declares an outputSchema")

    async def call(name: str, args: dict, *, error: bool = False) -> CallToolResult:
        try:
            result = await client.call_tool(name, args)
        except Exception as e:  # MCPError (JSON-RPC error), RuntimeError (SDK output validation)
            code = f" {e.code}" if isinstance(e, MCPError) else ""
            raise CheckFailed(f"[{c.label}] {name}({json.dumps(args)}) raised "
                              f"{type(e).__name__}{code}: {e}") from e
        c.ok(result.is_error == error, f"{name}({json.dumps(args)}) isError={error}",
             f"isError={result.is_error}: {text_of(result)[:300]}")
        return result

    def structured(name: str, result: CallToolResult) -> dict:
        data = result.structured_content
        c.ok(isinstance(data, dict), f"{name}: structuredContent is an object", repr(data)[:200])
        errs = [e.message for e in Draft202012Validator(tools[name].output_schema).iter_errors(data)]
        c.ok(not errs, f"{name}: structuredContent matches outputSchema", errs)
        mirrored = []
        for block in result.content:
            if isinstance(block, TextContent):
                try:
                    mirrored.append(json.loads(block.text))
                except ValueError:
                    pass
        c.ok(data in mirrored, f"{name}: a text block holds the same JSON", text_of(result)[:300])
        return data

    word = f"zebra{uuid.uuid4().hex[:8]}"  # unique per run, in case the server persists notes
    tag = f"ci-{word}"
    title, body = "CI note", f"The quick {word} jumps over the lazy dog."
    note = structured("add_note", await call("add_note", {"title": title, "body": body,
                                                          "tags": [tag, "alpha"]}))
    nid = note.get("id")
    c.ok(isinstance(nid, int) and not isinstance(nid, bool), "add_note: id is an integer", repr(nid))
    c.ok((note.get("title"), note.get("body")) == (title, body), "add_note: title/body echoed", note)
    c.ok(set(note.get("tags") or []) == {tag, "alpha"}, "add_note: tags echoed", note.get("tags"))

    got = structured("get_note", await call("get_note", {"id": nid}))
    c.ok(got == note, "get_note returns the added note", f"{got} != {note}")

    listed = structured("list_notes", await call("list_notes", {}))
    ids = [n.get("id") for n in listed.get("notes") or [] if isinstance(n, dict)]
    c.ok(isinstance(listed.get("notes"), list) and nid in ids, "list_notes includes the note", listed)
    listed = structured("list_notes", await call("list_notes", {"tag": tag, "limit": 5}))
    c.ok([n.get("id") for n in listed.get("notes") or []] == [nid],
         "list_notes(tag) returns exactly the tagged note", listed)

    found = structured("search_notes", await call("search_notes", {"query": word}))
    matches = found.get("matches")
    hit_ids = [m.get("id", (m.get("note") or {}).get("id")) for m in matches or [] if isinstance(m, dict)]
    c.ok(isinstance(matches, list) and nid in hit_ids, f"search_notes finds {word!r}", found)

    await call("update_note", {"id": nid, "title": "CI note (edited)"})
    await call("tag_note", {"id": nid, "tags": ["beta"]})
    await call("untag_note", {"id": nid, "tags": ["alpha"]})
    got = structured("get_note", await call("get_note", {"id": nid}))
    c.ok(got.get("title") == "CI note (edited)" and got.get("body") == body,
         "update_note changed the title only", got)
    c.ok(set(got.get("tags") or []) == {tag, "beta"}, "tag_note/untag_note changed the tags",
         got.get("tags"))

    missing = await call("get_note", {"id": 999999}, error=True)
    c.ok("no note with id 999999" in text_of(missing), "unknown id: 'no note with id 999999'",
         text_of(missing))
    bad = await call("get_note", {"id": "abc"}, error=True)
    c.ok(mentions(bad, "id"), "wrong-typed argument: error names 'id'", text_of(bad))
    bad = await call("add_note", {"title": "no body"}, error=True)
    c.ok(mentions(bad, "body"), "missing argument: error names 'body'", text_of(bad))
    bad = await call("add_note", {"title": "t", "body": "b", "colour": "red"}, error=True)
    c.ok(mentions(bad, "colour"), "unknown argument: error names 'colour'", text_of(bad))

    # An unknown tool is a protocol error: the SDK raises MCPError carrying the JSON-RPC code.
    try:
        result = await client.call_tool("no_such_tool", {})
    except MCPError as e:
        c.ok(e.code == INVALID_PARAMS, "no_such_tool: JSON-RPC error -32602",
             f"code {e.code}: {e.message}")
    else:
        c.ok(False, "no_such_tool: JSON-RPC error -32602",
             f"got a result instead (isError={result.is_error}): {text_of(result)[:200]}")

    await call("delete_note", {"id": nid})
    gone = await call("get_note", {"id": nid}, error=True)
    c.ok(f"no note with id {nid}" in text_of(gone), "deleted note is gone", text_of(gone))

    # MCP Apps, as a client without the extension sees them.
    ui = (tools["show_board"].meta or {}).get("ui") if "show_board" in tools else None
    c.ok(ui == {"resourceUri": BOARD}, f"show_board names its view {BOARD}", repr(ui))
    c.ok("move_note" not in tools, "the view-only move_note is not listed without the extension",
         sorted(tools))
    board = structured("show_board", await call("show_board", {}))
    c.ok(isinstance(board.get("columns"), list) and isinstance(board.get("total"), int),
         "show_board returns the board", board)
    resources = (await client.list_resources()).resources
    listed = {str(r.uri): r for r in resources}
    c.ok(BOARD in listed and listed[BOARD].mime_type == APP_MIME,
         f"resources/list has {BOARD} as {APP_MIME}", repr(resources)[:300])
    contents = (await client.read_resource(BOARD)).contents
    c.ok(len(contents) == 1 and contents[0].mime_type == APP_MIME
         and getattr(contents[0], "text", "").lstrip().lower().startswith("<!doctype html"),
         f"resources/read {BOARD}: one HTML document as {APP_MIME}", repr(contents)[:300])
    try:
        await client.read_resource("ui://notes/missing.html")
    except MCPError as e:
        c.ok(e.code == NOT_FOUND[c.label.split()[-1]],
             f"resources/read of an unknown ui:// URI: JSON-RPC error "
             f"{NOT_FOUND[c.label.split()[-1]]}", f"code {e.code}: {e.message}")
    else:
        c.ok(False, "resources/read of an unknown ui:// URI: a JSON-RPC error", "got a result")


async def run_apps_host(c: Checks, client: Client) -> None:
    """A connection that declares MCP Apps: the view-only tool is listed, and callable."""
    tools = {t.name: t for t in await list_all_tools(client)}
    ui = (tools["move_note"].meta or {}).get("ui") if "move_note" in tools else None
    c.ok(ui == {"visibility": ["app"]}, "with the extension, move_note is listed as view-only",
         repr(ui))
    added = (await client.call_tool("add_note", {"title": "Board card", "body": "b",
                                                 "tags": ["todo"]})).structured_content
    moved = await client.call_tool("move_note", {"id": added["id"], "from": "todo", "to": "done"})
    done = [col for col in (moved.structured_content or {}).get("columns", [])
            if col.get("tag") == "done"]
    c.ok(not moved.is_error and any(card.get("id") == added["id"] for card in done[0]["notes"])
         if done else False, "move_note moves the card to the `done` column", text_of(moved)[:300])
    await client.call_tool("delete_note", {"id": added["id"]})


async def main(command: list[str], transport: str = "stdio") -> int:
    params = stdio_params(command)
    c = Checks()

    async def both_modes() -> None:
        for mode in ("auto", "legacy"):
            c.label = mode if transport == "stdio" else f"{transport} {mode}"
            with anyio.fail_after(10 * TIMEOUT):
                async with (serving(c, transport, command, params) as server,
                            Client(server, mode=mode, read_timeout_seconds=TIMEOUT) as client):
                    session = client.session
                    via = ("initialize" if session.initialize_result is not None
                           else "server/discover" if session.discover_result is not None
                           else "nothing")
                    version, expected_via = EXPECTED_ERA[mode]
                    c.ok((client.protocol_version, via) == (version, expected_via),
                         f"negotiated protocol {version} via {expected_via}",
                         f"got protocol {client.protocol_version} via {via}")
                    info = client.server_info
                    c.ok(info is not None and bool(info.name) and bool(info.version),
                         f"server named itself: {info.name if info else '?'} "
                         f"{info.version if info else ''}".rstrip(), repr(info))
                    await run_suite(c, client)
                async with (serving(c, transport, command, params) as server,
                            Client(server, mode=mode, read_timeout_seconds=TIMEOUT,
                                   extensions=[McpApps()]) as client):
                    await run_apps_host(c, client)

    return await reported(c, both_modes)


if __name__ == "__main__":
    argv = sys.argv[1:]
    transport = "stdio"
    if argv[:1] == ["--http"]:
        transport, argv = "http", argv[1:]
    sys.exit(anyio.run(main, server_command(argv, __doc__), transport))
