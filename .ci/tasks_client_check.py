"""Drive notes-server's tasks (protocol 2025-11-25) with the official MCP Python SDK client.

Install (a venv of its own: mcp 1.x, the last with these tasks; the other scripts use 2.x):
    python3 -m venv target/tasks-venv
    target/tasks-venv/bin/pip install --quiet --disable-pip-version-check -r .ci/requirements-tasks.txt

Usage:
    target/tasks-venv/bin/python .ci/tasks_client_check.py [--transports stdio,http] \
        -- target/debug/notes-server

For each transport, against a fresh server (over stdio the SDK spawns <server command>; over
HTTP the script starts `<server command> --http 127.0.0.1:<free port>` and connects to its /mcp
with `streamable_http_client`), a `ClientSession` runs `initialize`, which must land on
2025-11-25 with `capabilities.tasks` declaring `requests.tools.call`, `list` and `cancel`, and
`tools/list` must show `execution.taskSupport: "optional"` on `wait_for_note` and
`export_notes`. Then, through `session.experimental` (the SDK's task API):

  1. `call_tool_as_task("wait_for_note", {text})`: a CreateTaskResult, `working`, with the ttl
     asked for and a pollInterval; `poll_task` until the statusMessage says it is waiting
     ("waiting for a note titled like ...: N s so far") while `working`; a plain
     `call_tool("add_note")` adds the matching note; `poll_task` ends on `completed`;
     `get_task_result(..., CallToolResult)` is the note as structuredContent, with
     `_meta["io.modelcontextprotocol/related-task"] == {"taskId": ...}`;
  2. a second `wait_for_note` task: `cancel_task` answers `cancelled`; a note that matches it
     afterwards leaves it `cancelled`; a second `cancel_task` raises McpError -32602;
  3. `call_tool_as_task("export_notes", {"format": "markdown"})`: `poll_task` ends on
     `completed` with the statusMessage "exported N of N notes", and the result's text holds the
     first note's title;
  4. `list_tasks()` holds exactly those three tasks: completed, cancelled, completed.

Prints one line per passed check and ends with "N passed, 0 failed"; on the first failure it
prints the reason, ends with "N passed, 1 failed" and exits 1.

mcp 1.x marks `session.experimental` deprecated (tasks left the core specification in
2026-07-28, for an extension); that one DeprecationWarning is silenced, any other is shown.
"""

import os
import re
import sys
import warnings
from collections.abc import Callable

import anyio
from mcp import ClientSession
from mcp.client.stdio import stdio_client
from mcp.client.streamable_http import streamable_http_client
from mcp.shared.exceptions import McpError
from mcp.types import INVALID_PARAMS, CallToolResult, GetTaskResult

from mcp_checks import (TIMEOUT, CheckFailed, Checks, reported, server_command, serving,
                        stdio_params, text_of)

warnings.filterwarnings("ignore", message="The experimental tasks API is deprecated",
                        category=DeprecationWarning)

PROTOCOL = "2025-11-25"
TTL_MS = 60_000
RELATED_TASK = "io.modelcontextprotocol/related-task"
TRANSPORTS = ("stdio", "http")


async def connected(c: Checks, server, run: Callable) -> None:
    """`run(session)` on a session to `server`: stdio parameters or a Streamable HTTP URL."""
    if isinstance(server, str):
        async with (streamable_http_client(server) as (read, write, _),
                    ClientSession(read, write) as session):
            await run(c, session)
    else:
        async with stdio_client(server) as (read, write), ClientSession(read, write) as session:
            await run(c, session)


async def run_tasks(c: Checks, session: ClientSession) -> None:
    init = await session.initialize()
    c.ok(init.protocolVersion == PROTOCOL, f"negotiated protocol {PROTOCOL}", init.protocolVersion)
    tasks = init.capabilities.tasks
    c.ok(tasks is not None and tasks.requests is not None and tasks.requests.tools is not None
         and tasks.requests.tools.call is not None and tasks.list is not None
         and tasks.cancel is not None,
         "capabilities.tasks: requests.tools.call, list and cancel", tasks)
    tools = {t.name: t for t in (await session.list_tools()).tools}
    for name in ("wait_for_note", "export_notes"):
        execution = tools[name].execution if name in tools else None
        c.ok(execution is not None and execution.taskSupport == "optional",
             f"{name}: execution.taskSupport is optional", execution)
    x = session.experimental

    async def start(name: str, arguments: dict) -> str:
        created = await x.call_tool_as_task(name, arguments, ttl=TTL_MS)
        task = created.task
        c.ok(task.status == "working" and task.ttl == TTL_MS and task.pollInterval is not None
             and bool(task.taskId),
             f"{name} as a task: CreateTaskResult, working, ttl {TTL_MS}, pollInterval", task)
        return task.taskId

    async def polled(task_id: str, until: Callable[[GetTaskResult], bool]) -> GetTaskResult:
        """`poll_task` (at the server's pollInterval) until `until` holds or the task ends."""
        last = None
        with anyio.fail_after(TIMEOUT):
            async for last in x.poll_task(task_id):
                if until(last):
                    break
        if last is None:
            raise CheckFailed(f"[{c.label}] poll_task({task_id}) yielded nothing")
        return last

    async def add_note(title: str) -> dict:
        added = await session.call_tool("add_note", {"title": title, "body": "Decisions taken."})
        c.ok(not added.isError and (added.structuredContent or {}).get("title") == title,
             f"add_note {title!r} (a plain call)", text_of(added)[:300])
        return added.structuredContent

    # Unique to this run and transport, so that no note of another can end a wait.
    word = f"py{os.getpid()}{c.label.split()[-1]}"

    # 1. A task that waits on a person, ended by a note.
    waiting = await start("wait_for_note", {"text": word, "timeout_seconds": 60})
    status = await polled(waiting, lambda t: "so far" in (t.statusMessage or ""))
    expected = f'waiting for a note titled like "{word}": '
    c.ok(status.status == "working" and (status.statusMessage or "").startswith(expected),
         f'poll_task: working, statusMessage "{expected}N s so far"',
         (status.status, status.statusMessage))
    title = f"Minutes of {word}"
    note = await add_note(title)
    done = await polled(waiting, lambda t: False)
    c.ok(done.status == "completed", "poll_task ends on completed once the note is added",
         (done.status, done.statusMessage))
    result = await x.get_task_result(waiting, CallToolResult)
    c.ok(not result.isError and result.structuredContent == note,
         "get_task_result: the note, as structuredContent", (result.structuredContent, note))
    related = (result.meta or {}).get(RELATED_TASK)
    c.ok(related == {"taskId": waiting},
         f'get_task_result: _meta["{RELATED_TASK}"] names the task', result.meta)

    # 2. A task cancelled while it waits.
    other = f"{word}-cancelled"
    cancelled = await start("wait_for_note", {"text": other, "timeout_seconds": 60})
    reply = await x.cancel_task(cancelled)
    c.ok(reply.taskId == cancelled and reply.status == "cancelled",
         "cancel_task: the task is cancelled", reply)
    await add_note(f"Late {other}")
    await anyio.sleep(0.6)
    after = await x.get_task(cancelled)
    c.ok(after.status == "cancelled",
         "get_task: still cancelled after a note it waited for is added",
         (after.status, after.statusMessage))
    try:
        again = await x.cancel_task(cancelled)
    except McpError as e:
        c.ok(e.error.code == INVALID_PARAMS, "a second cancel_task: McpError -32602",
             f"code {e.error.code}: {e.error.message}")
    else:
        c.ok(False, "a second cancel_task: McpError -32602", f"answered {again}")

    # 3. The export, as a task.
    export = await start("export_notes", {"format": "markdown"})
    exported = await polled(export, lambda t: False)
    c.ok(exported.status == "completed"
         and re.fullmatch(r"exported (\d+) of \1 notes", exported.statusMessage or "") is not None,
         'export_notes: poll_task ends on completed, statusMessage "exported N of N notes"',
         (exported.status, exported.statusMessage))
    document = await x.get_task_result(export, CallToolResult)
    c.ok(not document.isError and f"# {title}" in text_of(document),
         "export_notes: get_task_result's text holds the note's title", text_of(document)[:300])

    # 4. The session's tasks.
    listed = await x.list_tasks()
    seen = sorted((t.taskId, t.status) for t in listed.tasks)
    c.ok(seen == sorted([(waiting, "completed"), (cancelled, "cancelled"), (export, "completed")])
         and listed.nextCursor is None,
         "list_tasks: the three tasks, completed, cancelled, completed", listed)


async def main(command: list[str], transports: list[str]) -> int:
    c = Checks()

    async def each_transport() -> None:
        for transport in transports:
            c.label = f"mcp 1.30 {transport}"
            with anyio.fail_after(10 * TIMEOUT):
                async with serving(c, transport, command, stdio_params(command)) as server:
                    await connected(c, server, run_tasks)

    return await reported(c, each_transport)


if __name__ == "__main__":
    argv = sys.argv[1:]
    transports = list(TRANSPORTS)
    if argv[:1] == ["--transports"]:
        transports, argv = argv[1].split(","), argv[2:]
        unknown = set(transports) - set(TRANSPORTS)
        if unknown:
            sys.exit(f"unknown transports {sorted(unknown)}; expected some of {list(TRANSPORTS)}")
    sys.exit(anyio.run(main, server_command(argv, __doc__), transports))
