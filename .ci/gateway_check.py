"""Drive toolwright-gateway, mounting servers nobody here wrote, with the official Python MCP SDK
client (mcp 2.x).

Usage:
    python .ci/gateway_check.py -- target/debug/toolwright-gateway --config gateway.toml
    python .ci/gateway_check.py --http -- target/debug/toolwright-gateway --config gateway.toml

The configuration mounts notes-server as `notes` (in CI reached over Streamable HTTP, the others
started on stdio), `mcp-server-time` (PyPI) as `time`,
`@modelcontextprotocol/server-everything` (npm) as `everything`, `server-filesystem` (npm) as
`files` over a folder holding `hello.txt`, `server-memory` (npm) as `memory` and
`mcp-server-git` (PyPI) as `git` over the repository the check runs in. For each mode, [auto] (the SDK
probes `server/discover`: the gateway speaks 2026-07-28) and [legacy] (`initialize`:
2025-11-25), against a fresh gateway, on stdio or with --http over Streamable HTTP:
  1. tools/list: every mounted server's tools under its name, sorted, nothing else;
  2. calls forwarded to each server: notes__add_note (structured content), time__convert_time,
     everything__echo, files__read_text_file, memory__create_entities then memory__read_graph,
     git__git_status; a tool error of a mounted server (notes__get_note of no note) comes back
     as it was;
  3. arguments checked by the gateway against the mounted tool's schema, naming the argument;
     an unknown tool is JSON-RPC error -32602;
  4. progress: everything__trigger-long-running-operation reports each step to the client's
     progress callback, through the gateway;
  5. prompts: notes-server's and server-everything's listed under their names;
     notes__summarise_tag got from notes-server through the gateway, its `tag` argument
     completed by notes-server;
  6. questions: everything__trigger-sampling-request and everything__trigger-elicitation-request
     ask server-everything's client, the gateway, which asks its own: this client's sampling and
     elicitation callbacks answer, in 2026-07-28 through input-required results;
  7. cancellation: a 30-second call given up after one second; the next call answered at once;
  8. resources: notes-server's and server-everything's resources and templates listed under
     `scheme://<mount>/...`; a note and server-everything's dynamic text read through the
     gateway; a subscription to server-everything's resource (`resources/subscribe` in
     2025-11-25, a `subscriptions/listen` stream in 2026-07-28) told of the changes it
     simulates (everything__toggle-subscriber-updates, every 5 s), under the URI here.
Then once more in [auto] with `--catalog progressive`: `search_tools` ranks every server's tools
together ("what time is it in Tokyo" finds the time server's first) and `call_tool` forwards.

Prints one line per passed check and ends with "N passed, 0 failed"; on the first failure it
prints the reason, "N passed, 1 failed", and exits 1.
"""

import json
import os
import sys
import warnings

import anyio
from mcp import Client, MCPError
from mcp.types import (INVALID_PARAMS, CreateMessageResult, ElicitResult, PromptReference,
                       TextContent)

from mcp_checks import TIMEOUT, Checks, reported, server_command, serving, stdio_params, text_of

EXPECTED_VERSION = {"auto": "2026-07-28", "legacy": "2025-11-25"}
MOUNTS = ("everything__", "files__", "git__", "memory__", "notes__", "time__")


async def run_suite(c: Checks, client: Client) -> None:
    tools = []
    cursor = None
    while True:
        page = await client.list_tools(cursor=cursor) if cursor else await client.list_tools()
        tools.extend(page.tools)
        cursor = page.next_cursor
        if not cursor:
            break
    names = [t.name for t in tools]
    c.ok(all(n.startswith(MOUNTS) for n in names) and names == sorted(names, key=str.encode),
         f"{len(names)} tools, each under its mount's name, sorted", names)
    for name in ("notes__add_note", "time__get_current_time", "everything__echo",
                 "files__read_text_file", "memory__read_graph", "git__git_status"):
        c.ok(name in names, f"{name} is listed", names)

    added = await client.call_tool("notes__add_note",
                                   {"title": "Through the gateway", "body": "Forwarded.",
                                    "tags": ["gateway"]})
    note = added.structured_content or {}
    c.ok(not added.is_error and note.get("title") == "Through the gateway",
         "notes__add_note forwarded, its structured content back", text_of(added))

    converted = await client.call_tool("time__convert_time", {
        "source_timezone": "UTC", "time": "12:00", "target_timezone": "Asia/Tokyo"})
    said = json.loads(text_of(converted))
    c.ok(said["target"]["datetime"][11:16] == "21:00", "time__convert_time forwarded",
         text_of(converted))

    echoed = await client.call_tool("everything__echo", {"message": "hello"})
    c.ok(text_of(echoed) == "Echo: hello", "everything__echo forwarded", text_of(echoed))

    folders = text_of(await client.call_tool("files__list_allowed_directories", {}))
    folder = next(line.strip() for line in folders.splitlines() if line.strip().startswith("/"))
    read = await client.call_tool("files__read_text_file", {"path": f"{folder}/hello.txt"})
    c.ok(not read.is_error and "hello from the files server" in text_of(read),
         "files__read_text_file forwarded", text_of(read)[:300])

    entity = f"gateway-check-{client.protocol_version}"
    created = await client.call_tool("memory__create_entities", {"entities": [
        {"name": entity, "entityType": "check", "observations": ["passed through the gateway"]}]})
    graph = await client.call_tool("memory__read_graph", {})
    c.ok(not created.is_error and entity in text_of(graph),
         "memory__create_entities and memory__read_graph forwarded", text_of(graph)[:300])

    status = await client.call_tool("git__git_status", {"repo_path": os.getcwd()})
    c.ok(not status.is_error and "branch" in text_of(status).lower(),
         "git__git_status forwarded", text_of(status)[:300])

    missing = await client.call_tool("notes__get_note", {"id": 424242})
    c.ok(missing.is_error and "424242" in text_of(missing),
         "a mounted server's tool error comes back as it was", text_of(missing))

    wrong = await client.call_tool("notes__add_note", {"title": 7, "body": "x"})
    c.ok(wrong.is_error and "argument `title`" in text_of(wrong),
         "the gateway checks arguments against the mounted tool's schema", text_of(wrong))

    try:
        await client.call_tool("nobody__nothing", {})
        c.ok(False, "an unknown tool is refused", "it was answered")
    except MCPError as e:
        c.ok(e.error.code == INVALID_PARAMS, "an unknown tool is JSON-RPC error -32602",
             repr(e.error))

    steps: list[float] = []

    async def progressed(progress: float, total: float | None, message: str | None) -> None:
        steps.append(progress)

    ran = await client.call_tool("everything__trigger-long-running-operation",
                                 {"duration": 1, "steps": 3}, progress_callback=progressed)
    c.ok(not ran.is_error and steps == [1.0, 2.0, 3.0],
         "a mounted server's progress reaches the client", f"{steps} {text_of(ran)[:200]}")

    prompts = [p.name for p in (await client.list_prompts()).prompts]
    c.ok("notes__summarise_tag" in prompts and any(p.startswith("everything__") for p in prompts),
         "mounted servers' prompts listed under their names", prompts)
    got = await client.get_prompt("notes__summarise_tag", {"tag": "gateway"})
    c.ok(got.messages and "tagged `gateway`" in (got.messages[0].content.text or ""),
         "notes__summarise_tag got from notes-server", repr(got.messages[:1])[:300])
    completed = await client.complete(PromptReference(type="ref/prompt", name="notes__summarise_tag"),
                                      {"name": "tag", "value": "gate"})
    c.ok("gateway" in completed.completion.values,
         "notes__summarise_tag's `tag` completed by notes-server", completed.completion.values)

    sampled = await client.call_tool("everything__trigger-sampling-request",
                                     {"prompt": "the weather?"})
    c.ok(not sampled.is_error and SAMPLED in text_of(sampled),
         "a mounted server's sampling request reaches this client's callback",
         text_of(sampled)[:300])
    elicited = await client.call_tool("everything__trigger-elicitation-request", {})
    c.ok(not elicited.is_error and "Ada Lovelace" in text_of(elicited),
         "a mounted server's elicitation request reaches this client's callback",
         text_of(elicited)[:300])

    # A call this client gives up (notifications/cancelled, or its HTTP stream closed) is
    # cancelled through the gateway, which answers the next at once.
    with anyio.move_on_after(1.0) as given_up:
        await client.call_tool("everything__trigger-long-running-operation",
                               {"duration": 30, "steps": 30})
    with anyio.fail_after(5):
        after = await client.call_tool("everything__echo", {"message": "after"})
    c.ok(given_up.cancelled_caught and text_of(after) == "Echo: after",
         "a call given up is cancelled through the gateway, which answers the next at once",
         text_of(after))

    await run_resources(c, client)


DYNAMIC = "demo://everything/resource/dynamic/text/1"


async def run_resources(c: Checks, client: Client) -> None:
    listed = [str(r.uri) for r in (await client.list_resources()).resources]
    c.ok("ui://notes/notes/board.html" in listed
         and any(uri.startswith("demo://everything/resource/static/") for uri in listed),
         "mounted servers' resources listed under `scheme://<mount>/...`",
         [uri for uri in listed if not uri.startswith("demo://")] + listed[:2])
    templates = [t.uri_template for t in (await client.list_resource_templates()).resource_templates]
    c.ok("notes://notes/{id}" in templates
         and "demo://everything/resource/dynamic/text/{resourceId}" in templates,
         "mounted servers' resource templates listed under their mounts", templates)
    note = await client.read_resource("notes://notes/1")
    c.ok(note.contents and str(note.contents[0].uri) == "notes://notes/1"
         and note.contents[0].text.startswith("# "),
         "a note read from notes-server through the gateway", repr(note.contents[:1])[:300])
    text = await client.read_resource(DYNAMIC)
    c.ok(text.contents and str(text.contents[0].uri) == DYNAMIC
         and text.contents[0].text.startswith("Resource 1:"),
         "server-everything's dynamic text read through the gateway", repr(text.contents[:1])[:300])

    # server-everything tells its subscribers of a simulated change every 5 seconds, once asked.
    if client.protocol_version == "2026-07-28":
        async with client.listen(resource_subscriptions=[DYNAMIC]) as subscription:
            await client.call_tool("everything__toggle-subscriber-updates", {})
            with anyio.fail_after(3 * TIMEOUT):
                event = await subscription.__anext__()
            told = getattr(event, "uri", None)
    else:
        # Deprecated as of 2026-07-28, which this client speaks too: here it speaks 2025-11-25.
        warnings.filterwarnings("ignore", message="resources/subscribe is removed")
        await client.subscribe_resource(DYNAMIC)
        await client.call_tool("everything__toggle-subscriber-updates", {})
        with anyio.fail_after(3 * TIMEOUT):
            while not UPDATED:
                await anyio.sleep(0.1)
        told = UPDATED[0]
    c.ok(told == DYNAMIC, "a change of a mounted server's resource is told under its URI here",
         told)
    UPDATED.clear()


# The URIs of the `notifications/resources/updated` the client received (handshake era).
UPDATED: list[str] = []


async def updates(message: object) -> None:
    message = getattr(message, "root", message)
    if getattr(message, "method", None) == "notifications/resources/updated":
        UPDATED.append(str(message.params.uri))


SAMPLED = "sampled-by-the-gateway-check"


async def sampling(context: object, params: object) -> CreateMessageResult:
    return CreateMessageResult(role="assistant", model="gateway-check", stop_reason="endTurn",
                               content=TextContent(type="text", text=SAMPLED))


async def elicitation(context: object, params: object) -> ElicitResult:
    return ElicitResult(action="accept", content={"name": "Ada Lovelace", "check": True})


async def main(command: list[str], transport: str = "stdio") -> int:
    params = stdio_params(command)
    c = Checks()

    async def both_modes() -> None:
        for mode in ("auto", "legacy"):
            c.label = mode if transport == "stdio" else f"{transport} {mode}"
            with anyio.fail_after(10 * TIMEOUT):
                async with (serving(c, transport, command, params) as server,
                            Client(server, mode=mode, read_timeout_seconds=TIMEOUT,
                                   sampling_callback=sampling,
                                   elicitation_callback=elicitation,
                                   message_handler=updates) as client):
                    version = EXPECTED_VERSION[mode]
                    c.ok(client.protocol_version == version, f"negotiated protocol {version}",
                         client.protocol_version)
                    await run_suite(c, client)

        if transport == "stdio":
            c.label = "progressive"
            progressive = [*command, "--catalog", "progressive"]
            with anyio.fail_after(10 * TIMEOUT):
                async with Client(stdio_params(progressive), read_timeout_seconds=TIMEOUT) as client:
                    await run_progressive(c, client)

    return await reported(c, both_modes)


async def run_progressive(c: Checks, client: Client) -> None:
    listed = [t.name for t in (await client.list_tools()).tools]
    c.ok(listed[:2] == ["search_tools", "call_tool"], "the catalog lists its two meta-tools",
         listed)
    found = await client.call_tool("search_tools", {"query": "what time is it in Tokyo"})
    names = [t["name"] for t in (found.structured_content or {}).get("tools", [])]
    c.ok(names[:2] and all(n.startswith("time__") for n in names[:2]),
         "search_tools ranks the mounted servers' tools together, the time server's first",
         names[:5])
    called = await client.call_tool("call_tool", {"name": "time__get_current_time",
                                                  "arguments": {"timezone": "Asia/Tokyo"}})
    said = json.loads(text_of(called))
    c.ok(said.get("timezone") == "Asia/Tokyo", "call_tool forwards to the mounted server",
         text_of(called)[:300])


if __name__ == "__main__":
    argv = sys.argv[1:]
    transport = "stdio"
    if argv[:1] == ["--http"]:
        transport, argv = "http", argv[1:]
    sys.exit(anyio.run(main, server_command(argv, __doc__), transport))
