"""Sampling and elicitation through the official MCP Python SDK client and the FastMCP client,
against the conformance fixture server, in both protocol eras.

Install (a venv of its own; .ci/requirements.txt is the other scripts'):
    python3 -m venv target/mrtr-venv
    target/mrtr-venv/bin/pip install --quiet --disable-pip-version-check -r .ci/requirements-mrtr.txt

Usage:
    target/mrtr-venv/bin/python .ci/mrtr_client_check.py [--clients mcp,fastmcp] \
        [--transports stdio,http] [--modes auto,legacy] [--wire] -- target/debug/conformance-server

For every client x transport x mode (the defaults: all of the above), against a fresh server
(over stdio the client spawns <server command>; over HTTP the script starts
`<server command> --http 127.0.0.1:<free port>` and connects to its /mcp):

  connect     mode="auto" probes `server/discover` and must land on 2026-07-28 (the fixture
              speaks both eras); mode="legacy" runs `initialize` and must land on 2025-11-25;
              mode="2026-07-28" (a pin) adopts that version without a probe;
  sampling    tools/call test_sampling {prompt}, with a sampling handler installed that answers
              SAMPLED: the tool's text must carry SAMPLED and the handler must have run once;
  elicitation tools/call test_elicitation {message}, with an elicitation handler that accepts
              with ELICITED in every string field of the requested form: the text must carry
              ELICITED and the handler must have run once;
  wire        how the question travelled. In 2025-11-25: a `sampling/createMessage` /
              `elicitation/create` request from the server, answered by the client. In
              2026-07-28 (SEP-2322 multi round-trip): the first tools/call answered with
              {"resultType": "input_required", "inputRequests": {KEY: {"method":
              "sampling/createMessage" | "elicitation/create", "params": {...}}},
              "requestState": STATE?}, then the client's retry — a new tools/call, fresh id, same
              name and arguments, plus "inputResponses": {KEY: <CreateMessageResult | ElicitResult>}
              and "requestState": STATE echoed byte for byte — answered with the tool's result;
              no JSON-RPC request from server to client at all.

Also printed and failed on: any Python warning (warnings module) or log record at WARNING or
above from mcp / fastmcp / httpx while connected.

Prints one line per check ("ok N [label] name" / "FAIL N [label] name: reason") and ends with
"N passed, M failed"; exits 1 when any check failed. --wire prints every JSON-RPC message
(> sent by the client, < received).
"""

from __future__ import annotations

import contextlib
import json
import logging
import os
import signal
import socket
import subprocess
import sys
import time
import warnings
from collections.abc import AsyncIterator, Callable
from typing import Any

import anyio

SAMPLED = "sampled-by-mrtr-check"
ELICITED = "elicited-by-mrtr-check"
TIMEOUT = 30.0  # seconds per request
MODERN = "2026-07-28"
HANDSHAKE = "2025-11-25"
EXPECTED_VERSION = {"auto": MODERN, "legacy": HANDSHAKE, MODERN: MODERN}
USAGE = __doc__


# ---- checks and what they print ---------------------------------------------------------------


class Checks:
    def __init__(self) -> None:
        self.passed = 0
        self.failed = 0
        self.label = ""

    def record(self, ok: bool, name: str, detail: str = "") -> bool:
        n = self.passed + self.failed + 1
        if ok:
            self.passed += 1
            print(f"ok {n:3} [{self.label}] {name}" + (f" ({detail})" if detail else ""))
        else:
            self.failed += 1
            print(f"FAIL {n:2} [{self.label}] {name}: {detail}")
        return ok


def unwrap(e: BaseException) -> BaseException:
    while isinstance(e, BaseExceptionGroup) and len(e.exceptions) == 1:
        e = e.exceptions[0]  # the SDKs' task groups wrap whatever escapes `async with`
    return e


def short(value: Any, limit: int = 500) -> str:
    text = value if isinstance(value, str) else json.dumps(value, default=str)
    return text if len(text) <= limit else text[:limit] + "..."


# ---- a tap on every JSON-RPC message the client sends and receives ----------------------------
# Both clients drive their sessions through mcp's JSONRPCDispatcher over a SessionMessage stream
# pair; wrapping the pair shows the wire on stdio and HTTP alike.


class Wire:
    def __init__(self) -> None:
        self.messages: list[tuple[str, dict[str, Any]]] = []  # ("<" | ">", message)
        self.echo = False

    def add(self, direction: str, item: Any) -> None:
        message = getattr(item, "message", None)
        if message is None:
            return
        message = getattr(message, "root", message)
        if hasattr(message, "model_dump"):
            data = message.model_dump(by_alias=True, exclude_none=True, mode="json")
        else:
            data = dict(message) if isinstance(message, dict) else {"repr": repr(message)}
        self.messages.append((direction, data))
        if self.echo:
            print(f"  wire {direction} {short(data, 1500)}")


WIRE = Wire()


class _TapWrite:
    def __init__(self, inner: Any) -> None:
        self._inner = inner

    async def send(self, item: Any) -> None:
        WIRE.add(">", item)
        await self._inner.send(item)

    async def __aenter__(self) -> _TapWrite:
        await self._inner.__aenter__()
        return self

    async def __aexit__(self, *exc: Any) -> Any:
        return await self._inner.__aexit__(*exc)

    def __getattr__(self, name: str) -> Any:
        return getattr(self._inner, name)


class _TapRead:
    def __init__(self, inner: Any) -> None:
        self._inner = inner

    async def receive(self) -> Any:
        item = await self._inner.receive()
        WIRE.add("<", item)
        return item

    def __aiter__(self) -> _TapRead:
        return self

    async def __anext__(self) -> Any:
        try:
            return await self.receive()
        except (anyio.EndOfStream, anyio.ClosedResourceError):
            raise StopAsyncIteration from None

    async def __aenter__(self) -> _TapRead:
        await self._inner.__aenter__()
        return self

    async def __aexit__(self, *exc: Any) -> Any:
        return await self._inner.__aexit__(*exc)

    def __getattr__(self, name: str) -> Any:
        return getattr(self._inner, name)


def install_tap() -> None:
    from mcp.shared.jsonrpc_dispatcher import JSONRPCDispatcher

    original = JSONRPCDispatcher.__init__

    def tapped(self: Any, read_stream: Any, write_stream: Any, *args: Any, **kwargs: Any) -> None:
        original(self, _TapRead(read_stream), _TapWrite(write_stream), *args, **kwargs)

    JSONRPCDispatcher.__init__ = tapped  # type: ignore[method-assign]


# ---- warnings and log records ------------------------------------------------------------------

CAUGHT: list[str] = []


class _Catch(logging.Handler):
    def emit(self, record: logging.LogRecord) -> None:
        CAUGHT.append(f"log {record.name} {record.levelname}: {record.getMessage()}")


def install_catchers() -> None:
    warnings.simplefilter("always")
    warnings.showwarning = lambda message, category, filename, lineno, file=None, line=None: CAUGHT.append(
        f"warning {category.__name__}: {message} ({os.path.basename(filename)}:{lineno})"
    )
    handler = _Catch(level=logging.WARNING)
    for name in ("mcp", "fastmcp", "httpx", "httpx2", "httpcore2", "mcp_types"):
        logger = logging.getLogger(name)
        logger.addHandler(handler)
        logger.setLevel(logging.WARNING)
        logger.propagate = False


# ---- the server --------------------------------------------------------------------------------


def free_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return s.getsockname()[1]


@contextlib.asynccontextmanager
async def http_server(command: list[str]) -> AsyncIterator[str]:
    port = free_port()
    proc = subprocess.Popen([*command, "--http", f"127.0.0.1:{port}"], stdin=subprocess.DEVNULL,
                            stdout=subprocess.DEVNULL, stderr=subprocess.PIPE)
    try:
        deadline = time.monotonic() + 15
        while True:
            if proc.poll() is not None:
                raise RuntimeError(f"server exited with {proc.returncode}: {proc.stderr.read()[-500:]!r}")
            with contextlib.suppress(OSError), socket.create_connection(("127.0.0.1", port), timeout=0.2):
                break
            if time.monotonic() > deadline:
                raise RuntimeError(f"server not listening on {port} after 15 s")
            await anyio.sleep(0.05)
        yield f"http://127.0.0.1:{port}/mcp"
    finally:
        if proc.poll() is None:
            proc.send_signal(signal.SIGTERM)
        try:
            proc.wait(timeout=10)
        except subprocess.TimeoutExpired:
            proc.kill()
            proc.wait()
        proc.stderr.close()


# ---- the two clients ---------------------------------------------------------------------------


class Calls:
    """How often each handler ran."""

    def __init__(self) -> None:
        self.sampling = 0
        self.elicitation = 0


def form_answer(schema: dict[str, Any] | None) -> dict[str, Any]:
    props = (schema or {}).get("properties", {})
    return {name: ELICITED for name, prop in props.items() if prop.get("type") == "string"}


@contextlib.asynccontextmanager
async def mcp_client(target: Any, mode: str, calls: Calls) -> AsyncIterator[Any]:
    """The official SDK's `mcp.Client`: callbacks take (context, params) and return the result."""
    from mcp import Client
    from mcp.types import CreateMessageResult, ElicitResult, TextContent

    async def sampling(context: Any, params: Any) -> Any:
        calls.sampling += 1
        return CreateMessageResult(role="assistant", model="mrtr-check", stop_reason="endTurn",
                                   content=TextContent(type="text", text=SAMPLED))

    async def elicitation(context: Any, params: Any) -> Any:
        calls.elicitation += 1
        return ElicitResult(action="accept", content=form_answer(getattr(params, "requested_schema", None)))

    async with Client(target, mode=mode, read_timeout_seconds=TIMEOUT, sampling_callback=sampling,
                      elicitation_callback=elicitation) as client:
        yield client


@contextlib.asynccontextmanager
async def fastmcp_client(target: Any, mode: str, calls: Calls) -> AsyncIterator[Any]:
    """`fastmcp.Client`: handlers take (messages, params, context) / (message, type, params,
    context) and may return plain values (a str; a dict, taken as accept)."""
    from fastmcp import Client

    async def sampling(messages: Any, params: Any, context: Any) -> str:
        calls.sampling += 1
        return SAMPLED

    async def elicitation(message: str, response_type: Any, params: Any, context: Any) -> dict[str, Any]:
        calls.elicitation += 1
        return form_answer(getattr(params, "requested_schema", None))

    async with Client(target, mode=mode, timeout=TIMEOUT, sampling_handler=sampling,
                      elicitation_handler=elicitation) as client:
        yield client


def stdio_target(kind: str, command: list[str]) -> Any:
    env = dict(os.environ)  # RUST_LOG and the like reach the server
    if kind == "mcp":
        from mcp import StdioServerParameters

        return StdioServerParameters(command=command[0], args=command[1:], env=env)
    from fastmcp.client.transports import StdioTransport

    return StdioTransport(command=command[0], args=command[1:], env=env, keep_alive=False)


async def call_tool(kind: str, client: Any, name: str, args: dict[str, Any]) -> Any:
    if kind == "mcp":
        return await client.call_tool(name, args)
    return await client.call_tool_mcp(name, args)  # the raw CallToolResult; no raise on isError


def text_of(result: Any) -> str:
    return "\n".join(getattr(c, "text", "") for c in getattr(result, "content", []) or [])


# ---- reading the wire --------------------------------------------------------------------------


def exchange_for(tool: str, start: int) -> list[tuple[str, dict[str, Any]]]:
    """The tools/call requests for `tool` since message `start`, each with its response, and any
    server-to-client request in between."""
    msgs = WIRE.messages[start:]
    ids = {m.get("id") for d, m in msgs if d == ">" and m.get("method") == "tools/call"
           and m.get("params", {}).get("name") == tool}
    out = []
    for d, m in msgs:
        if m.get("id") in ids or (d == "<" and m.get("method") in ("sampling/createMessage", "elicitation/create")):
            out.append((d, m))
        elif d == ">" and "method" not in m and "id" in m:  # the client's answer to a server request
            out.append((d, m))
    return out


def check_wire(c: Checks, era: str, tool: str, method: str, start: int) -> None:
    exch = exchange_for(tool, start)
    calls = [m for d, m in exch if d == ">" and m.get("method") == "tools/call"]
    results = {m.get("id"): m for d, m in exch if d == "<" and "method" not in m}
    server_requests = [m for d, m in exch if d == "<" and m.get("method") == method]
    shown = " | ".join(f"{d} {short(m, 300)}" for d, m in exch)
    if era == HANDSHAKE:
        answered = [m for d, m in exch if d == ">" and "result" in m and "method" not in m]
        c.record(len(calls) == 1 and len(server_requests) == 1 and len(answered) == 1,
                 f"wire: one {method} request from the server, answered", shown)
        return
    first = results.get(calls[0].get("id"), {}).get("result", {}) if calls else {}
    ok = (len(calls) == 2 and not server_requests and first.get("resultType") == "input_required")
    if not ok:
        shown = (f"{len(calls)} tools/call sent, {len(server_requests)} {method} requests from the "
                 f"server; the first answered with resultType={first.get('resultType')!r}"
                 f"{' and isError' if first.get('isError') else ''}, not 'input_required'")
    else:
        keys = set((first.get("inputRequests") or {}).keys())
        methods = {r.get("method") for r in (first.get("inputRequests") or {}).values()}
        retry = calls[1].get("params", {})
        ok = (methods == {method} and set((retry.get("inputResponses") or {}).keys()) == keys
              and retry.get("requestState") == first.get("requestState")
              and retry.get("arguments") == calls[0].get("params", {}).get("arguments")
              and calls[1].get("id") != calls[0].get("id"))
    c.record(ok, f"wire: input_required with {method}, retried with inputResponses + requestState",
             shown)


# ---- one connection ----------------------------------------------------------------------------


async def one_connection(c: Checks, kind: str, transport: str, mode: str, command: list[str]) -> None:
    c.label = f"{kind} {transport} {mode}"
    calls = Calls()
    connect = mcp_client if kind == "mcp" else fastmcp_client
    start = len(WIRE.messages)
    caught_before = len(CAUGHT)
    async with contextlib.AsyncExitStack() as stack:
        if transport == "stdio":
            target = stdio_target(kind, command)
        else:
            target = await stack.enter_async_context(http_server(command))
        try:
            # No timeout scope around the connect alone: the client's task group must not outlive
            # a cancel scope it was entered in (the read timeout bounds every request anyway).
            client = await stack.enter_async_context(connect(target, mode, calls))
        except Exception as e:
            c.record(False, "connect", f"{type(unwrap(e)).__name__}: {unwrap(e)}")
            return
        version = client.protocol_version
        era = EXPECTED_VERSION[mode]
        c.record(version == era, f"connect: protocol {era}", f"got {version}")

        for tool, args, method, counter, marker in (
            ("test_sampling", {"prompt": "Say hi"}, "sampling/createMessage", "sampling", SAMPLED),
            ("test_elicitation", {"message": "Your name?"}, "elicitation/create", "elicitation", ELICITED),
        ):
            mark = len(WIRE.messages)
            before = getattr(calls, counter)
            try:
                with anyio.fail_after(3 * TIMEOUT):
                    result = await call_tool(kind, client, tool, args)
            except Exception as e:
                e = unwrap(e)
                c.record(False, f"tools/call {tool}", f"{type(e).__name__}: {short(str(e))}")
            else:
                text = text_of(result)
                ran = getattr(calls, counter) - before
                c.record(not result.is_error and marker in text and ran == 1,
                         f"tools/call {tool}: the {counter} handler's answer in the result",
                         short(text, 120) if marker in text
                         else f"handler ran {ran} times; isError={result.is_error}; text: {short(text, 400)}")
            check_wire(c, version, tool, method, mark)
    new = CAUGHT[caught_before:]
    for line in new:
        print(f"  {line}")
    c.record(not new, "no Python warning or SDK log record at WARNING or above", f"{len(new)} (above)")


async def main(argv: list[str]) -> int:
    opts = {"clients": "mcp,fastmcp", "transports": "stdio,http", "modes": "auto,legacy"}
    if "--" not in argv:
        print(USAGE, file=sys.stderr)
        return 2
    sep = argv.index("--")
    flags, command = argv[:sep], argv[sep + 1:]
    i = 0
    while i < len(flags):
        key = flags[i].removeprefix("--")
        if key == "wire":
            WIRE.echo = True
            i += 1
            continue
        if key not in opts or i + 1 >= len(flags):
            print(USAGE, file=sys.stderr)
            return 2
        opts[key] = flags[i + 1]
        i += 2
    if not command:
        print(USAGE, file=sys.stderr)
        return 2
    install_tap()
    install_catchers()
    import fastmcp
    import mcp  # noqa: F401
    from importlib.metadata import version

    print(f"mcp {version('mcp')}, fastmcp {fastmcp.__version__}, python {sys.version.split()[0]}")
    c = Checks()
    for kind in opts["clients"].split(","):
        for transport in opts["transports"].split(","):
            for mode in opts["modes"].split(","):
                await one_connection(c, kind, transport, mode, command)
    print(f"{c.passed} passed, {c.failed} failed")
    return 1 if c.failed else 0


if __name__ == "__main__":
    sys.exit(anyio.run(main, sys.argv[1:]))
