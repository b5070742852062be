"""What a hostile or careless client can do to a toolwright server, on loopback, bounded in time
and in count; the standard library only.

Usage:
    python3 .ci/edge_check.py --notes target/debug/notes-server \\
        --conformance target/debug/conformance-server

Checks:
  1. HTTP, notes-server with `--token` under a limit of 1,024 open files: 1,100 connections held
     (400 idle, 350 that send half a request's headers, 350 that send the headers and stall in
     the body) do not keep out a client with the token, whose 5 requests are all served; the idle
     and half-sent ones are closed once the 10 s for a request's headers are over.
  2. HTTP: a request with two `Host` headers, and one whose request line names another host
     (`POST http://evil.example.com/mcp`), are refused with 400.
  3. stdio, notes-server: a client that writes pings and never reads the answers is read no
     further once the answers it leaves unread pass the bound: the server's memory stays flat
     while the client writes for 6 s, and every ping it wrote is answered once it reads.
  4. stdio, conformance-server: 1,000 calls each cancelled as soon as sent get no answer (their
     progress notifications may come), and the server answers a ping after them.
Prints "ok ..." / "FAIL ..." per check with the figures, "N passed, M failed"; exits 1 on a failure.
"""

from __future__ import annotations

import json
import os
import resource
import select
import socket
import subprocess
import sys
import threading
import time

TOKEN = "edge-check-token"
HELD = {"idle": 400, "half headers": 350, "stalled body": 350}


class Checks:
    def __init__(self) -> None:
        self.passed = 0
        self.failed = 0

    def ok(self, cond: bool, what: str, detail: object = "") -> None:
        n = self.passed + self.failed + 1
        if cond:
            self.passed += 1
            print(f"ok {n:3} {what}" + (f" ({detail})" if detail != "" else ""))
        else:
            self.failed += 1
            print(f"FAIL {n:2} {what}: {detail}")


def free_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return s.getsockname()[1]


def rss_kib(pid: int) -> int:
    with open(f"/proc/{pid}/status") as f:
        for line in f:
            if line.startswith("VmRSS:"):
                return int(line.split()[1])
    return 0


def limit_files() -> None:
    resource.setrlimit(resource.RLIMIT_NOFILE, (1024, 1024))


def request(port: int, body: dict, session: str | None = None) -> tuple[int, dict, str | None]:
    """One POST on a new connection, as a client with the token sends it."""
    payload = json.dumps(body).encode()
    head = [
        "POST /mcp HTTP/1.1", f"Host: 127.0.0.1:{port}", f"Authorization: Bearer {TOKEN}",
        "Content-Type: application/json", "Accept: application/json, text/event-stream",
        f"Content-Length: {len(payload)}", "Connection: close",
    ]
    if session:
        head += [f"Mcp-Session-Id: {session}", "MCP-Protocol-Version: 2025-11-25"]
    with socket.create_connection(("127.0.0.1", port), timeout=10) as s:
        s.sendall(("\r\n".join(head) + "\r\n\r\n").encode() + payload)
        data = b""
        while chunk := s.recv(65536):
            data += chunk
    header, _, text = data.partition(b"\r\n\r\n")
    lines = header.decode().split("\r\n")
    status = int(lines[0].split()[1])
    headers = {k.lower(): v.strip() for k, _, v in (line.partition(":") for line in lines[1:])}
    return status, (json.loads(text) if text.strip() else {}), headers.get("mcp-session-id")


def raw_status(port: int, text: str) -> str:
    with socket.create_connection(("127.0.0.1", port), timeout=10) as s:
        s.sendall(text.encode())
        return s.recv(4096).decode(errors="replace").split("\r\n", 1)[0]


def held_connections(c: Checks, notes: str) -> None:
    # This process holds 1,100 sockets: its own limit is raised to the hard one.
    soft, hard = resource.getrlimit(resource.RLIMIT_NOFILE)
    resource.setrlimit(resource.RLIMIT_NOFILE, (max(soft, min(hard, 4096)), hard))
    port = free_port()
    server = subprocess.Popen([notes, "--http", f"127.0.0.1:{port}", "--token", TOKEN],
                              stdin=subprocess.DEVNULL, stdout=subprocess.DEVNULL,
                              stderr=subprocess.DEVNULL, preexec_fn=limit_files)
    held: dict[str, list[socket.socket]] = {kind: [] for kind in HELD}
    try:
        deadline = time.monotonic() + 15
        while time.monotonic() < deadline:
            try:
                socket.create_connection(("127.0.0.1", port), timeout=0.2).close()
                break
            except OSError:
                time.sleep(0.1)
        started = time.monotonic()
        for kind, count in HELD.items():
            for _ in range(count):
                s = socket.create_connection(("127.0.0.1", port), timeout=10)
                if kind == "half headers":
                    s.sendall(b"POST /mcp HTTP/1.1\r\nHost: 127.0.0.1\r\nContent-Ty")
                elif kind == "stalled body":
                    s.sendall(f"POST /mcp HTTP/1.1\r\nHost: 127.0.0.1\r\nAuthorization: Bearer "
                              f"{TOKEN}\r\nContent-Type: application/json\r\nAccept: "
                              f"application/json, text/event-stream\r\nContent-Length: 1000\r\n"
                              f"\r\n{{\"jsonrpc\"".encode())
                held[kind].append(s)
        total = sum(len(v) for v in held.values())
        served = 0
        times = []
        for i in range(5):
            t = time.monotonic()
            if i == 0:
                status, body, session = request(port, {
                    "jsonrpc": "2.0", "id": 1, "method": "initialize", "params": {
                        "protocolVersion": "2025-11-25", "capabilities": {},
                        "clientInfo": {"name": "edge-check", "version": "0"}}})
                ok = status == 200 and body.get("result", {}).get("protocolVersion") == "2025-11-25"
            else:
                status, body, _ = request(port, {"jsonrpc": "2.0", "id": i + 1, "method": "tools/call",
                                                 "params": {"name": "list_notes", "arguments": {}}},
                                          session)
                ok = status == 200 and "result" in body
            times.append(time.monotonic() - t)
            served += ok
        c.ok(served == 5,
             f"{total} connections held under a limit of 1,024 files: a client with the token is served",
             f"{served} of 5 requests, slowest {max(times) * 1000:.0f} ms; "
             f"{time.monotonic() - started:.1f} s for all")
        # Past the 10 s a request's headers may take, the idle and half-sent ones are closed.
        time.sleep(11)
        closed = {}
        for kind, sockets in held.items():
            n = 0
            for s in sockets:
                s.setblocking(False)
                try:
                    data = s.recv(4096)
                    n += data == b"" or data.startswith(b"HTTP/1.1 408") or data.startswith(b"HTTP/1.1 503")
                except BlockingIOError:
                    pass
                except OSError:
                    n += 1
            closed[kind] = n
        c.ok(closed["idle"] == HELD["idle"] and closed["half headers"] == HELD["half headers"],
             "the idle and half-sent connections are closed after 10 s",
             ", ".join(f"{kind}: {closed[kind]} of {HELD[kind]} closed" for kind in HELD))

        two_hosts = raw_status(port, "POST /mcp HTTP/1.1\r\nHost: localhost\r\nHost: evil.example.com\r\n"
                                     "Content-Length: 0\r\n\r\n")
        c.ok(" 400 " in f"{two_hosts} ", "two Host headers are refused with 400", two_hosts)
        absolute = raw_status(port, "POST http://evil.example.com/mcp HTTP/1.1\r\nHost: localhost\r\n"
                                    "Content-Length: 0\r\n\r\n")
        c.ok(" 400 " in f"{absolute} ", "a request line naming another host is refused with 400", absolute)
    finally:
        for sockets in held.values():
            for s in sockets:
                s.close()
        server.terminate()
        server.wait(10)


def non_reading_client(c: Checks, notes: str) -> None:
    server = subprocess.Popen([notes], stdin=subprocess.PIPE, stdout=subprocess.PIPE,
                              stderr=subprocess.DEVNULL)
    init = {"jsonrpc": "2.0", "id": 0, "method": "initialize", "params": {
        "protocolVersion": "2025-11-25", "capabilities": {},
        "clientInfo": {"name": "edge-check", "version": "0"}}}
    server.stdin.write((json.dumps(init) + "\n").encode())
    server.stdin.flush()
    server.stdout.readline()
    written = 0
    stop = threading.Event()

    def write() -> None:
        nonlocal written
        try:
            while not stop.is_set():
                batch = b"".join(
                    (json.dumps({"jsonrpc": "2.0", "id": written + i + 1, "method": "ping"}) + "\n").encode()
                    for i in range(100))
                server.stdin.write(batch)
                server.stdin.flush()
                written += 100
        except (BrokenPipeError, ValueError, OSError):
            pass

    writer = threading.Thread(target=write, daemon=True)
    writer.start()
    time.sleep(1)
    before = rss_kib(server.pid)
    samples = []
    for _ in range(5):
        time.sleep(1)
        samples.append(rss_kib(server.pid))
    stop.set()
    after = rss_kib(server.pid)
    c.ok(after - before < 4096,
         "a client that never reads: the server's memory stays flat while it writes for 6 s",
         f"{before / 1024:.1f} MiB after 1 s, {after / 1024:.1f} MiB after 6 s; "
         f"{written} pings written (the server stopped reading)")
    # Now the client reads: every ping it wrote is answered, none lost.
    answered = 0
    deadline = time.monotonic() + 60
    fd = server.stdout.fileno()
    buffer = b""
    while time.monotonic() < deadline:
        ready, _, _ = select.select([fd], [], [], 0.5)
        if not ready:
            if not writer.is_alive() and answered >= written:
                break
            continue
        chunk = os.read(fd, 1 << 20)
        if not chunk:
            break
        buffer += chunk
        *lines, buffer = buffer.split(b"\n")
        answered += sum(1 for line in lines if b'"result"' in line)
        if not writer.is_alive() and answered >= written:
            break
    writer.join(10)
    c.ok(answered == written, "once it reads, every ping it wrote is answered",
         f"{answered} of {written}")
    server.stdin.close()
    server.wait(10)


def cancelled_calls(c: Checks, conformance: str) -> None:
    server = subprocess.Popen([conformance], stdin=subprocess.PIPE, stdout=subprocess.PIPE,
                              stderr=subprocess.DEVNULL)

    def send(message: dict) -> None:
        server.stdin.write((json.dumps(message) + "\n").encode())

    send({"jsonrpc": "2.0", "id": "init", "method": "initialize", "params": {
        "protocolVersion": "2025-11-25", "capabilities": {},
        "clientInfo": {"name": "edge-check", "version": "0"}}})
    server.stdin.flush()
    server.stdout.readline()
    send({"jsonrpc": "2.0", "method": "notifications/initialized"})
    count = 1000
    for i in range(1, count + 1):
        send({"jsonrpc": "2.0", "id": i, "method": "tools/call", "params": {
            "name": "test_tool_with_progress", "arguments": {}, "_meta": {"progressToken": i}}})
        send({"jsonrpc": "2.0", "method": "notifications/cancelled", "params": {"requestId": i}})
    send({"jsonrpc": "2.0", "id": "end", "method": "ping"})
    server.stdin.flush()
    answered = []
    pong = False
    # Past the ping, as long again as a call would take, twice over: a late answer would show.
    deadline = time.monotonic() + 30
    quiet_until = None
    fd = server.stdout.fileno()
    buffer = b""
    while time.monotonic() < deadline and (quiet_until is None or time.monotonic() < quiet_until):
        ready, _, _ = select.select([fd], [], [], 0.1)
        if not ready:
            continue
        chunk = os.read(fd, 1 << 20)
        if not chunk:
            break
        buffer += chunk
        *lines, buffer = buffer.split(b"\n")
        for line in lines:
            message = json.loads(line)
            if message.get("id") == "end":
                pong = True
                quiet_until = time.monotonic() + 1.0
            elif "id" in message and ("result" in message or "error" in message):
                answered.append(message["id"])
    c.ok(pong and not answered, f"{count} calls cancelled as soon as sent get no answer",
         f"answered: {len(answered)}" + (f", e.g. ids {answered[:5]}" if answered else "")
         + ("" if pong else "; no answer to the ping after them"))
    server.stdin.close()
    server.wait(10)


def main(argv: list[str]) -> int:
    if len(argv) != 4 or argv[0] != "--notes" or argv[2] != "--conformance":
        print(__doc__, file=sys.stderr)
        return 2
    notes, conformance = argv[1], argv[3]
    c = Checks()
    held_connections(c, notes)
    non_reading_client(c, notes)
    cancelled_calls(c, conformance)
    print(f"{c.passed} passed, {c.failed} failed")
    return 1 if c.failed else 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
