// Drive notes-server, made an OAuth resource server, with the official TypeScript SDK clients
// and their client-credentials provider: @modelcontextprotocol/sdk 1.x ("v1") and
// @modelcontextprotocol/client 2.x ("v2"). Each client meets the server's 401, follows its
// `resource_metadata` to the authorization server, gets a token and reaches the tools.
//
// Usage (the authorization server, tests/oauth-server/server.mjs, already running; the SDKs
// installed as for .ci/ts_client_check.mjs):
//     node .ci/oauth_client_check.mjs --sdk v1|v2 --issuer http://127.0.0.1:PORT \
//         [--prefix DIR] -- target/debug/notes-server
//
// The script starts `<server> --http 127.0.0.1:<free port> --oauth-issuer ISSUER --oauth-scope
// notes:read` itself; notes-tools' writing tools need `notes:write`. The authorization server's
// clients: `mcp-basic` may have both scopes, `mcp-readonly` only `notes:read` (secrets: the id
// followed by `-secret`).
//
// Checks:
//   mcp-basic: connects through the 401; tools/list (add_note's _meta.securitySchemes asks for
//     notes:write); list_notes; add_note. v1 sends only the scope its provider is given (here
//     both); v2 asks first for the scope the 401 names (notes:read), and on add_note's 403
//     `insufficient_scope` for notes:write too (step-up), then calls again.
//   mcp-readonly (asking for notes:read): list_notes; add_note refused with the 403.
//   not one console or process warning, nor a client error, but the 403 of the refused call.

import { spawn } from "node:child_process";
import { existsSync } from "node:fs";
import { createRequire } from "node:module";
import { createServer, connect as tcpConnect } from "node:net";
import { join, resolve } from "node:path";
import { fileURLToPath } from "node:url";
import { format } from "node:util";

const repo = fileURLToPath(new URL("..", import.meta.url));
const TIMEOUT = 30_000;

const out = (line) => process.stdout.write(`${line}\n`);
const warnings = [];
for (const level of ["warn", "error", "debug", "info", "trace", "log"]) {
  console[level] = (...args) => warnings.push(`console.${level}: ${format(...args)}`);
}
process.on("warning", (w) => warnings.push(`process warning: ${w.name}: ${w.message}`));

function usage(msg) {
  process.stderr.write(`oauth_client_check: ${msg}\n`);
  process.stderr.write(
    "usage: oauth_client_check.mjs --sdk v1|v2 --issuer URL [--prefix DIR] -- <server command>\n",
  );
  process.exit(2);
}

function parseArgs(argv) {
  const opts = { sdk: "", issuer: "", prefix: "" };
  const sep = argv.indexOf("--");
  if (sep < 0) usage("no server command after --");
  const flags = argv.slice(0, sep);
  opts.command = argv.slice(sep + 1);
  for (let i = 0; i < flags.length; i += 2) {
    const key = flags[i].replace(/^--/, "");
    if (!(key in opts) || key === "command" || i + 1 >= flags.length) usage(`bad option ${flags[i]}`);
    opts[key] = flags[i + 1];
  }
  if (!["v1", "v2"].includes(opts.sdk)) usage(`--sdk ${opts.sdk}`);
  if (!opts.issuer) usage("--issuer is required");
  if (!opts.command.length) usage("no server command after --");
  opts.prefix = resolve(opts.prefix || join(repo, "target", "ts-clients", opts.sdk));
  return opts;
}

function loadSdk(sdk, prefix) {
  if (!existsSync(join(prefix, "node_modules"))) usage(`no node_modules under ${prefix}`);
  const req = createRequire(join(prefix, "noop.js"));
  if (sdk === "v1") {
    const { Client } = req("@modelcontextprotocol/sdk/client/index.js");
    const { StreamableHTTPClientTransport } = req("@modelcontextprotocol/sdk/client/streamableHttp.js");
    const { ClientCredentialsProvider } = req("@modelcontextprotocol/sdk/client/auth-extensions.js");
    const version = req(join(prefix, "node_modules/@modelcontextprotocol/sdk/package.json")).version;
    return { name: `@modelcontextprotocol/sdk ${version}`, Client, StreamableHTTPClientTransport, ClientCredentialsProvider };
  }
  const main = req("@modelcontextprotocol/client");
  const version = req(join(prefix, "node_modules/@modelcontextprotocol/client/package.json")).version;
  return {
    name: `@modelcontextprotocol/client ${version}`,
    Client: main.Client,
    StreamableHTTPClientTransport: main.StreamableHTTPClientTransport,
    ClientCredentialsProvider: main.ClientCredentialsProvider,
  };
}

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

async function startServer(command, issuer) {
  const port = await freePort();
  const args = [...command.slice(1), "--http", `127.0.0.1:${port}`, "--oauth-issuer", issuer, "--oauth-scope", "notes:read"];
  const child = spawn(command[0], args, { stdio: ["ignore", "ignore", "pipe"] });
  let stderr = "";
  child.stderr.on("data", (d) => {
    stderr += d;
  });
  const until = Date.now() + 15_000;
  while (Date.now() < until) {
    if (child.exitCode !== null) throw new Error(`server exited with ${child.exitCode}: ${stderr}`);
    const open = await new Promise((ok) => {
      const sock = tcpConnect(port, "127.0.0.1", () => {
        sock.destroy();
        ok(true);
      });
      sock.on("error", () => ok(false));
    });
    if (open) return { url: `http://127.0.0.1:${port}/mcp`, child };
    await new Promise((ok) => setTimeout(ok, 100));
  }
  throw new Error(`server not listening after 15 s: ${stderr}`);
}

let passed = 0;
let failed = 0;
let label = "";

async function check(name, fn) {
  try {
    const detail = await fn();
    passed += 1;
    out(`ok ${String(passed + failed).padStart(3)} [${label}] ${name}${detail ? ` (${detail})` : ""}`);
  } catch (err) {
    failed += 1;
    const why = err instanceof Error ? `${err.constructor.name}: ${err.message}` : String(err);
    out(`FAIL ${String(passed + failed).padStart(2)} [${label}] ${name}: ${why.replace(/\s+/g, " ")}`);
  }
}

function expect(cond, what, value) {
  if (!cond) throw new Error(`${what}; got ${JSON.stringify(value)?.slice(0, 400)}`);
}

const textOf = (result) => (result.content ?? []).filter((c) => c.type === "text").map((c) => c.text).join("\n");

/** The same JSON, whatever the order of object keys. */
function sameJson(a, b) {
  const canonical = (v) =>
    Array.isArray(v)
      ? v.map(canonical)
      : v && typeof v === "object"
        ? Object.fromEntries(Object.keys(v).sort().map((k) => [k, canonical(v[k])]))
        : v;
  return JSON.stringify(canonical(a)) === JSON.stringify(canonical(b));
}

// What clients report: a refused call's own errors (the 403, the authorization server's
// refusal of the scope) are expected while it runs, and close() aborting what is still under
// way is part of closing; anything else is a warning.
const state = { refusing: false };

/** A client of `clientId` asking for `scope` (v1 sends it alone; v2 starts from the 401's). */
async function connect(sdk, url, issuer, clientId, scope, errors) {
  const authProvider = new sdk.ClientCredentialsProvider({
    clientId,
    clientSecret: `${clientId}-secret`,
    expectedIssuer: issuer,
    scope,
  });
  const transport = new sdk.StreamableHTTPClientTransport(new URL(url), { authProvider });
  const client = new sdk.Client({ name: "oauth-client-check", version: "0.1.0" });
  const connection = { client, authProvider, closing: false };
  client.onerror = (err) => {
    const message = `${err?.message ?? err}`;
    if (state.refusing) return;
    // The abort may be reported after close() has returned.
    if (connection.closing && (err?.name === "AbortError" || /AbortError/.test(message))) return;
    errors.push(`client.onerror: ${message}`);
  };
  await client.connect(transport, { timeout: TIMEOUT });
  return connection;
}

async function main() {
  const opts = parseArgs(process.argv.slice(2));
  const sdk = loadSdk(opts.sdk, opts.prefix);
  out(`${sdk.name}, node ${process.version}, issuer ${opts.issuer}`);
  const server = await startServer(opts.command, opts.issuer);
  const errors = [];
  const call = (client, name, args) => client.callTool({ name, arguments: args }, undefined, { timeout: TIMEOUT });
  const title = `oauth-ts ${opts.sdk} ${Date.now()}`;

  label = `${opts.sdk} mcp-basic`;
  let basic;
  await check("connect through the 401 and the metadata it names", async () => {
    basic = await connect(sdk, server.url, opts.issuer, "mcp-basic", "notes:read notes:write", errors);
    return `token scope: ${(await basic.authProvider.tokens())?.scope}`;
  });
  if (basic) {
    await check("tools/list: add_note's _meta.securitySchemes asks for notes:write", async () => {
      const { tools } = await basic.client.listTools(undefined, { timeout: TIMEOUT });
      const add = tools.find((t) => t.name === "add_note");
      const schemes = add?._meta?.securitySchemes;
      expect(sameJson(schemes, [{ type: "oauth2", scopes: ["notes:write"] }]), "notes:write", schemes);
      return `${tools.length} tools`;
    });
    await check("list_notes", async () => {
      const result = await call(basic.client, "list_notes", {});
      expect(!result.isError, "not isError", result);
    });
    await check("add_note (notes:write)", async () => {
      const result = await call(basic.client, "add_note", { title, body: "via OAuth" });
      expect(!result.isError && result.structuredContent?.title === title, "the note", result);
      return `token scope: ${(await basic.authProvider.tokens())?.scope}`;
    });
    basic.closing = true;
    await basic.client.close();
  }

  label = `${opts.sdk} mcp-readonly`;
  let readonly;
  await check("connect with notes:read", async () => {
    readonly = await connect(sdk, server.url, opts.issuer, "mcp-readonly", "notes:read", errors);
  });
  if (readonly) {
    await check("list_notes", async () => {
      const result = await call(readonly.client, "list_notes", {});
      expect(!result.isError, "not isError", result);
    });
    await check("add_note is refused: 403, and the client cannot get notes:write", async () => {
      let result;
      state.refusing = true;
      try {
        result = await call(readonly.client, "add_note", { title: `${title} refused`, body: "no" });
      } catch (err) {
        const message = `${err?.message ?? err}`;
        expect(/403|insufficient|scope/i.test(message), "a refusal for the scope", message);
        return message.slice(0, 120);
      } finally {
        state.refusing = false;
      }
      throw new Error(`the call was answered: ${JSON.stringify(result).slice(0, 300)}`);
    });
    readonly.closing = true;
    await readonly.client.close().catch((err) => errors.push(`close: ${err?.message ?? err}`));
  }

  server.child.kill("SIGTERM");
  const unexpected = [...warnings, ...errors];
  label = opts.sdk;
  await check("no console or process warning, nor a client error, but the refused call's", async () => {
    expect(unexpected.length === 0, `${unexpected.length} warnings`, unexpected.slice(0, 3));
  });
  out(`${passed} passed, ${failed} failed`);
  process.exitCode = failed ? 1 : 0;
}

main().catch((err) => {
  out(`FAIL [${label}] ${err?.stack ?? err}`);
  out(`${passed} passed, ${failed + 1} failed`);
  process.exit(1);
});
