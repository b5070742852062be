"""Replicas behind a load balancer: deploy/run.sh starts Redis, three notes-server replicas and
HAProxy (round robin, no sticky sessions) on loopback; the official MCP Python SDK client then
speaks the handshake era through HAProxy, each of its requests going to the next replica.

Checks: the session opened on one replica serves tools/list and tools/call on every replica (as
HAProxy's own counters show); the notes added through all three are in the one database; the
session ended (DELETE) is unknown to every replica; Redis restarted under a live session: the
requests meanwhile are refused with 503 and a JSON-RPC error naming them, and the same session
goes on once Redis is back.

    python .ci/replicas_check.py -- target/debug/notes-server
"""

import contextlib
import csv
import io
import os
import shutil
import signal
import socket
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
def deployment(binary: str):
    base = free_base()
    directory = os.path.join(ROOT, "target", "replicas-check")
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
        with deployment(command[0]) as (url, directory, env):
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
                while os.path.exists(f"/proc/{pid}") and time.monotonic() < deadline:
                    with open(f"/proc/{pid}/stat") as f:
                        if f.read().split()[2] == "Z":
                            break
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

    return await reported(c, checks)


if __name__ == "__main__":
    sys.exit(anyio.run(main, server_command(sys.argv[1:], __doc__)))
