"""What the scripts that drive an MCP server with the official Python SDK client share: the
count of passed checks, the report that ends a run, the server's command from the arguments,
the server to connect to over stdio or Streamable HTTP.

`client_check.py`, `catalog_check.py`, `replicas_check.py` and `tasks_client_check.py` (on
mcp 1.x, the others on 2.x: only what both have is imported here) import it; it is not run on
its own.
"""

import contextlib
import os
import signal
import socket
import subprocess
import sys
from collections.abc import Awaitable, Callable

import anyio

from mcp import StdioServerParameters
from mcp.types import CallToolResult, TextContent

TIMEOUT = 30.0  # seconds per request; the SDK's default is to wait forever


class CheckFailed(Exception):
    pass


class Checks:
    def __init__(self) -> None:
        self.passed = 0
        self.label = ""

    def ok(self, cond: object, name: str, detail: object = "") -> None:
        if not cond:
            raise CheckFailed(f"[{self.label}] {name}: {detail}")
        self.passed += 1
        print(f"ok {self.passed:3} [{self.label}] {name}")


def text_of(result: CallToolResult) -> str:
    return "\n".join(c.text for c in result.content if isinstance(c, TextContent))


def stdio_params(command: list[str]) -> StdioServerParameters:
    # Pass the caller's whole environment (the SDK otherwise only forwards HOME, PATH, ...),
    # so e.g. RUST_LOG or RUST_BACKTRACE reach the server; its stderr goes to ours.
    return StdioServerParameters(command=command[0], args=command[1:], env=dict(os.environ))


async def reported(c: Checks, checks: Callable[[], Awaitable[None]]) -> int:
    """Runs the checks, then prints "N passed, 0 failed" and returns 0; on the first failure, or
    anything the SDK or the server throws meanwhile, prints why, "N passed, 1 failed", returns 1.
    """
    try:
        await checks()
    except Exception as e:
        while len(getattr(e, "exceptions", ())) == 1:
            e = e.exceptions[0]  # the SDK's task groups wrap whatever escapes `async with`
        msg = str(e) if isinstance(e, CheckFailed) else f"[{c.label}] {type(e).__name__}: {e}"
        print(f"FAIL {msg}")
        print(f"{c.passed} passed, 1 failed")
        return 1
    print(f"{c.passed} passed, 0 failed")
    return 0


def server_command(argv: list[str], usage: str) -> list[str]:
    """The server's command: the arguments after an optional `--`. Without one, or with `-h`,
    prints `usage` and exits."""
    if argv[:1] == ["--"]:
        argv = argv[1:]
    if not argv or argv[0] in ("-h", "--help"):
        print(usage, file=sys.stdout if argv else sys.stderr)
        sys.exit(0 if argv else 2)
    return argv


@contextlib.asynccontextmanager
async def serving(c: Checks, transport: str, command: list[str], params: StdioServerParameters):
    """What the client connects to: the stdio parameters, or the URL of `command --http` started
    on a free port of 127.0.0.1, which is stopped with SIGTERM afterwards and must exit with 0."""
    if transport == "stdio":
        yield params
        return
    with socket.socket() as probe:
        probe.bind(("127.0.0.1", 0))
        port = probe.getsockname()[1]
    server = subprocess.Popen([*command, "--http", f"127.0.0.1:{port}"], stdin=subprocess.DEVNULL)
    try:
        with anyio.fail_after(TIMEOUT):
            while True:
                if server.poll() is not None:
                    raise CheckFailed(f"[{c.label}] the server exited with status "
                                      f"{server.returncode} before listening on port {port}")
                try:
                    socket.create_connection(("127.0.0.1", port), timeout=1).close()
                    break
                except OSError:
                    await anyio.sleep(0.05)
        yield f"http://127.0.0.1:{port}/mcp"
    finally:
        if server.poll() is None:
            server.send_signal(signal.SIGTERM)
        try:
            status = server.wait(timeout=TIMEOUT)
        except subprocess.TimeoutExpired:
            server.kill()
            status = server.wait()
    c.ok(status == 0, "the server stopped on SIGTERM with status 0", f"status {status}")
