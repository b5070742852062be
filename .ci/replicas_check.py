"""Replicas behind a load balancer: deploy/run.sh starts Redis, three notes-server replicas and
HAProxy (round robin, no sticky sessions) on loopback; the official MCP Python SDK client then
speaks the handshake era through HAProxy, each of its requests going to the next replica.

Checks: the session opened on one replica serves tools/list and tools/call on every replica (as
HAProxy's own counters show); the notes added through all three are in the one database; the
session ended (DELETE) is unknown to every replica; Redis restarted under a live session: the
requests meanwhile are refused with 503 and a JSON-RPC error naming them, and the same session
goes on once Redis is back. Tasks (protocol 2026-07-28, raw HTTP) shared in Redis: one polled
through several replicas and cancelled through one that does not run it; one completed by a
note added through HAProxy, its result read back whole from every replica; one whose replica is
killed (SIGKILL), which turns failed within the heartbeat's lifetime. Then 16 clients add notes for 30 seconds while one replica is
killed (SIGKILL) after 10: every client keeps its session, no call hangs (those in flight on the
dead replica end with an error), and every note whose add_note was answered is in the database.

    python .ci/replicas_check.py -- target/debug/notes-server
"""

import contextlib
import csv
import io
import os
import json
import shutil
import signal
import socket
import sqlite3
import subprocess
import sys
import time

import anyio
import httpx2
from mcp import Client, MCPError
from mcp.client.streamable_http import streamable_http_client

from mcp_checks import TIMEOUT, Checks, reported, server_command, text_of

ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))


def free_base() -> int:
    """A port such that it and the next eleven are free on 127.0.0.1."""
    for base in range(28080, 40000, 20):
        try:
            for port in range(base, base + 12):
                with socket.socket() as probe:
                    probe.bind(("127.0.0.1", port))
            return base
        except OSError:
            continue
    raise RuntimeError("no free run of ports")


def haproxy_stats(directory: str) -> dict[str, dict[str, str]]:
    """HAProxy's counters per replica, from its stats socket."""
    with socket.socket(socket.AF_UNIX) as sock:
        sock.connect(os.path.join(directory, "haproxy.sock"))
        sock.sendall(b"show stat\n")
        data = b""
        while chunk := sock.recv(65536):
            data += chunk
    rows = csv.DictReader(io.StringIO(data.decode().lstrip("# ")))
    return {row["svname"]: row for row in rows if row["pxname"] == "replicas"
            and row["svname"].startswith("replica")}


def served(directory: str) -> dict[str, int]:
    return {name: int(row["req_tot"] or 0) for name, row in haproxy_stats(directory).items()}


@contextlib.contextmanager
def deployment(binary: str, name: str):
    base = free_base()
    directory = os.path.join(ROOT, "target", name)
    shutil.rmtree(directory, ignore_errors=True)
    env = dict(os.environ, DEPLOY_PORT=str(base), DEPLOY_DIR=directory,
               NOTES_SERVER=os.path.abspath(binary))
    run = subprocess.Popen([os.path.join(ROOT, "deploy", "run.sh")], env=env,
                           stdout=subprocess.PIPE, text=True)
    try:
        line = run.stdout.readline()
        if not line.startswith("MCP at "):
            raise RuntimeError(f"deploy/run.sh did not start: {line!r}")
        yield f"http://127.0.0.1:{base}/mcp", directory, env
    finally:
        run.send_signal(signal.SIGTERM)
        try:
            run.wait(timeout=TIMEOUT)
        except subprocess.TimeoutExpired:
            run.kill()


def redis_pid(directory: str) -> int:
    with open(os.path.join(directory, "redis.pid")) as f:
        return int(f.read())


def ended(pid: int) -> bool:
    """Whether the process has exited: gone, or a zombie its parent has not reaped yet.

    It may exit between any two looks, so a missing /proc entry is an answer, not an error.
    The state follows the command name, which is in parentheses and may hold spaces.
    """
    try:
        with open(f"/proc/{pid}/stat") as f:
            return f.read().rsplit(")", 1)[1].split()[0] == "Z"
    except (FileNotFoundError, ProcessLookupError):
        return True


async def main(command: list[str]) -> int:
    c = Checks()
    c.label = "replicas"

    restarted: list[subprocess.Popen] = []

    async def checks() -> None:
        try:
            await against(restarted)
        finally:
            for process in restarted:
                process.terminate()
                process.wait(timeout=TIMEOUT)

    async def against(restarted: list[subprocess.Popen]) -> None:
        with deployment(command[0], "replicas-check") as (url, directory, env):
            await resumed_elsewhere(c, int(env["DEPLOY_PORT"]))
            before = served(directory)
            sessions: set[str] = set()

            async def seen(response: httpx2.Response) -> None:
                if sid := response.headers.get("mcp-session-id"):
                    sessions.add(sid)

            async with (httpx2.AsyncClient(timeout=TIMEOUT, event_hooks={"response": [seen]})
                        as http,
                        Client(streamable_http_client(url, http_client=http), mode="legacy",
                               read_timeout_seconds=TIMEOUT) as client):
                c.ok(len(sessions) == 1, "initialize through HAProxy opened one session", sessions)
                tools = (await client.list_tools()).tools
                c.ok(len(tools) >= 10, f"tools/list through HAProxy: {len(tools)} tools")
                ids = []
                for n in range(6):
                    added = await client.call_tool("add_note", {"title": f"replica note {n}",
                                                                "body": "kept"})
                    c.ok(not added.is_error, f"add_note {n} answered", text_of(added)[:200])
                    ids.append((added.structured_content or {}).get("id"))
                listed = await client.call_tool("list_notes", {"limit": 50})
                titles = {note["title"] for note in (listed.structured_content or {}).get("notes", [])}
                c.ok(all(f"replica note {n}" in titles for n in range(6)),
                     "every note added through the three replicas is in the one database",
                     sorted(titles))
                after = served(directory)
                each = {name: after[name] - before.get(name, 0) for name in after}
                c.ok(len(each) == 3 and all(count >= 3 for count in each.values()),
                     f"every replica served the session's requests: {each}", each)

                # Redis restarted under the live session.
                pid = redis_pid(directory)
                os.kill(pid, signal.SIGTERM)
                deadline = time.monotonic() + TIMEOUT
                while not ended(pid) and time.monotonic() < deadline:
                    await anyio.sleep(0.05)
                try:
                    refused = await client.call_tool("list_notes", {"limit": 1})
                    c.ok(False, "a call without Redis is refused", text_of(refused)[:200])
                except MCPError as err:
                    c.ok("session store did not answer" in str(err),
                         "a call while Redis is down fails with the store's error", str(err))
                restarted.append(subprocess.Popen(
                    [os.path.join(ROOT, "deploy", "run.sh"), "redis"], env=env,
                    stdout=subprocess.DEVNULL))
                recovered = None
                deadline = time.monotonic() + 20
                while time.monotonic() < deadline:
                    try:
                        recovered = await client.call_tool("get_note", {"id": ids[0]})
                        break
                    except MCPError:
                        await anyio.sleep(0.25)
                c.ok(recovered is not None and not recovered.is_error,
                     "the same session goes on once Redis is back",
                     text_of(recovered)[:200] if recovered else "no answer in 20 s")
                for n in range(3):
                    again = await client.call_tool("get_note", {"id": ids[n]})
                    c.ok(not again.is_error, f"call {n + 1} after the restart answered",
                         text_of(again)[:200])
            # The client ended its session (DELETE) when it closed; no replica knows it now.
            for session_id in sessions:
                async with httpx2.AsyncClient(timeout=TIMEOUT) as http:
                    for _ in range(3):
                        answer = await http.post(url, json={
                            "jsonrpc": "2.0", "id": 5, "method": "tools/list"}, headers={
                            "accept": "application/json, text/event-stream",
                            "mcp-session-id": session_id,
                            "mcp-protocol-version": "2025-11-25"})
                        c.ok(answer.status_code == 404, "the ended session is unknown to a replica",
                             f"{answer.status_code} {answer.text[:200]}")
            # Last, as it kills a replica.
            await tasks_across_replicas(c, url, directory, int(env["DEPLOY_PORT"]))

        await load_with_a_kill(c, command[0])

    return await reported(c, checks)


def events_of(text: str) -> list[tuple[str | None, dict | None]]:
    """The server-sent events of a body: each one's id and JSON data (None when empty)."""
    events = []
    for block in text.split("\n\n"):
        if not block.strip():
            continue
        fields = dict(line.split(": ", 1) for line in block.splitlines() if ": " in line)
        data = fields.get("data", "").strip()
        events.append((fields.get("id"), json.loads(data) if data else None))
    return events


async def resumed_elsewhere(c: Checks, base: int) -> None:
    """A call's stream cut on one replica and resumed on another: export_notes reports its
    progress in tenths; the client reads the first report on replica 1, disconnects, and GETs
    the rest from replica 3 with the id of the last event it received."""
    one, three = f"http://127.0.0.1:{base + 1}/mcp", f"http://127.0.0.1:{base + 3}/mcp"
    headers = {"accept": "application/json, text/event-stream",
               "mcp-protocol-version": "2025-11-25"}
    async with httpx2.AsyncClient(timeout=TIMEOUT) as http:
        opened = await http.post(one, headers=headers, json={
            "jsonrpc": "2.0", "id": 0, "method": "initialize",
            "params": {"protocolVersion": "2025-11-25", "capabilities": {},
                       "clientInfo": {"name": "resume", "version": "1"}}})
        session = {**headers, "mcp-session-id": opened.headers["mcp-session-id"]}
        for n in range(5):
            await http.post(one, headers=session, json={
                "jsonrpc": "2.0", "id": 10 + n, "method": "tools/call",
                "params": {"name": "add_note",
                           "arguments": {"title": f"exported {n}", "body": "to export"}}})
        received = ""
        async with http.stream("POST", one, headers=session, json={
                "jsonrpc": "2.0", "id": 1, "method": "tools/call",
                "params": {"name": "export_notes", "arguments": {},
                           "_meta": {"progressToken": "export"}}}) as answer:
            async for chunk in answer.aiter_text():
                received += chunk
                if '"progress"' in received and received.endswith("\n\n"):
                    break
        first = events_of(received)
        last_id = first[-1][0]
        c.ok(last_id is not None and first[-1][1]["method"] == "notifications/progress",
             f"replica 1 sent the priming event and a first progress report ({last_id})", first)
        rest = events_of((await http.get(three, headers={**session, "last-event-id": last_id}))
                         .text)
        ids = [event_id for event_id, _ in first + rest]
        progress = [data["params"]["progress"] for _, data in first + rest
                    if data and data.get("method") == "notifications/progress"]
        stream, n = last_id.rsplit("-", 1)
        c.ok([event_id for event_id, _ in rest] ==
             [f"{stream}-{k}" for k in range(int(n) + 1, int(n) + 1 + len(rest))],
             f"replica 3 sent every event after {last_id}, in order ({len(rest)})", ids)
        c.ok(len(set(ids)) == len(ids) and progress == sorted(set(progress)),
             f"each event once: progress {progress}", ids)
        final = rest[-1][1] if rest else None
        c.ok(final is not None and final.get("id") == 1 and "result" in final,
             "the call's answer came last, on replica 3", final)


# How long a replica's heartbeat lasts in the task store: a task whose replica is silent that
# long turns failed.
HEARTBEAT_LIFETIME = 5.0


async def tasks_across_replicas(c: Checks, url: str, directory: str, base: int) -> None:
    """Tasks of protocol 2026-07-28 through HAProxy, each request to the next replica: a
    wait_for_note task polled through several replicas and cancelled through one that does not
    run it; another completed by a note added through HAProxy, its result read back whole from
    every replica; a third whose replica is killed (SIGKILL), which turns failed within the
    heartbeat's lifetime saying why. The replica that runs a task is the one its record in Redis
    names, as each replica says its name at start."""
    meta = {"io.modelcontextprotocol/protocolVersion": "2026-07-28",
            "io.modelcontextprotocol/clientCapabilities": {
                "extensions": {"io.modelcontextprotocol/tasks": {}}},
            "io.modelcontextprotocol/clientInfo": {"name": "replicas-tasks", "version": "1"}}
    names: dict[str, int] = {}
    for n in (1, 2, 3):
        with open(os.path.join(directory, f"replica{n}.log")) as f:
            for line in f:
                if " tasks: in Redis at " in line and "(replica " in line:
                    names[line.rsplit("(replica ", 1)[1].split(")")[0]] = n
    c.ok(len(names) == 3, f"each replica says at start that it keeps tasks in Redis, and its "
         f"name: {names}", names)

    async with httpx2.AsyncClient(timeout=TIMEOUT) as http:
        ids = iter(range(100, 10_000))

        async def request(method: str, params: dict, to: str = url) -> dict:
            name = params.get("name") or params.get("taskId")
            headers = {"accept": "application/json, text/event-stream",
                       "mcp-protocol-version": "2026-07-28", "mcp-method": method,
                       **({"mcp-name": name} if name else {})}
            answer = await http.post(to, headers=headers, json={
                "jsonrpc": "2.0", "id": next(ids), "method": method,
                "params": {**params, "_meta": meta}})
            if answer.headers.get("content-type", "").startswith("text/event-stream"):
                datas = [line[6:] for line in answer.text.splitlines()
                         if line.startswith("data: ") and line[6:].strip()]
                return json.loads(datas[-1])
            return answer.json()

        async def result(method: str, params: dict, to: str = url) -> dict:
            answer = await request(method, params, to)
            if "result" not in answer:
                raise RuntimeError(f"{method}: {json.dumps(answer)[:300]}")
            return answer["result"]

        async def wait_task(text: str) -> str:
            created = await result("tools/call", {"name": "wait_for_note", "arguments": {
                "text": text, "timeout_seconds": 120}})
            c.ok(created.get("resultType") == "task" and created.get("status") == "working",
                 f"wait_for_note for {text!r} became a task", created)
            return created["taskId"]

        def runner(task_id: str) -> int:
            stored = subprocess.run(["redis-cli", "-p", str(base + 10), "GET",
                                     f"toolwright:task:{task_id}"],
                                    capture_output=True, text=True, check=True).stdout
            replica = json.loads(stored)["replica"]
            if replica not in names:
                raise RuntimeError(f"task {task_id} names replica {replica}, none of {names}")
            return names[replica]

        async def until(task_id: str, status: str, limit: float) -> tuple[dict, float]:
            started = time.monotonic()
            got: dict = {}
            while time.monotonic() - started < limit:
                got = await result("tasks/get", {"taskId": task_id})
                if got.get("status") == status:
                    return got, time.monotonic() - started
                await anyio.sleep(0.1)
            raise RuntimeError(f"task {task_id} not {status} within {limit} s: {got}")

        # Polled through the replicas in turn, cancelled through one that does not run it.
        task_id = await wait_task("never-written-title")
        running = runner(task_id)
        before = served(directory)
        statuses = [(await result("tasks/get", {"taskId": task_id}))["status"] for _ in range(6)]
        after = served(directory)
        answering = sorted(name for name in after if after[name] > before.get(name, 0))
        c.ok(statuses == ["working"] * 6 and len(answering) >= 2,
             f"six tasks/get through HAProxy, answered by {', '.join(answering)}: working "
             f"(replica{running} runs it)", statuses)
        other = 1 if running != 1 else 2
        ack = await result("tasks/cancel", {"taskId": task_id},
                           f"http://127.0.0.1:{base + other}/mcp")
        c.ok(ack.get("resultType") == "complete",
             f"tasks/cancel through replica{other} acknowledged", ack)
        seen = [(await result("tasks/get", {"taskId": task_id}))["status"] for _ in range(3)]
        c.ok(seen == ["cancelled"] * 3, "the task is cancelled, as every replica says", seen)

        # Completed by a note added through HAProxy; its result read back whole.
        title = f"replica task note {os.getpid()}"
        task_id = await wait_task(title)
        await anyio.sleep(0.5)
        added = await result("tools/call", {"name": "add_note", "arguments": {
            "title": title, "body": "what the task waited for", "tags": ["tasks"]}})
        note = added.get("structuredContent") or {}
        c.ok(note.get("title") == title, f"add_note through HAProxy: note {note.get('id')}", added)
        done, took = await until(task_id, "completed", 10)
        waited = done.get("result") or {}
        c.ok(waited.get("structuredContent") == note,
             f"the task completed in {took:.1f} s with the note it waited for, whole",
             json.dumps(done)[:500])
        c.ok(title in json.dumps(waited.get("content")),
             "the result's text names the note", waited.get("content"))
        reads = [(await result("tasks/get", {"taskId": task_id},
                               f"http://127.0.0.1:{base + n}/mcp")).get("result")
                 for n in (1, 2, 3)]
        c.ok(all(read == waited for read in reads),
             "every replica reads back the same result, whole", reads)

        # The replica that runs a task killed: the task fails, saying why, within the heartbeat's
        # lifetime.
        task_id = await wait_task("another-never-written-title")
        running = runner(task_id)
        with open(os.path.join(directory, f"replica{running}.pid")) as f:
            os.kill(int(f.read()), signal.SIGKILL)
        failed, took = await until(task_id, "failed", HEARTBEAT_LIFETIME + 10)
        error = failed.get("error") or {}
        c.ok(error.get("code") == -32603
             and "the replica that ran it stopped" in error.get("message", ""),
             f"the task of the killed replica{running} failed: {error.get('message')}", failed)
        c.ok(took <= HEARTBEAT_LIFETIME + 1.5,
             f"{took:.1f} s after the kill (the heartbeat lasts {HEARTBEAT_LIFETIME:.0f} s)", took)
        again = await result("tasks/get", {"taskId": task_id})
        c.ok(again.get("status") == "failed" and again.get("error") == error,
             "and stays failed", again)


async def load_with_a_kill(c: Checks, binary: str) -> None:
    clients, duration, kill_at, call_limit = 16, 30.0, 10.0, 20.0
    with deployment(binary, "replicas-load") as (url, directory, _):
        answered: list[str] = []
        failed: list[tuple[str, str]] = []
        hung: list[str] = []
        lost: list[str] = []
        after_kill = [0] * clients
        started = time.monotonic()
        killed_at: list[float] = []

        headers = {"accept": "application/json, text/event-stream",
                   "mcp-protocol-version": "2025-11-25"}

        def response_of(answer: httpx2.Response) -> dict:
            """The JSON-RPC response of an answer, JSON or the last event of a stream."""
            if answer.headers.get("content-type", "").startswith("text/event-stream"):
                datas = [line[6:] for line in answer.text.splitlines()
                         if line.startswith("data: ") and line[6:].strip()]
                return json.loads(datas[-1]) if datas else {}
            return answer.json()

        async def worker(k: int) -> None:
            # A plain HTTP client that keeps its session id whatever happens: the SDK's client
            # ends its whole connection on a transport error of one request.
            async with httpx2.AsyncClient(timeout=TIMEOUT) as http:
                opened = await http.post(url, headers=headers, json={
                    "jsonrpc": "2.0", "id": 0, "method": "initialize",
                    "params": {"protocolVersion": "2025-11-25", "capabilities": {},
                               "clientInfo": {"name": f"load-{k}", "version": "1"}}})
                session = {**headers, "mcp-session-id": opened.headers["mcp-session-id"]}
                await http.post(url, headers=session,
                                json={"jsonrpc": "2.0", "method": "notifications/initialized"})
                n = 0
                while time.monotonic() - started < duration:
                    n += 1
                    title = f"load {k}-{n}"
                    try:
                        with anyio.fail_after(call_limit):
                            answer = await http.post(url, headers=session, json={
                                "jsonrpc": "2.0", "id": n, "method": "tools/call",
                                "params": {"name": "add_note",
                                           "arguments": {"title": title, "body": "load"}}})
                    except TimeoutError:
                        hung.append(title)
                        continue
                    except httpx2.TransportError as err:
                        failed.append((title, f"{type(err).__name__}: {err}"))
                        continue
                    if answer.status_code == 404:
                        lost.append(title)
                        continue
                    if answer.status_code != 200:
                        failed.append((title, f"{answer.status_code} {answer.text[:100]}"))
                        continue
                    result = response_of(answer).get("result") or {}
                    if result.get("isError") or "structuredContent" not in result:
                        failed.append((title, json.dumps(result)[:200]))
                        continue
                    answered.append(title)
                    # Two seconds after the kill the balancer has taken the replica out.
                    if killed_at and time.monotonic() > killed_at[0] + 2:
                        after_kill[k] += 1

        async with anyio.create_task_group() as tg:
            for k in range(clients):
                tg.start_soon(worker, k)
            await anyio.sleep(kill_at)
            with open(os.path.join(directory, "replica2.pid")) as f:
                os.kill(int(f.read()), signal.SIGKILL)
            killed_at.append(time.monotonic())
        c.ok(not hung, f"no call hung longer than {call_limit:.0f} s", hung[:5])
        c.ok(not lost, "every client kept its session through the kill (no 404)", lost[:3])
        c.ok(all(count > 0 for count in after_kill),
             f"every client's calls were answered after the kill: {after_kill}", after_kill)
        kinds = sorted({err.split(":")[0][:60] for _, err in failed})
        c.ok(len(failed) <= clients,
             f"{len(answered)} notes added, {len(failed)} calls ended with an error "
             f"(those in flight on the killed replica: {', '.join(kinds) or 'none'})", failed[:5])
        with sqlite3.connect(os.path.join(directory, "notes.db")) as db:
            stored = {title for (title,) in db.execute("SELECT title FROM notes")}
        missing = [title for title in answered if title not in stored]
        c.ok(not missing, f"every answered add_note is in the database ({len(answered)})",
             missing[:5])


if __name__ == "__main__":
    sys.exit(anyio.run(main, server_command(sys.argv[1:], __doc__)))
