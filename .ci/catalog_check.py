"""Drive a 1,000-tool server (the catalog-server example) in progressive mode with the official
Python MCP SDK client: find hidden tools with `search_tools`, then run them with `call_tool`.

Usage:
    pip install -r .ci/requirements.txt
    python .ci/catalog_check.py -- <server command> [args...]
    python .ci/catalog_check.py -- target/debug/catalog-server

The script adds `--catalog progressive` to the server command. The SDK (mcp 2.x) spawns the
server over its stdio transport, and the suite below runs twice, each time against a fresh
server process: [auto] with `Client(...)`'s default mode="auto" (the stateless protocol through
`server/discover`) and [legacy] with mode="legacy" (the `initialize` handshake).

The wire contract of progressive mode, as checked:
  1. tools/list holds exactly `search_tools` and `call_tool`, in that order, each with
     `_meta["anthropic/alwaysLoad"] == true` (`search_tools` read-only, `call_tool`
     destructive), then the core tools in name order, and nothing else;
  2. `search_tools`'s description outlines the catalog: "The server has 1000 tools. Tags: tag
     (count), ...";
  3. `search_tools {query, detail, limit, offset}` returns `structuredContent` `{"total", "tools"}`
     (and a `note` when a model ranks too but the tools are still being embedded)
     and the same JSON in a text block. An empty query lists the whole catalog in name order
     (total 1000, limit 10 and detail "summary" by default); `offset` pages through it; detail
     "name" gives `{"name", "matched"}` entries (how the tool matched: `words` for a ranking by
     words), "summary" adds `description` (and `title`, `tags`,
     `annotations` when the tool has them), "full" adds `inputSchema` (and `outputSchema`);
  4. a query made of a hidden tool's name words finds it on the first page, for 20 tools sampled
     across the catalog; the line says at which rank;
  5. for three hidden tools of different argument shapes, `call_tool {name, arguments}`, with
     arguments built from the tool's `inputSchema` (detail "full"), runs it: not `isError`, and
     its receipt echoes the name and arguments; a direct `tools/call` of the tool by name runs it
     too;
  6. `search_tools` refuses arguments outside its rules with `isError: true` and a message that
     states the rule: limit 0 or 51 (1 to 50), a query of 129 characters (at most 128) or of 17
     distinct words (at most 16), detail "everything", offset -1; `call_tool` refuses to run
     `search_tools`, and an unknown name, with `isError: true`.

Prints one line per passed check and ends with "N passed, 0 failed"; on the first failure it
prints the reason, ends with "N passed, 1 failed" and exits 1. The SDK logs on stderr that it
cannot validate the result of the direct `tools/call` of a hidden tool, since `tools/list` does not
give that tool's outputSchema; that is expected.
"""

import json
import re
import sys

import anyio
from mcp import Client, MCPError
from mcp.types import CallToolResult, TextContent

from mcp_checks import TIMEOUT, CheckFailed, Checks, reported, server_command, stdio_params, text_of

TOTAL = 1000
TAGS = ["billing", "calendar", "chat", "crm", "docs", "hr", "monitoring", "repos", "storage",
        "tickets"]  # 100 tools each
CORE_TOOLS = ["list_calendar_events", "list_repositories", "search_contacts", "search_tickets"]
SAMPLES = 20
SUMMARY_KEYS = {"name", "matched", "description", "title", "tags", "annotations"}
ALWAYS_LOAD = "anthropic/alwaysLoad"
def mentions(text: str, word: str) -> bool:
    return re.search(rf"(?<![\w-]){re.escape(word)}(?!\w)", text) is not None


def json_blocks(result: CallToolResult) -> list:
    """The text blocks of a result that parse as JSON."""
    found = []
    for block in result.content:
        if isinstance(block, TextContent):
            try:
                found.append(json.loads(block.text))
            except ValueError:
                pass
    return found


def sample_value(schema: object, root: dict) -> object:
    """A value valid against `schema`: its default, its first enum value, or a plain value of its
    type, following `$ref`s into `root`'s `$defs` and taking the first non-null alternative."""
    if not isinstance(schema, dict):
        return "sample"
    if "$ref" in schema:
        name = schema["$ref"].removeprefix("#/$defs/")
        return sample_value((root.get("$defs") or {}).get(name), root)
    if "default" in schema and schema["default"] is not None:
        return schema["default"]
    if "const" in schema:
        return schema["const"]
    if schema.get("enum"):
        return next((v for v in schema["enum"] if v is not None), schema["enum"][0])
    for key in ("oneOf", "anyOf"):
        alternatives = [s for s in schema.get(key) or [] if s.get("type") != "null"]
        if alternatives:
            return sample_value(alternatives[0], root)
    kinds = schema.get("type")
    kind = next((k for k in kinds if k != "null"), "null") if isinstance(kinds, list) else kinds
    if kind == "integer":
        return max(7, int(schema.get("minimum", 0)))
    if kind == "number":
        return 7.5
    if kind == "boolean":
        return True
    if kind == "array":
        return [sample_value(schema.get("items"), root)]
    if kind == "object":
        return arguments_for(schema, root)
    return "sample"


def arguments_for(schema: dict, root: dict | None = None) -> dict:
    """Every property of an object schema, each with a sample value."""
    root = schema if root is None else root
    properties = schema.get("properties") or {}
    return {name: sample_value(prop, root) for name, prop in properties.items()}


async def run_suite(c: Checks, client: Client) -> None:
    listed = await client.list_tools()
    names = [t.name for t in listed.tools]
    tools = {t.name: t for t in listed.tools}
    c.ok(not listed.next_cursor, "tools/list is one page", listed.next_cursor)
    c.ok(names == ["search_tools", "call_tool", *CORE_TOOLS],
         f"tools/list is search_tools, call_tool, then the {len(CORE_TOOLS)} core tools by name",
         names)
    for name in ("search_tools", "call_tool"):
        meta = tools[name].meta or {}
        c.ok(meta.get(ALWAYS_LOAD) is True, f"{name}: _meta[{ALWAYS_LOAD!r}] is true", meta)
    annotations = tools["search_tools"].annotations
    c.ok(annotations is not None and annotations.read_only_hint is True,
         "search_tools: readOnlyHint is true", annotations)
    annotations = tools["call_tool"].annotations
    c.ok(annotations is not None and annotations.destructive_hint is True,
         "call_tool: destructiveHint is true", annotations)
    outline = tools["search_tools"].description or ""
    c.ok(f"{TOTAL} tools" in outline, f"search_tools: description says '{TOTAL} tools'", outline)
    missing = [tag for tag in TAGS if f"{tag} ({TOTAL // len(TAGS)})" not in outline]
    c.ok(not missing, "search_tools: description counts each tag, 'tag (100)'",
         f"missing {missing}: {outline}")
    properties = tools["search_tools"].input_schema.get("properties") or {}
    c.ok({"query", "detail", "limit", "offset"} <= set(properties),
         "search_tools: inputSchema has query, detail, limit, offset", sorted(properties))

    async def call(name: str, args: dict, *, error: bool = False) -> CallToolResult:
        shown = json.dumps(args)
        shown = shown if len(shown) <= 120 else shown[:117] + "..."
        try:
            result = await client.call_tool(name, args)
        except Exception as e:  # MCPError (JSON-RPC error), RuntimeError (SDK output validation)
            code = f" {e.code}" if isinstance(e, MCPError) else ""
            raise CheckFailed(f"[{c.label}] {name}({shown}) raised "
                              f"{type(e).__name__}{code}: {e}") from e
        c.ok(result.is_error == error, f"{name}({shown}) isError={error}",
             f"isError={result.is_error}: {text_of(result)[:300]}")
        return result

    async def search(args: dict) -> dict:
        result = await call("search_tools", args)
        data = result.structured_content
        # A `note` says why the ranking is by words only: with a model, while the tools are
        # still being embedded.
        c.ok(isinstance(data, dict) and {"total", "tools"} <= set(data) <= {"total", "tools", "note"}
             and isinstance(data["total"], int) and isinstance(data["tools"], list)
             and isinstance(data.get("note", ""), str),
             "search_tools: structuredContent is {total: int, tools: [...]} (and a note)",
             repr(data)[:300])
        c.ok(data in json_blocks(result), "search_tools: a text block holds the same JSON",
             text_of(result)[:300])
        return data

    # The whole catalog, in name order, through pages of 50.
    first = await search({"query": ""})
    c.ok(first["total"] == TOTAL, f"empty query: total is {TOTAL}", first["total"])
    c.ok(len(first["tools"]) == 10, "empty query: 10 tools by default", len(first["tools"]))
    c.ok(all(set(e) <= SUMMARY_KEYS and "description" in e for e in first["tools"]),
         "default detail is summary: name, description (title, tags, annotations)",
         first["tools"][:2])
    catalog = []
    for offset in range(0, TOTAL, 50):
        page = await client.call_tool("search_tools", {"query": "", "detail": "name", "limit": 50,
                                                       "offset": offset})
        entries = (page.structured_content or {}).get("tools") or []
        if page.is_error or any(set(e) != {"name", "matched"} for e in entries):
            c.ok(False, f"catalog page at offset {offset}: {{name, matched}} entries",
                 text_of(page)[:300])
        catalog += [e["name"] for e in entries]
    c.ok(len(catalog) == TOTAL and len(set(catalog)) == TOTAL,
         f"the catalog pages through {TOTAL} distinct tools, detail name gives {{name, matched}}",
         f"{len(catalog)} entries, {len(set(catalog))} distinct")
    c.ok(catalog == sorted(catalog), "the empty query lists the catalog in name order",
         catalog[:20])
    c.ok([e["name"] for e in first["tools"]] == catalog[:10],
         "the first page is the catalog's first 10",
         first["tools"])
    c.ok(set(CORE_TOOLS) <= set(catalog) and not {"search_tools", "call_tool"} & set(catalog),
         "the catalog holds the core tools, not search_tools or call_tool")
    second = await search({"query": "", "offset": 10})
    second_names = [e["name"] for e in second["tools"]]
    c.ok(second_names == catalog[10:20] and not set(second_names) & set(catalog[:10]),
         "offset 10 gives the next 10, disjoint from the first page", second_names)
    for query, name, expected in (
        ("get ticket comment", "get_ticket_comment",
         {"title": "Get Ticket Comment", "tags": ["tickets", "read"],
          "annotations": {"readOnlyHint": True}}),
        ("share calendar", "share_calendar", {"tags": ["calendar", "write"]}),
    ):
        found = await search({"query": query, "detail": "summary"})
        entry = next((e for e in found["tools"] if e.get("name") == name), {})
        shown = {k: v for k, v in entry.items() if k != "description"}
        c.ok(set(entry) == {"name", "matched", "description", *expected}
             and entry["matched"] in ("words", "both")
             and all(entry[k] == v for k, v in expected.items() if k != "tags")
             and sorted(entry.get("tags") or []) == sorted(expected["tags"]),
             f"summary entry of {name}: description, {', '.join(expected)}", shown or found)

    # Hidden tools, found by their name words, described in full, then run.
    hidden = [name for name in catalog if name not in CORE_TOOLS]
    step = len(hidden) // SAMPLES
    for name in hidden[step // 2::step][:SAMPLES]:
        query = name.replace("_", " ")
        found = await search({"query": query})
        ranked = [e["name"] for e in found["tools"]]
        c.ok(name in ranked, f"search {query!r} finds {name} on the first page"
             + (f" (rank {ranked.index(name) + 1})" if name in ranked else ""), ranked)

    # One tool of each argument shape: strings, an array and an enum with defaults; an enum
    # without; an id and an optional string.
    for name in (next(n for n in hidden if n.startswith("create_")),
                 next(n for n in hidden if n.startswith("share_")),
                 hidden[len(hidden) // 3]):
        full = await search({"query": name.replace("_", " "), "detail": "full", "limit": 5})
        entry = next((e for e in full["tools"] if e["name"] == name), None)
        c.ok(entry is not None and isinstance(entry.get("inputSchema"), dict)
             and entry["inputSchema"].get("type") == "object",
             f"detail full gives {name}'s inputSchema", entry)
        c.ok(isinstance(entry.get("outputSchema"), dict) and "description" in entry,
             "detail full keeps the description and gives the outputSchema", sorted(entry))
        others = [e for e in full["tools"] if "inputSchema" not in e]
        c.ok(not others, "detail full gives every entry an inputSchema", others)
        arguments = arguments_for(entry["inputSchema"])
        for how, result in (
            ("call_tool", await call("call_tool", {"name": name, "arguments": arguments})),
            ("tools/call", await call(name, arguments)),
        ):
            receipts = [result.structured_content, *json_blocks(result)]
            receipt = next((r for r in receipts if isinstance(r, dict) and "tool" in r), None)
            echoed = (receipt or {}).get("arguments") or {}
            c.ok(receipt is not None and receipt["tool"] == name
                 and all(echoed.get(k) == v for k, v in arguments.items()),
                 f"{how} ran {name} with {json.dumps(arguments)}", text_of(result)[:300])

    # The rules of search_tools and call_tool.
    words = " ".join(f"word{i}" for i in range(17))
    for args, rule in (
        ({"query": "", "limit": 0}, ["limit", "1"]),
        ({"query": "", "limit": 51}, ["limit", "50"]),
        ({"query": "x" * 129}, ["query", "128"]),
        ({"query": words}, ["16"]),
        ({"query": "", "detail": "everything"}, ["detail"]),
        ({"query": "", "offset": -1}, ["offset"]),
    ):
        text = text_of(await call("search_tools", args, error=True))
        c.ok(all(mentions(text, w) for w in rule),
             f"search_tools: the message states the rule ({', '.join(rule)})",
             text)
    text = text_of(await call("call_tool", {"name": "search_tools", "arguments": {"query": ""}},
                              error=True))
    c.ok(bool(text.strip()), "call_tool refuses search_tools, saying why", text)
    text = text_of(await call("call_tool", {"name": "no_such_tool", "arguments": {}}, error=True))
    c.ok(mentions(text, "no_such_tool"), "call_tool of an unknown name names it", text)


async def main(command: list[str]) -> int:
    params = stdio_params([*command, "--catalog", "progressive"])
    c = Checks()

    async def both_modes() -> None:
        for mode in ("auto", "legacy"):
            c.label = mode
            with anyio.fail_after(10 * TIMEOUT):
                async with Client(params, mode=mode, read_timeout_seconds=TIMEOUT) as client:
                    await run_suite(c, client)

    return await reported(c, both_modes)


if __name__ == "__main__":
    sys.exit(anyio.run(main, server_command(sys.argv[1:], __doc__)))
