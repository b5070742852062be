"""OpenTelemetry export of notes-server (built with the `otel` feature), checked against real
receivers rather than against the server's own idea of them.

Usage:
    pip install -r .ci/requirements-otel.txt
    cargo build -p notes-server --features otel
    python .ci/otel_check.py [--] [target/debug/notes-server]

What runs, all on 127.0.0.1 and free ports:
  - an OTLP/HTTP receiver of this script's own (http.server): `POST /v1/traces` and
    `POST /v1/metrics`, `Content-Type: application/x-protobuf`, gzip or not, decoded with the
    official protobuf definitions (opentelemetry-proto) and kept;
  - Prometheus (the `prometheus` binary on PATH), configured in target/otel-check to scrape the
    server's `/metrics` every second, with its storage there too;
  - `notes-server --http ... --otlp-endpoint http://<receiver> --metrics`, exporting metrics
    every 500 ms and spans every 200 ms (OTEL_METRIC_EXPORT_INTERVAL, OTEL_BSP_SCHEDULE_DELAY).

The official MCP Python SDK client then opens a session (the `initialize` handshake) over
Streamable HTTP and calls three tools, each with a W3C trace context in `params._meta`
(`traceparent` of a trace id fixed here and a parent span id per call, `tracestate: tw=1`):
add_note (succeeds), get_note of an id that does not exist (a tool error, `isError: true`) and
a tool that does not exist (refused with JSON-RPC error -32602).

Checks:
  1. the receiver got, for each call, a SERVER span named `tools/call <tool>` in the trace sent,
     whose parent is the span id sent with that call, with the tracestate sent;
  2. the successful call's span has mcp.method.name, gen_ai.tool.name, gen_ai.operation.name
     (execute_tool), jsonrpc.request.id (the id on the wire), mcp.session.id (the SDK's),
     mcp.protocol.version (the negotiated one), network.transport (tcp), and no error.type;
  3. the tool error's span has error.type `tool_error`; the refused call's has error.type and
     rpc.response.status_code `-32602`;
  4. an `initialize` span arrived (every request gets one);
  5. the OTLP metrics hold the histogram `mcp.server.operation.duration` (unit `s`) with data
     points of mcp.method.name `tools/call` and a gen_ai.tool.name;
  6. the server's `/metrics` answers Prometheus text (text/plain) naming
     `mcp_server_operation_duration*`, and Prometheus itself scraped it: its query API returns
     the histogram's `_count` series for tools/call.

Prints one line per group of checks; on the first failure prints why (with the end of the
server's and Prometheus' logs, kept in target/otel-check) and exits 1. The server, Prometheus and the receiver are stopped
whatever happens.
"""

import collections
import gzip
import json
import os
import shutil
import signal
import socket
import subprocess
import sys
import threading
import time
import urllib.error
import urllib.parse
import urllib.request
import zlib
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer

import anyio
import httpx2
from mcp import Client, MCPError
from mcp.client.streamable_http import streamable_http_client
from opentelemetry.proto.collector.metrics.v1.metrics_service_pb2 import (
    ExportMetricsServiceRequest, ExportMetricsServiceResponse)
from opentelemetry.proto.collector.trace.v1.trace_service_pb2 import (
    ExportTraceServiceRequest, ExportTraceServiceResponse)
from opentelemetry.proto.trace.v1.trace_pb2 import Span

ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
WORK = os.path.join(ROOT, "target", "otel-check")
TIMEOUT = 30.0  # seconds: for each wait below, and for each MCP request

TRACE_ID = "4bf92f3577b34da6a3ce929d0e0e4736"  # the W3C trace context's example trace id
TRACESTATE = "tw=1"
# Each call's parent span id, so that each span's parent tells which call it continues.
PARENTS = {
    "add_note": "00f067aa0ba90201",
    "get_note": "00f067aa0ba90202",
    "no_such_tool": "00f067aa0ba90203",
}
MISSING_ID = 999999  # a note id that does not exist in a fresh, in-memory notebook
METRIC = "mcp.server.operation.duration"
PROM_PREFIX = "mcp_server_operation_duration"


class CheckFailed(Exception):
    pass


def ok(group: str, summary: str) -> None:
    print(f"ok   {group}: {summary}", flush=True)


def require(cond: object, group: str, detail: str) -> None:
    if not cond:
        raise CheckFailed(f"{group}: {detail}")


def wait_for(what: str, probe, timeout: float = TIMEOUT, every: float = 0.25):
    """Calls `probe()` until it returns (value, None), then returns value; `probe` returns
    (None, why-not) meanwhile. Fails with the last why-not after `timeout` seconds."""
    deadline = time.monotonic() + timeout
    while True:
        value, why = probe()
        if why is None:
            return value
        if time.monotonic() >= deadline:
            raise CheckFailed(f"{what}: not within {timeout:.0f} s: {why}")
        time.sleep(every)


def free_port() -> int:
    with socket.socket() as probe:
        probe.bind(("127.0.0.1", 0))
        return probe.getsockname()[1]


# --- the OTLP/HTTP receiver -------------------------------------------------------------------


def any_value(value):
    """An OTLP AnyValue as a Python value."""
    kind = value.WhichOneof("value")
    if kind is None:
        return None
    if kind == "array_value":
        return [any_value(v) for v in value.array_value.values]
    if kind == "kvlist_value":
        return {kv.key: any_value(kv.value) for kv in value.kvlist_value.values}
    return getattr(value, kind)


def attributes(key_values) -> dict:
    return {kv.key: any_value(kv.value) for kv in key_values}


class Received:
    """What the receiver was sent: spans, metrics, and the requests it could not take."""

    def __init__(self) -> None:
        self.lock = threading.Lock()
        self.spans: list[tuple[dict, Span]] = []  # (resource attributes, span)
        self.metrics: list[tuple[dict, object]] = []  # (resource attributes, Metric)
        self.requests: list[str] = []  # "POST /v1/traces 200", one per request
        self.refused: list[str] = []  # why each refused request was refused

    def snapshot(self):
        """The spans, metrics and requests so far, and the refused requests each once with how
        many times."""
        with self.lock:
            refused = [f"{why} ({n} times)" if n > 1 else why
                       for why, n in collections.Counter(self.refused).items()]
            return list(self.spans), list(self.metrics), list(self.requests), refused


def receiver(received: Received) -> ThreadingHTTPServer:
    class Handler(BaseHTTPRequestHandler):
        protocol_version = "HTTP/1.1"  # keep-alive, as OTLP exporters expect

        def log_message(self, *args) -> None:  # quiet: the checks say what arrived
            pass

        def body(self) -> bytes:
            if self.headers.get("Transfer-Encoding", "").lower() == "chunked":
                data = b""
                while True:
                    size = int(self.rfile.readline().split(b";")[0].strip(), 16)
                    if size == 0:
                        while self.rfile.readline() not in (b"\r\n", b"\n", b""):
                            pass  # trailers
                        return data
                    data += self.rfile.read(size)
                    self.rfile.readline()
            return self.rfile.read(int(self.headers.get("Content-Length") or 0))

        def answer(self, status: int, content_type: str, payload: bytes, why: str = "") -> None:
            with received.lock:
                received.requests.append(f"{self.command} {self.path} {status}")
                if why:
                    received.refused.append(f"{self.command} {self.path}: {status} {why}")
            self.send_response(status)
            self.send_header("Content-Type", content_type)
            self.send_header("Content-Length", str(len(payload)))
            self.end_headers()
            self.wfile.write(payload)

        def do_GET(self) -> None:
            self.answer(405, "text/plain", b"POST only\n", "not a POST")

        def do_POST(self) -> None:
            data = self.body()
            kinds = {"/v1/traces": (ExportTraceServiceRequest, ExportTraceServiceResponse),
                     "/v1/metrics": (ExportMetricsServiceRequest, ExportMetricsServiceResponse)}
            path = self.path.split("?")[0]
            if path not in kinds:
                self.answer(404, "text/plain", b"not found\n", "not an OTLP/HTTP path")
                return
            content_type = self.headers.get("Content-Type", "")
            if content_type.split(";")[0].strip().lower() != "application/x-protobuf":
                self.answer(415, "text/plain", b"application/x-protobuf only\n",
                            f"Content-Type {content_type!r}")
                return
            encoding = self.headers.get("Content-Encoding", "identity").strip().lower()
            try:
                if encoding == "gzip":
                    data = gzip.decompress(data)
                elif encoding == "deflate":
                    data = zlib.decompress(data)
                elif encoding not in ("", "identity"):
                    raise ValueError(f"Content-Encoding {encoding!r}")
                request_type, response_type = kinds[path]
                request = request_type.FromString(data)
            except Exception as e:  # a bad encoding, or not the protobuf message
                self.answer(400, "text/plain", b"cannot decode\n", f"cannot decode: {e}")
                return
            with received.lock:
                if path == "/v1/traces":
                    for resource_spans in request.resource_spans:
                        resource = attributes(resource_spans.resource.attributes)
                        for scope_spans in resource_spans.scope_spans:
                            received.spans += [(resource, s) for s in scope_spans.spans]
                else:
                    for resource_metrics in request.resource_metrics:
                        resource = attributes(resource_metrics.resource.attributes)
                        for scope_metrics in resource_metrics.scope_metrics:
                            received.metrics += [(resource, m) for m in scope_metrics.metrics]
            self.answer(200, "application/x-protobuf", response_type().SerializeToString())

    server = ThreadingHTTPServer(("127.0.0.1", 0), Handler)
    server.daemon_threads = True
    threading.Thread(target=server.serve_forever, name="otlp-receiver", daemon=True).start()
    return server


# --- Prometheus and the server ----------------------------------------------------------------


def http_get(url: str, timeout: float = 5.0) -> tuple[int, dict, bytes]:
    """The status, headers and body of a GET; status 0 and the reason when none came."""
    try:
        with urllib.request.urlopen(url, timeout=timeout) as response:
            return response.status, dict(response.headers), response.read()
    except urllib.error.HTTPError as e:
        return e.code, dict(e.headers), e.read()
    except OSError as e:  # refused, reset, timed out
        return 0, {}, str(e).encode()


def start_prometheus(server_port: int, port: int) -> subprocess.Popen:
    binary = shutil.which("prometheus")
    require(binary, "prometheus", "no `prometheus` on PATH (Debian: apt-get install prometheus)")
    config = os.path.join(WORK, "prometheus.yml")
    with open(config, "w") as f:
        f.write(f"""global:
  scrape_interval: 1s
  scrape_timeout: 1s
  evaluation_interval: 1s
scrape_configs:
  - job_name: notes-server
    metrics_path: /metrics
    static_configs:
      - targets: ["127.0.0.1:{server_port}"]
""")
    with open(os.path.join(WORK, "prometheus.log"), "w") as log:
        return subprocess.Popen(
            [binary, f"--config.file={config}",
             f"--storage.tsdb.path={os.path.join(WORK, 'prometheus-data')}",
             f"--web.listen-address=127.0.0.1:{port}"],
            stdin=subprocess.DEVNULL, stdout=log, stderr=subprocess.STDOUT, cwd=WORK)


def prometheus_ready(process: subprocess.Popen, port: int):
    def probe():
        if process.poll() is not None:
            raise CheckFailed(f"prometheus: exited with status {process.returncode}")
        status, _, body = http_get(f"http://127.0.0.1:{port}/-/ready", timeout=1)
        return (True, None) if status == 200 else (None, f"/-/ready: {status} {body[:200]!r}")
    return probe


def start_server(binary: str, port: int, receiver_port: int) -> subprocess.Popen:
    env = {k: v for k, v in os.environ.items() if not k.startswith("OTEL_")}
    env.update(OTEL_METRIC_EXPORT_INTERVAL="500", OTEL_BSP_SCHEDULE_DELAY="200")
    # Without --data the notes live in memory: a fresh notebook each run.
    with open(os.path.join(WORK, "notes-server.log"), "w") as log:
        return subprocess.Popen(
            [binary, "--http", f"127.0.0.1:{port}",
             "--otlp-endpoint", f"http://127.0.0.1:{receiver_port}", "--metrics"],
            stdin=subprocess.DEVNULL, stdout=log, stderr=subprocess.STDOUT, env=env)


def listening(process: subprocess.Popen, name: str, port: int):
    def probe():
        if process.poll() is not None:
            raise CheckFailed(f"{name}: exited with status {process.returncode} before "
                              f"listening on port {port}")
        try:
            socket.create_connection(("127.0.0.1", port), timeout=1).close()
            return True, None
        except OSError as e:
            return None, f"port {port}: {e}"
    return probe


def stop(process: subprocess.Popen | None) -> None:
    if process is None or process.poll() is not None:
        return
    process.send_signal(signal.SIGTERM)
    try:
        process.wait(timeout=10)
    except subprocess.TimeoutExpired:
        process.kill()
        process.wait()


def tail(path: str, lines: int = 25) -> str:
    try:
        with open(path, errors="replace") as f:
            return "".join(f.readlines()[-lines:])
    except OSError:
        return ""


# --- the MCP client ---------------------------------------------------------------------------


def traceparent(tool: str) -> dict:
    return {"traceparent": f"00-{TRACE_ID}-{PARENTS[tool]}-01", "tracestate": TRACESTATE}


async def client_calls(url: str) -> dict:
    """Opens a session and makes the three calls; returns what the client saw and sent."""
    seen = {"session_ids": set(), "sent": []}

    async def on_request(request: httpx2.Request) -> None:
        if request.method == "POST":
            try:
                seen["sent"].append(json.loads(request.content))
            except Exception:  # not read yet, or not JSON: not one of the calls
                pass

    async def on_response(response: httpx2.Response) -> None:
        if sid := response.headers.get("mcp-session-id"):
            seen["session_ids"].add(sid)

    group = "client"
    with anyio.fail_after(4 * TIMEOUT):
        async with (httpx2.AsyncClient(timeout=TIMEOUT, event_hooks={
                        "request": [on_request], "response": [on_response]}) as http,
                    Client(streamable_http_client(url, http_client=http), mode="legacy",
                           read_timeout_seconds=TIMEOUT) as client):
            seen["protocol_version"] = client.protocol_version
            added = await client.call_tool(
                "add_note", {"title": "Traced note", "body": "sent with a trace context"},
                meta=traceparent("add_note"))
            require(not added.is_error, group, f"add_note failed: {added.content!r:.300}")
            missing = await client.call_tool("get_note", {"id": MISSING_ID},
                                             meta=traceparent("get_note"))
            require(missing.is_error, group,
                    f"get_note({MISSING_ID}) did not fail: {missing.content!r:.300}")
            try:
                result = await client.call_tool("no_such_tool", {},
                                                meta=traceparent("no_such_tool"))
                raise CheckFailed(f"{group}: no_such_tool answered a result instead of a "
                                  f"JSON-RPC error (isError={result.is_error})")
            except MCPError as e:
                require(e.code == -32602, group,
                        f"no_such_tool: JSON-RPC error {e.code} ({e.message}), not -32602")
    require(len(seen["session_ids"]) == 1, group,
            f"expected one Mcp-Session-Id, got {sorted(seen['session_ids'])}")
    seen["session_id"] = next(iter(seen["session_ids"]))
    # The tools/call requests as they went on the wire: each one's id, and the trace context
    # the SDK sent (it would replace ours with its own only if it had a current span).
    calls = {}
    for message in seen["sent"]:
        for m in message if isinstance(message, list) else [message]:
            if isinstance(m, dict) and m.get("method") == "tools/call":
                calls[(m.get("params") or {}).get("name")] = m
    for tool in PARENTS:
        require(tool in calls, group, f"no tools/call of {tool} seen on the wire")
        meta = (calls[tool].get("params") or {}).get("_meta") or {}
        sent = {k: meta.get(k) for k in ("traceparent", "tracestate")}
        require(sent == traceparent(tool), group,
                f"{tool}: the request's params._meta carried {sent}, not {traceparent(tool)}")
    seen["request_ids"] = {tool: calls[tool].get("id") for tool in PARENTS}
    return seen


# --- the checks -------------------------------------------------------------------------------


def describe(spans) -> str:
    kinds = {v: k.removeprefix("SPAN_KIND_") for k, v in Span.SpanKind.items()}
    shown = [f"{s.name!r} {kinds.get(s.kind, s.kind)} trace {s.trace_id.hex()} parent "
             f"{s.parent_span_id.hex() or '-'}" for _, s in spans[:40]]
    more = f"; and {len(spans) - 40} more" if len(spans) > 40 else ""
    return "; ".join(shown) + more if shown else "none"


def check_spans(received: Received, seen: dict) -> None:
    wanted = {f"tools/call {tool}": tool for tool in PARENTS}

    def probe():
        spans, _, requests, refused = received.snapshot()
        found = {}
        for resource, span in spans:
            if (span.name in wanted and span.kind == Span.SPAN_KIND_SERVER
                    and span.trace_id.hex() == TRACE_ID):
                found[wanted[span.name]] = span
        initialize = [s for _, s in spans if s.name == "initialize"]
        if len(found) == len(wanted) and initialize:
            return (found, initialize, spans), None
        missing = sorted(set(wanted) - {f"tools/call {t}" for t in found})
        if not initialize:
            missing.append("initialize")
        why = f"missing {missing}; spans received: {describe(spans)}"
        if refused:
            why += f"; requests refused: {refused}"
        return None, why

    group = "spans"
    found, initialize, spans = wait_for(
        f"{group}: SERVER spans named `tools/call <tool>` in trace {TRACE_ID}, and `initialize`",
        probe)
    for tool, span in found.items():
        parent = span.parent_span_id.hex()
        require(parent == PARENTS[tool], group,
                f"`tools/call {tool}`: parent span id {parent or '(none)'}, not the "
                f"{PARENTS[tool]} sent in its traceparent")
        require(len(span.span_id) == 8 and span.span_id.hex() not in PARENTS.values(), group,
                f"`tools/call {tool}`: span id {span.span_id.hex()} is not a new span's")
        require(span.trace_state == TRACESTATE, group,
                f"`tools/call {tool}`: tracestate {span.trace_state!r}, not the {TRACESTATE!r} "
                "sent with its call")
    ok(group, f"{len(found)} SERVER spans `tools/call <tool>` in trace {TRACE_ID}, each the "
              f"child of the span id sent with its call, tracestate {TRACESTATE} "
              f"({len(spans)} spans received)")
    transport = attributes(initialize[0].attributes).get("network.transport", "(absent)")
    require(transport == "tcp", group,
            f"`initialize` over HTTP: network.transport={transport!r}, not 'tcp'")
    ok("spans", f"`initialize` arrived too ({len(initialize)} span(s), kind "
                f"{Span.SpanKind.Name(initialize[0].kind)}, network.transport=tcp)")

    # The tool's own `tracing` span (notes-tools' `notebook.write`, on the blocking thread
    # add_note runs on) is a child of the call's span.
    call = found["add_note"]

    def nested():
        spans, _, _, _ = received.snapshot()
        children = [s for _, s in spans if s.name == "notebook.write"
                    and s.parent_span_id == call.span_id]
        if children:
            return children[0], None
        writes = [f"parent {s.parent_span_id.hex() or '-'} trace {s.trace_id.hex()}"
                  for _, s in spans if s.name == "notebook.write"]
        return None, (f"no `notebook.write` span whose parent is `tools/call add_note` "
                      f"({call.span_id.hex()}); `notebook.write` spans: {writes or 'none'}")

    child = wait_for(f"{group}: the tool's own span under its call's", nested)
    require(child.trace_id.hex() == TRACE_ID, group,
            f"`notebook.write` is in trace {child.trace_id.hex()}, not {TRACE_ID}")
    ok("spans", f"the tool's own `tracing` span `notebook.write` is a child of "
                f"`tools/call add_note` ({call.span_id.hex()}), in the client's trace")

    group = "span attributes"
    attrs = attributes(found["add_note"].attributes)
    expected = {
        "mcp.method.name": "tools/call",
        "gen_ai.tool.name": "add_note",
        "gen_ai.operation.name": "execute_tool",
        "jsonrpc.request.id": str(seen["request_ids"]["add_note"]),
        "mcp.session.id": seen["session_id"],
        "mcp.protocol.version": seen["protocol_version"],
        "network.transport": "tcp",
    }
    wrong = {k: attrs.get(k, "(absent)") for k, v in expected.items() if attrs.get(k) != v}
    require(not wrong, group, f"`tools/call add_note`: expected {expected}, but got {wrong} "
                              f"(all its attributes: {attrs})")
    require("error.type" not in attrs, group,
            f"`tools/call add_note` succeeded but has error.type={attrs.get('error.type')!r}")
    ok(group, "`tools/call add_note`: " + ", ".join(f"{k}={v}" for k, v in expected.items())
              + ", no error.type")

    group = "error spans"
    attrs = attributes(found["get_note"].attributes)
    got = attrs.get("error.type", "(absent)")
    require(got == "tool_error", group, f"`tools/call get_note` (isError: true): error.type="
                                        f"{got!r}, not 'tool_error' (all its attributes: {attrs})")
    attrs = attributes(found["no_such_tool"].attributes)
    got = {k: attrs.get(k, "(absent)") for k in ("error.type", "rpc.response.status_code")}
    require(got == {"error.type": "-32602", "rpc.response.status_code": "-32602"}, group,
            f"`tools/call no_such_tool` (JSON-RPC error -32602): {got}, expected both to be the "
            f"string '-32602' (all its attributes: {attrs})")
    ok(group, "get_note error.type=tool_error; no_such_tool error.type=-32602, "
              "rpc.response.status_code=-32602")


def check_otlp_metrics(received: Received) -> None:
    group = "OTLP metrics"

    def probe():
        _, metrics, _, refused = received.snapshot()
        named = [(r, m) for r, m in metrics if m.name == METRIC]
        points = []
        for _, m in named:
            if m.WhichOneof("data") == "histogram":
                points += [attributes(p.attributes) | {"(count)": p.count}
                           for p in m.histogram.data_points]
        calls = [p for p in points
                 if p.get("mcp.method.name") == "tools/call" and p.get("gen_ai.tool.name")]
        if any(p.get("gen_ai.tool.name") == "add_note" for p in calls):
            return (named, calls), None
        names = sorted({f"{m.name} ({m.WhichOneof('data')}, unit {m.unit!r})" for _, m in metrics})
        why = f"metrics received: {names or 'none'}; {METRIC} data points: {points}"
        if refused:
            why += f"; requests refused: {refused}"
        return None, why

    named, calls = wait_for(f"{group}: the histogram {METRIC} with a point of tools/call "
                            "add_note", probe)
    units = {m.unit for _, m in named}
    require(units == {"s"}, group, f"{METRIC} has unit {sorted(units)}, not 's'")
    kinds = {m.WhichOneof("data") for _, m in named}
    require(kinds == {"histogram"}, group, f"{METRIC} arrived as {sorted(kinds)}, not histogram")
    tools = sorted({p["gen_ai.tool.name"] for p in calls})
    ok(group, f"{METRIC} is a histogram in 's' with tools/call points for {tools} "
              f"({len(named)} exports)")


def check_prometheus(server_port: int, prom_port: int) -> None:
    group = "/metrics"

    def served():
        status, headers, body = http_get(f"http://127.0.0.1:{server_port}/metrics")
        text = body.decode(errors="replace")
        if status == 200 and PROM_PREFIX in text:
            return (headers, text), None
        return None, f"status {status}, {len(body)} bytes: {text[:300]!r}"

    headers, text = wait_for(f"{group}: {PROM_PREFIX} on the server's /metrics", served)
    content_type = {k.lower(): v for k, v in headers.items()}.get("content-type", "")
    require(content_type.startswith("text/plain"), group,
            f"Content-Type {content_type!r}, not text/plain (Prometheus text format)")
    names = sorted({line.split("{")[0].split(" ")[0] for line in text.splitlines()
                    if line.startswith(PROM_PREFIX)})
    counts = [n for n in names if n.endswith("_count")]
    require(counts, group, f"no `{PROM_PREFIX}*_count` sample in /metrics: {names}")
    count = counts[0]
    family = count.removesuffix("_count")
    require(f"# TYPE {family} histogram" in text, group,
            f"no `# TYPE {family} histogram` line in /metrics")
    ok(group, f"{content_type}; histogram {family} ({', '.join(names)})")

    group = "Prometheus"

    def scraped():
        query = urllib.parse.urlencode({"query": count})
        status, _, body = http_get(f"http://127.0.0.1:{prom_port}/api/v1/query?{query}")
        try:
            answer = json.loads(body)
        except ValueError:
            answer = {}
        result = (answer.get("data") or {}).get("result") or []
        if status == 200 and any("tools/call" in s.get("metric", {}).values() for s in result):
            return result, None
        _, _, targets = http_get(f"http://127.0.0.1:{prom_port}/api/v1/targets")
        try:
            active = json.loads(targets)["data"]["activeTargets"]
            health = [(t.get("scrapeUrl"), t.get("health"), t.get("lastError")) for t in active]
        except (ValueError, KeyError, TypeError):
            health = targets[:300]
        return None, f"query {count}: status {status}, {body[:300]!r}; targets: {health}"

    result = wait_for(f"{group}: {count} of tools/call through Prometheus' query API", scraped,
                      every=0.5)
    series = [s["metric"] for s in result if "tools/call" in s["metric"].values()]
    ok(group, f"scraped /metrics every 1 s; {count} has {len(result)} series, "
              f"{len(series)} of tools/call, e.g. {series[0]}")


# --- main -------------------------------------------------------------------------------------


def main(argv: list[str]) -> int:
    if argv[:1] == ["--"]:
        argv = argv[1:]
    if argv[:1] in (["-h"], ["--help"]):
        print(__doc__)
        return 0
    binary = argv[0] if argv else os.path.join(ROOT, "target", "debug", "notes-server")
    shutil.rmtree(WORK, ignore_errors=True)
    os.makedirs(WORK)

    received = Received()
    otlp = prometheus = server = None
    try:
        require(os.access(binary, os.X_OK), "notes-server",
                f"{binary} is not an executable (cargo build -p notes-server --features otel)")
        otlp = receiver(received)
        receiver_port = otlp.server_address[1]
        ok("receiver", f"OTLP/HTTP (protobuf) at http://127.0.0.1:{receiver_port}/v1/traces "
                       "and /v1/metrics")

        server_port, prom_port = free_port(), free_port()
        while prom_port == server_port:
            prom_port = free_port()
        prometheus = start_prometheus(server_port, prom_port)

        wait_for("prometheus: ready", prometheus_ready(prometheus, prom_port))
        ok("prometheus", f"ready at 127.0.0.1:{prom_port}, scraping 127.0.0.1:{server_port}"
                         "/metrics every 1 s")

        server = start_server(binary, server_port, receiver_port)
        wait_for("notes-server: listening", listening(server, "notes-server", server_port))
        seen = anyio.run(client_calls, f"http://127.0.0.1:{server_port}/mcp")
        ok("client", f"session {seen['session_id']}, protocol {seen['protocol_version']}; "
                     "add_note ok, get_note isError, no_such_tool -32602, each with a "
                     "traceparent in params._meta")

        check_spans(received, seen)
        check_otlp_metrics(received)
        check_prometheus(server_port, prom_port)
        print("all OpenTelemetry checks passed")
        return 0
    except Exception as e:
        while len(getattr(e, "exceptions", ())) == 1:
            e = e.exceptions[0]  # the SDK's task groups wrap whatever escapes `async with`
        print(f"FAIL {e}" if isinstance(e, CheckFailed) else f"FAIL {type(e).__name__}: {e}")
        for name, lines in (("notes-server.log", 25), ("prometheus.log", 10)):
            if log := tail(os.path.join(WORK, name), lines):
                print(f"--- the end of target/otel-check/{name}:\n{log}", end="")
        return 1
    finally:
        stop(server)
        stop(prometheus)
        if otlp is not None:
            otlp.shutdown()
            otlp.server_close()


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
