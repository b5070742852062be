"""Drive notes-server, made an OAuth resource server, with the official Python MCP SDK client and
its client-credentials provider: the client finds the authorization server from the server's 401,
gets a token, and reaches the tools; a tool that needs a scope the token lacks is answered 403,
from which the client asks for the scope and calls again (step-up).

Usage (the authorization server, tests/oauth-server/server.mjs, already running):
    python .ci/oauth_client_check.py --issuer http://127.0.0.1:PORT -- target/debug/notes-server

The script starts `<server> --http 127.0.0.1:<free port> --oauth-issuer ISSUER --oauth-scope
notes:read` itself; notes-tools' writing tools need `notes:write`. The authorization server's
clients: `mcp-basic` may have both scopes, `mcp-readonly` only `notes:read` (secrets: the id
followed by `-secret`).

Checks, for mode="auto" (protocol 2026-07-28) and mode="legacy" (the initialize handshake):
  1. without a token: 401 and `WWW-Authenticate: Bearer resource_metadata="..."`, whose document
     names the server as the resource and the issuer as its authorization server
  2. mcp-basic: connects (the provider follows the 401 to a token), lists the tools (add_note's
     `_meta.securitySchemes` asks for notes:write), calls list_notes, then add_note: a 403
     `insufficient_scope`, a new token with notes:write, and the note
  3. mcp-readonly: list_notes; add_note is refused (the authorization server will not grant
     notes:write), and no note is added
  4. not one Python warning or SDK log record at WARNING or above, but the 403 the step-up answers
Prints "ok ..." / "FAIL ..." per check and "N passed, M failed"; exits 1 on a failure.
"""

from __future__ import annotations

import contextlib
import json
import logging
import socket
import subprocess
import sys
import time
import urllib.error
import urllib.request
import uuid
import warnings
from typing import Any, AsyncIterator

import anyio

TIMEOUT = 30.0
EXPECTED_VERSION = {"auto": "2026-07-28", "legacy": "2025-11-25"}


class Checks:
    def __init__(self) -> None:
        self.passed = 0
        self.failed = 0
        self.label = ""

    def ok(self, cond: bool, what: str, detail: Any = "") -> None:
        n = self.passed + self.failed + 1
        if cond:
            self.passed += 1
            print(f"ok {n:3} [{self.label}] {what}")
        else:
            self.failed += 1
            print(f"FAIL {n:2} [{self.label}] {what}: {str(detail)[:600]}")


class Caught(logging.Handler):
    """Every log record at WARNING or above, and every Python warning."""

    def __init__(self) -> None:
        super().__init__(logging.WARNING)
        self.records: list[str] = []

    def emit(self, record: logging.LogRecord) -> None:
        self.records.append(f"log {record.name} {record.levelname}: {record.getMessage()}")


def free_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return s.getsockname()[1]


@contextlib.contextmanager
def notes_server(command: list[str], issuer: str):
    port = free_port()
    args = [*command, "--http", f"127.0.0.1:{port}", "--oauth-issuer", issuer,
            "--oauth-scope", "notes:read"]
    proc = subprocess.Popen(args, stdin=subprocess.DEVNULL, stdout=subprocess.DEVNULL,
                            stderr=subprocess.PIPE, text=True)
    try:
        deadline = time.monotonic() + 15
        while time.monotonic() < deadline:
            with contextlib.suppress(OSError), socket.create_connection(("127.0.0.1", port), 0.2):
                break
            if proc.poll() is not None:
                raise RuntimeError(f"notes-server exited: {proc.stderr.read()}")
            time.sleep(0.1)
        yield f"http://127.0.0.1:{port}/mcp"
    finally:
        proc.terminate()
        proc.wait(10)


class MemoryStorage:
    """Tokens and client information, kept for one connection."""

    def __init__(self) -> None:
        self.tokens = None
        self.client_info = None

    async def get_tokens(self):
        return self.tokens

    async def set_tokens(self, tokens) -> None:
        self.tokens = tokens

    async def get_client_info(self):
        return self.client_info

    async def set_client_info(self, info) -> None:
        self.client_info = info


@contextlib.asynccontextmanager
async def connect(url: str, issuer: str, client_id: str, mode: str) -> AsyncIterator[tuple[Any, MemoryStorage]]:
    import httpx2
    from mcp import Client
    from mcp.client.auth.extensions.client_credentials import ClientCredentialsOAuthProvider
    from mcp.client.streamable_http import streamable_http_client

    storage = MemoryStorage()
    provider = ClientCredentialsOAuthProvider(
        server_url=url, storage=storage, client_id=client_id, client_secret=f"{client_id}-secret",
        token_endpoint_auth_method="client_secret_basic", scope=None, issuer=issuer,
    )
    async with httpx2.AsyncClient(auth=provider, timeout=TIMEOUT) as http:
        async with Client(streamable_http_client(url, http_client=http), mode=mode,
                          read_timeout_seconds=TIMEOUT) as client:
            yield client, storage


def text_of(result: Any) -> str:
    return "\n".join(getattr(block, "text", "") for block in result.content or [])


def unwrap(e: BaseException) -> BaseException:
    while isinstance(e, BaseExceptionGroup) and len(e.exceptions) == 1:
        e = e.exceptions[0]
    return e


def unauthenticated(c: Checks, url: str, issuer: str) -> None:
    c.label = "no token"
    body = json.dumps({"jsonrpc": "2.0", "id": 1, "method": "initialize", "params": {
        "protocolVersion": "2025-11-25", "capabilities": {},
        "clientInfo": {"name": "oauth-check", "version": "0"}}}).encode()
    request = urllib.request.Request(url, data=body, method="POST", headers={
        "content-type": "application/json", "accept": "application/json, text/event-stream"})
    try:
        urllib.request.urlopen(request, timeout=TIMEOUT)
        c.ok(False, "401 without a token", "the request was answered")
        return
    except urllib.error.HTTPError as e:
        challenge = e.headers.get("www-authenticate", "")
        c.ok(e.code == 401 and 'resource_metadata="' in challenge and 'scope="notes:read"' in challenge,
             "401 with a Bearer challenge naming the metadata and the scope notes:read",
             f"{e.code} {challenge}")
    metadata_url = challenge.split('resource_metadata="', 1)[1].split('"', 1)[0]
    with urllib.request.urlopen(metadata_url, timeout=TIMEOUT) as response:
        document = json.load(response)
    c.ok(document.get("resource") == url and document.get("authorization_servers") == [issuer]
         and set(document.get("scopes_supported", [])) == {"notes:read", "notes:write"},
         f"the metadata at {metadata_url} names the server, its issuer and both scopes", document)


async def one_mode(c: Checks, url: str, issuer: str, mode: str, caught: Caught) -> None:
    c.label = f"mcp-basic {mode}"
    title = f"oauth-check {uuid.uuid4().hex[:8]}"
    before = len(caught.records)
    try:
        async with connect(url, issuer, "mcp-basic", mode) as (client, storage):
            c.ok(client.protocol_version == EXPECTED_VERSION[mode],
                 f"connect through the 401: protocol {EXPECTED_VERSION[mode]}", client.protocol_version)
            c.ok(storage.tokens is not None and storage.tokens.scope == "notes:read",
                 "the first token has the scope the 401 named, notes:read",
                 storage.tokens and storage.tokens.scope)
            tools = {t.name: t for t in (await client.list_tools()).tools}
            meta = (tools.get("add_note").meta or {}) if "add_note" in tools else {}
            c.ok(meta.get("securitySchemes") == [{"type": "oauth2", "scopes": ["notes:write"]}],
                 "add_note's _meta.securitySchemes asks for notes:write", meta)
            listed = await client.call_tool("list_notes", {})
            c.ok(not listed.is_error, "list_notes with notes:read", text_of(listed)[:200])
            added = await client.call_tool("add_note", {"title": title, "body": "via OAuth"})
            c.ok(not added.is_error and title in text_of(added),
                 "add_note after the 403: the client stepped up to notes:write", text_of(added)[:200])
            scopes = (storage.tokens.scope or "").split() if storage.tokens else []
            c.ok("notes:write" in scopes and "notes:read" in scopes,
                 "the new token has notes:write, and kept notes:read", scopes)
            listed = await client.call_tool("list_notes", {})
            c.ok(not listed.is_error, "list_notes still, with the new token", text_of(listed)[:200])
    except Exception as e:  # noqa: BLE001 - reported as a failed check
        e = unwrap(e)
        c.ok(False, "connect, list and call", f"{type(e).__name__}: {e}")
    new = [r for r in caught.records[before:] if "403" not in r and "insufficient_scope" not in r]
    for line in new:
        print(f"  {line}")
    c.ok(not new, "no warning, but the 403 the step-up answers", f"{len(new)} (above)")

    c.label = f"mcp-readonly {mode}"
    title = f"oauth-readonly {uuid.uuid4().hex[:8]}"
    try:
        async with connect(url, issuer, "mcp-readonly", mode) as (client, _):
            listed = await client.call_tool("list_notes", {})
            c.ok(not listed.is_error, "list_notes with notes:read", text_of(listed)[:200])
            refused = None
            try:
                with anyio.fail_after(TIMEOUT):
                    refused = await client.call_tool("add_note", {"title": title, "body": "refused"})
            except Exception as e:  # noqa: BLE001 - the refusal expected
                e = unwrap(e)
                c.ok(True, f"add_note is refused: {type(e).__name__}: {str(e)[:160]}")
            if refused is not None:
                c.ok(False, "add_note is refused", text_of(refused)[:200])
    except Exception as e:  # noqa: BLE001 - the refusal may end the connection
        e = unwrap(e)
        c.ok("403" in str(e) or "scope" in str(e).lower() or "Token" in type(e).__name__,
             f"add_note is refused: {type(e).__name__}: {str(e)[:160]}", repr(e))
    async with connect(url, issuer, "mcp-basic", mode) as (client, _):
        notes = text_of(await client.call_tool("list_notes", {}))
    c.ok(title not in notes, "no note was added by the refused call", notes[:200])


async def main(argv: list[str]) -> int:
    if "--" not in argv or argv[:1] != ["--issuer"] or len(argv) < 4:
        print(__doc__, file=sys.stderr)
        return 2
    issuer, command = argv[1], argv[argv.index("--") + 1:]
    caught = Caught()
    logging.getLogger().addHandler(caught)
    logging.captureWarnings(True)
    warnings.simplefilter("default")
    from importlib.metadata import version

    print(f"mcp {version('mcp')}, python {sys.version.split()[0]}, issuer {issuer}")
    c = Checks()
    with notes_server(command, issuer) as url:
        unauthenticated(c, url, issuer)
        for mode in ("auto", "legacy"):
            await one_mode(c, url, issuer, mode, caught)
    print(f"{c.passed} passed, {c.failed} failed")
    return 1 if c.failed else 0


if __name__ == "__main__":
    sys.exit(anyio.run(main, sys.argv[1:]))
