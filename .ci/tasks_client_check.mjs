// Drive notes-server's tasks with the tasks extension's own client, @modelcontextprotocol/ext-tasks
// (on @modelcontextprotocol/client 2.x), in protocol 2026-07-28 (the io.modelcontextprotocol/tasks
// extension) and in 2025-11-25 (the core tasks), over stdio or Streamable HTTP.
//
// Install, from the repository root (Node.js 22 from npm, as for .ci/ts_client_check.mjs):
//     npm install --prefix target/ts-tasks --no-audit --no-fund --silent \
//         @modelcontextprotocol/client@2.4.0 @modelcontextprotocol/ext-tasks@0.2.2
//
// Usage:
//     node .ci/tasks_client_check.mjs --transport stdio|http --era modern|handshake [--wire] \
//         -- <server command> [args...]
//
//   --transport  stdio: the SDK spawns <server command>; http: the script starts
//                `<server command> --http 127.0.0.1:<free port>` and connects to its /mcp
//   --era        modern: the client pinned to 2026-07-28 (`server/discover`), tasks through the
//                extension; handshake: `initialize`, 2025-11-25, tasks of the core protocol
//   --wire       print every JSON-RPC message the client sends (>) and receives (<)
//
// ext-tasks is generation-agnostic: one `createTaskSessionFromClient(client)` session, whose
// `callTool` makes the call a task where the era lets it. For 2026-07-28 its README asks the
// host for `rawDispatch` (the SDK's typed request path rejects the extension's wire shapes) and
// for the framing the SDK client connected with; here the host is this script, which sends those
// requests on the SDK's own transport under ids of its own.
//
// The flow, as a user of the session sees it:
//   1. `callTool("wait_for_note", {text})` is a task (modern: the server made it one, the
//      tools/call answered `resultType: "task"`; handshake: asked with `task: {ttl}`); its
//      updates show it `working` with the statusMessage "waiting for a note titled like ...";
//      a plain SDK `callTool("add_note")` adds the matching note; the outcome is `completed`
//      with the note as structuredContent (modern: inlined in `tasks/get`'s `result`);
//   2. a second `wait_for_note` task: `cancel()`, the outcome `cancelled`, a snapshot
//      `cancelled`; cancelling it again is an ack in 2026-07-28 and the JSON-RPC error -32602 in
//      2025-11-25;
//   3. `callTool("export_notes", {format: "markdown"})`: `completed`, its text holding the note's
//      title (and, when it ran as a task, the statusMessage "exported N of N notes");
//   4. handshake only (2026-07-28 has no `tasks/list`): `listTasks()` holds the three tasks.
// Last, not one warning (console, process 'warning', the client's onerror).
//
// Prints one line per check ("ok N [label] name" or "FAIL N [label] name: reason") and ends with
// "N passed, M failed"; exits 1 when any check failed, 2 on bad usage.

import { spawn } from "node:child_process";
import { existsSync } from "node:fs";
import { createRequire } from "node:module";
import { createServer, connect as tcpConnect } from "node:net";
import { join } from "node:path";
import { fileURLToPath, pathToFileURL } from "node:url";
import { format } from "node:util";

const repo = fileURLToPath(new URL("..", import.meta.url));
const prefix = join(repo, "target", "ts-tasks");
const MODERN = "2026-07-28";
const HANDSHAKE = "2025-11-25";
const EXTENSION = "io.modelcontextprotocol/tasks";
const TIMEOUT = 20_000; // ms per request, and per wait for a task's status
const RETENTION_MS = 60_000;
const INVALID_PARAMS = -32602;

// ---- output and warning capture ----------------------------------------------------------

const out = (line) => process.stdout.write(`${line}\n`);
const warnings = [];
for (const level of ["warn", "error", "debug", "info", "trace", "log"]) {
  console[level] = (...args) => warnings.push(`console.${level}: ${format(...args)}`);
}
process.on("warning", (w) => warnings.push(`process warning: ${w.name}: ${w.message}`));

function usage(msg) {
  process.stderr.write(`tasks_client_check: ${msg}\n`);
  process.stderr.write(
    "usage: tasks_client_check.mjs --transport stdio|http --era modern|handshake [--wire] " +
      "-- <server command> [args...]\n",
  );
  process.exit(2);
}

function parseArgs(argv) {
  const opts = { transport: "stdio", era: "modern", wire: false };
  const sep = argv.indexOf("--");
  const flags = sep < 0 ? argv : argv.slice(0, sep);
  opts.command = sep < 0 ? [] : argv.slice(sep + 1);
  for (let i = 0; i < flags.length; i += 1) {
    if (flags[i] === "--wire") opts.wire = true;
    else if (flags[i] === "--transport" || flags[i] === "--era") opts[flags[i].slice(2)] = flags[++i];
    else usage(`unknown option ${flags[i]}`);
  }
  if (!["stdio", "http"].includes(opts.transport)) usage(`--transport ${opts.transport}`);
  if (!["modern", "handshake"].includes(opts.era)) usage(`--era ${opts.era}`);
  if (!opts.command.length) usage("no server command after --");
  return opts;
}

// ---- checks -------------------------------------------------------------------------------

let passed = 0;
let failed = 0;
let label = "";

async function check(name, fn) {
  try {
    const detail = await fn();
    passed += 1;
    out(`ok ${String(passed + failed).padStart(3)} [${label}] ${name}${detail ? ` (${detail})` : ""}`);
    return true;
  } catch (err) {
    failed += 1;
    const why = err instanceof Error ? `${err.constructor.name}: ${err.message}` : String(err);
    out(`FAIL ${String(passed + failed).padStart(2)} [${label}] ${name}: ${why.replace(/\s+/g, " ")}`);
    return false;
  }
}

function expect(cond, what, value) {
  if (!cond) throw new Error(`${what}; got ${JSON.stringify(value)?.slice(0, 600)}`);
}

const textOf = (result) =>
  (result?.content ?? []).filter((c) => c.type === "text").map((c) => c.text).join("\n");

function within(promise, what) {
  let timer;
  const timeout = new Promise((_, fail) => {
    timer = setTimeout(() => fail(new Error(`${what}: nothing within ${TIMEOUT} ms`)), TIMEOUT);
  });
  return Promise.race([promise, timeout]).finally(() => clearTimeout(timer));
}

// ---- the server over HTTP -----------------------------------------------------------------

function freePort() {
  return new Promise((ok, fail) => {
    const srv = createServer();
    srv.on("error", fail);
    srv.listen(0, "127.0.0.1", () => {
      const { port } = srv.address();
      srv.close(() => ok(port));
    });
  });
}

async function startHttpServer(command) {
  const port = await freePort();
  const child = spawn(command[0], [...command.slice(1), "--http", `127.0.0.1:${port}`], {
    stdio: ["ignore", "ignore", "pipe"],
  });
  let stderr = "";
  child.stderr.on("data", (d) => {
    stderr += d;
  });
  const log = () => stderr.trim().split("\n").slice(-5).join(" | ");
  const until = Date.now() + 15_000;
  while (Date.now() < until) {
    if (child.exitCode !== null) throw new Error(`server exited with ${child.exitCode}: ${log()}`);
    const open = await new Promise((ok) => {
      const sock = tcpConnect(port, "127.0.0.1", () => {
        sock.destroy();
        ok(true);
      });
      sock.on("error", () => ok(false));
    });
    if (open) return { url: `http://127.0.0.1:${port}/mcp`, child, log };
    await new Promise((ok) => setTimeout(ok, 100));
  }
  throw new Error(`server not listening on ${port} after 15 s: ${log()}`);
}

// ---- the host's raw request path, on the SDK's transport ----------------------------------

// Wraps the transport the SDK client connected: requests of ids "tasks-check-N" are sent on it
// and their responses taken before the client sees them; every other message passes through.
// `log` keeps the raw replies by method, for the checks on what went over the wire.
function rawPath(transport, wire) {
  const pending = new Map();
  const log = [];
  let next = 0;
  const show = (dir, msg) => {
    if (wire) out(`  wire ${dir} ${JSON.stringify(msg).slice(0, 2000)}`);
  };
  const send = transport.send.bind(transport);
  transport.send = (msg, ...rest) => {
    show(">", msg);
    return send(msg, ...rest);
  };
  const looked = new WeakSet();
  let current;
  Object.defineProperty(transport, "onmessage", {
    configurable: true,
    get: () => current,
    set: (fn) => {
      current =
        fn &&
        ((msg, ...rest) => {
          if (msg && typeof msg === "object" && !looked.has(msg)) {
            looked.add(msg);
            show("<", msg);
            const waiting = pending.get(msg.id);
            if (waiting && ("result" in msg || "error" in msg)) {
              pending.delete(msg.id);
              waiting(msg);
              return undefined;
            }
          }
          return fn(msg, ...rest);
        });
    },
  });
  const dispatch = async (request, options = {}) => {
    next += 1;
    const id = `tasks-check-${next}`;
    const message = { jsonrpc: "2.0", id, method: request.method };
    if (request.params !== undefined) message.params = request.params;
    const reply = new Promise((ok) => pending.set(id, ok));
    await send(message, {});
    show(">", message);
    const answer = await within(reply, request.method);
    log.push({ method: request.method, params: request.params, answer });
    if (options.signal?.aborted) throw options.signal.reason;
    return "error" in answer
      ? { kind: "error", error: answer.error }
      : { kind: "result", result: answer.result };
  };
  return { dispatch, log };
}

// ---- the flow -----------------------------------------------------------------------------

async function taskFlow(ext, client, session, era, raw) {
  const modern = era === "modern";
  const word = `ext${process.pid}${label.replace(/\W/g, "")}`;
  const title = `Minutes of ${word}`;
  // A tool whose taskSupport is "optional" runs as a task in 2025-11-25 when the caller prefers
  // one; in 2026-07-28 the server decides.
  const taskOptions = { task: { preference: "prefer", ...(modern ? {} : { retentionMs: RETENTION_MS }) } };
  let note;

  const call = (name, args) => within(session.callTool(name, args, taskOptions), `callTool ${name}`);
  // The task's updates until `until` holds for its view; the last view.
  const watch = async (execution, until) => {
    let last;
    const iterator = execution.updates()[Symbol.asyncIterator]();
    for (;;) {
      const step = await within(iterator.next(), "the task's next update");
      if (step.done) break;
      const view = ext.taskViewFromExecutionEvent(step.value);
      if (view) last = view;
      if (step.value.type === "outcome" || (view && until(view))) break;
    }
    await iterator.return?.();
    return last;
  };

  await check(`session: ${modern ? "the extension" : "capabilities.tasks"}, execution and cancellation`, async () => {
    const caps = session.capabilities;
    expect(caps.execution && caps.cancellation, "execution and cancellation", caps);
    expect(caps.inventory === (modern ? "known-handles" : "server-list"), "inventory", caps);
    return `inventory ${caps.inventory}`;
  });

  // 1. A task that waits on a person, ended by a note.
  let waiting;
  await check("callTool wait_for_note: a task", async () => {
    waiting = await call("wait_for_note", { text: word, timeout_seconds: 60 });
    expect(waiting.kind === "task", "kind task", waiting.kind);
    const created = raw.log.find((m) => m.method === "tools/call")?.answer?.result;
    if (modern) {
      expect(created?.resultType === "task" && created.status === "working", "resultType task, working", created);
      expect(created.ttlMs > 0 && created.pollIntervalMs > 0, "ttlMs, pollIntervalMs", created);
    }
    return waiting.handle.taskId;
  });
  if (!waiting || waiting.kind !== "task") return;
  const expected = `waiting for a note titled like "${word}": `;
  await check(`updates: working, statusMessage "${expected}N s so far"`, async () => {
    const view = await watch(waiting, (v) => (v.statusMessage ?? "").includes("so far"));
    expect(view?.status === "working" && view.statusMessage.startsWith(expected), "working, waiting", view?.raw);
    if (!modern) expect(view.ttl === RETENTION_MS, `the ttl asked for, ${RETENTION_MS}`, view.raw);
    return view.statusMessage;
  });
  await check("add_note (a plain SDK call) adds the note the task waits for", async () => {
    const added = await client.callTool(
      { name: "add_note", arguments: { title, body: "Decisions taken." } },
      { timeout: TIMEOUT },
    );
    expect(!added.isError && added.structuredContent?.title === title, "the note", added);
    note = added.structuredContent;
    return `id ${note.id}`;
  });
  await check("outcome: completed, the note as structuredContent", async () => {
    const outcome = await within(waiting.result(), "the outcome");
    expect(outcome.status === "completed", "completed", outcome);
    expect(JSON.stringify(outcome.result.structuredContent) === JSON.stringify(note), "the note", outcome.result);
    if (modern) {
      const done = raw.log.filter((m) => m.method === "tasks/get").map((m) => m.answer.result).at(-1);
      expect(done?.status === "completed" && done.result?.structuredContent?.id === note.id,
        "tasks/get: completed, the result inlined", done);
    } else {
      const related = outcome.result._meta?.["io.modelcontextprotocol/related-task"];
      expect(related?.taskId === waiting.handle.taskId, "tasks/result names the task", outcome.result._meta);
    }
    return modern ? "inlined in tasks/get" : "from tasks/result, naming the task";
  });

  // 2. A task cancelled while it waits.
  const other = `${word}-cancelled`;
  let cancelled;
  await check("a second wait_for_note task, cancelled: the outcome cancelled", async () => {
    cancelled = await call("wait_for_note", { text: other, timeout_seconds: 60 });
    expect(cancelled.kind === "task", "kind task", cancelled.kind);
    await within(cancelled.cancel(), "cancel");
    const outcome = await within(cancelled.result(), "the outcome");
    expect(outcome.status === "cancelled", "cancelled", outcome);
    return cancelled.handle.taskId;
  });
  if (cancelled?.kind === "task") {
    const id = cancelled.handle.taskId;
    await check("a snapshot, after a note it waited for is added: still cancelled", async () => {
      await client.callTool(
        { name: "add_note", arguments: { title: `Late ${other}`, body: "Too late." } },
        { timeout: TIMEOUT },
      );
      await new Promise((ok) => setTimeout(ok, 600));
      const view = await within(session.task(id).snapshot(), "snapshot");
      expect(view.status === "cancelled", "cancelled", view.raw);
      return view.statusMessage;
    });
    await check(`cancelling it again: ${modern ? "an ack" : "JSON-RPC error -32602"}`, async () => {
      let error;
      await within(session.cancelTask(id), "cancelTask").catch((e) => {
        error = e;
      });
      if (modern) {
        expect(error === undefined, "no error", `${error}`);
        const ack = raw.log.filter((m) => m.method === "tasks/cancel").at(-1)?.answer;
        expect(ack?.result && !("status" in ack.result), "an empty ack", ack);
        return JSON.stringify(ack.result);
      }
      const code = error?.code ?? error?.cause?.code;
      expect(code === INVALID_PARAMS, "code -32602", { name: error?.name, code, message: error?.message });
      return error.message;
    });
  }

  // 3. The export.
  let export_;
  await check("callTool export_notes: completed, the note's title in its text", async () => {
    export_ = await call("export_notes", { format: "markdown" });
    const { outcome, lastTask } = await within(export_.settle(), "settle");
    expect(outcome.status === "completed", "completed", outcome);
    expect(textOf(outcome.result).includes(`# ${title}`), "the title", textOf(outcome.result).slice(0, 300));
    if (export_.kind === "task") {
      const message = lastTask?.statusMessage ?? "";
      const counts = /^exported (\d+) of (\d+) notes$/.exec(message);
      expect(counts && counts[1] === counts[2], 'statusMessage "exported N of N notes"', lastTask?.raw);
      return `a task, ${message}`;
    }
    return "answered at once";
  });

  // 4. The session's tasks, where the era lists them.
  if (!modern) {
    await check("listTasks: the three tasks, completed, cancelled, completed", async () => {
      const page = await within(session.listTasks(), "listTasks");
      const seen = page.tasks.map((t) => `${t.taskId}:${t.status}`).sort();
      const want = [
        `${waiting.handle.taskId}:completed`,
        `${cancelled?.handle?.taskId}:cancelled`,
        `${export_?.handle?.taskId}:completed`,
      ].sort();
      expect(JSON.stringify(seen) === JSON.stringify(want) && !page.nextCursor, JSON.stringify(want), seen);
      return `${seen.length} tasks`;
    });
  }
}

// ---- main ---------------------------------------------------------------------------------

async function main() {
  const opts = parseArgs(process.argv.slice(2));
  if (!existsSync(join(prefix, "node_modules"))) usage(`no node_modules under ${prefix}`);
  const req = createRequire(join(prefix, "noop.js"));
  const sdk = req("@modelcontextprotocol/client");
  const { StdioClientTransport } = req("@modelcontextprotocol/client/stdio");
  // ext-tasks is ESM only: imported by path from the prefix.
  const extDir = join(prefix, "node_modules", "@modelcontextprotocol", "ext-tasks");
  const ext = await import(pathToFileURL(join(extDir, "dist", "client", "index.js")).href);
  const versions = ["client", "ext-tasks"].map((name) => {
    const pkg = join(prefix, "node_modules", "@modelcontextprotocol", name, "package.json");
    return `@modelcontextprotocol/${name} ${req(pkg).version}`;
  });
  label = `ext-tasks ${opts.transport} ${opts.era}`;
  out(`${versions.join(", ")}, ${opts.transport}, era ${opts.era}, node ${process.version}`);

  let server;
  let transport;
  let stderr = "";
  if (opts.transport === "stdio") {
    transport = new StdioClientTransport({ command: opts.command[0], args: opts.command.slice(1), stderr: "pipe" });
    transport.stderr?.on("data", (d) => {
      stderr += d;
    });
  } else {
    server = await startHttpServer(opts.command);
    transport = new sdk.StreamableHTTPClientTransport(new URL(server.url));
  }
  const raw = rawPath(transport, opts.wire);
  const clientInfo = { name: "tasks-client-check", version: "0.1.0" };
  const clientCapabilities = {};
  const client = new sdk.Client(clientInfo, {
    capabilities: clientCapabilities,
    versionNegotiation: { mode: opts.era === "modern" ? { pin: MODERN } : "legacy" },
  });
  let closing = false;
  client.onerror = (err) => {
    const msg = `${err?.message ?? err}`;
    if (closing && (err?.name === "AbortError" || /AbortError/.test(msg))) return;
    warnings.push(`client.onerror: ${msg}`);
  };

  const want = opts.era === "modern" ? MODERN : HANDSHAKE;
  const connected = await check(`connect: protocol ${want}, the server's tasks`, async () => {
    await client.connect(transport, { timeout: TIMEOUT });
    const version = client.getNegotiatedProtocolVersion?.();
    const caps = client.getServerCapabilities();
    expect(version === want, `protocol ${want}`, version);
    if (opts.era === "modern") {
      expect(JSON.stringify(caps?.extensions?.[EXTENSION]) === "{}", `extensions["${EXTENSION}"]: {}`, caps);
    } else {
      expect(caps?.tasks?.requests?.tools?.call && caps.tasks.list && caps.tasks.cancel, "tasks", caps);
    }
    return version;
  });

  if (connected) {
    const session = ext.createTaskSessionFromClient(client, {
      endpointId: `notes-server ${opts.transport}`,
      onError: (error) => warnings.push(`ext-tasks onError: ${error?.message ?? error}`),
      ...(opts.era === "modern"
        ? {
            rawDispatch: raw.dispatch,
            v2RequestFraming: { protocolVersion: MODERN, clientInfo, clientCapabilities },
          }
        : {}),
    });
    try {
      await taskFlow(ext, client, session, opts.era, raw);
    } finally {
      await session.close();
    }
  }

  closing = true;
  await client.close().catch((err) => warnings.push(`close: ${err?.message ?? err}`));
  if (server) {
    server.child.kill("SIGTERM");
    const code = await new Promise((ok) => {
      if (server.child.exitCode !== null) ok(server.child.exitCode);
      else server.child.on("exit", (c, sig) => ok(c ?? sig));
    });
    await check("the HTTP server exits 0 on SIGTERM", async () => {
      expect(code === 0, "exit status 0", code);
    });
  }
  await check("no console or process warning", async () => {
    for (const w of warnings) out(`  warning: ${w}`);
    expect(warnings.length === 0, `${warnings.length} warnings (above)`, warnings.slice(0, 3));
  });
  if (failed && stderr) out(`  server stderr (last lines): ${stderr.trim().split("\n").slice(-3).join(" | ")}`);
  if (failed && server) out(`  server stderr (last lines): ${server.log()}`);
  out(`${passed} passed, ${failed} failed`);
  process.exitCode = failed ? 1 : 0;
}

main().catch((err) => {
  out(`FAIL [${label}] ${err?.stack ?? err}`);
  out(`${passed} passed, ${failed + 1} failed`);
  process.exit(1);
});
