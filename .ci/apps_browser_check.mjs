// Drive the notes board MCP App end to end: notes-server over stdio, and its board view in a
// real headless Chromium, framed by a small host page (.ci/apps-host.html) as an MCP Apps host
// frames it.
//
// Usage, from the repository root:
//     npm install --prefix target/playwright playwright-core
//     node .ci/apps_browser_check.mjs target/debug/notes-server
//
// The server part: `initialize` declaring the io.modelcontextprotocol/ui extension, three notes
// added, `show_board` listed with its ui:// resource and `move_note` listed as app-only, the
// resource read (it must be the repository's board.html, as text/html;profile=mcp-app), and
// `show_board` called. The browser part: the view's handshake, the board it renders from that
// result (every title in its tag's columns), two moves made by clicking in the view (each a
// tools/call the host forwards to the server, checked on the server afterwards), the host's dark
// theme, a host that cannot pass tool calls on (a read-only board), a tool error and an empty
// notebook; and not one console error or warning, nor an uncaught exception, in any frame.
// Last, the server must exit with status 0 when its stdin closes.
//
// Prints one line per passed check and ends with "N passed, 0 failed"; on the first failure it
// prints the reason, ends with "N passed, 1 failed" and exits 1.
//
// Environment: CHROMIUM, the browser to drive (default /usr/bin/chromium).

import { spawn } from "node:child_process";
import { readFileSync } from "node:fs";
import { createServer } from "node:http";
import { createRequire } from "node:module";
import { createInterface } from "node:readline";
import { isDeepStrictEqual } from "node:util";

const repo = new URL("..", import.meta.url);
const BOARD_URI = "ui://notes/board.html";
const MIME = "text/html;profile=mcp-app";
const TIMEOUT = 30_000; // ms per server request
const WAIT = 10_000; // ms for the browser to show what a check expects

// ---- checks ---------------------------------------------------------------------------------

class CheckFailed extends Error {}
let passed = 0;
let label = "";

function ok(cond, name, detail = "") {
  if (!cond) {
    const shown = typeof detail === "string" ? detail : JSON.stringify(detail);
    throw new CheckFailed(`[${label}] ${name}: ${shown}`);
  }
  passed += 1;
  console.log(`ok ${String(passed).padStart(3)} [${label}] ${name}`);
}

// Polls `probe` until it returns something truthy, which it returns; fails `what` after WAIT.
async function waitFor(what, probe) {
  const until = Date.now() + WAIT;
  for (;;) {
    const value = await probe();
    if (value) return value;
    if (Date.now() > until) {
      throw new CheckFailed(`[${label}] ${what}: not seen in ${WAIT / 1000} s`);
    }
    await new Promise((r) => setTimeout(r, 50));
  }
}

// ---- notes-server over stdio: newline-delimited JSON-RPC ------------------------------------

class StdioServer {
  constructor(command) {
    this.proc = spawn(command[0], command.slice(1), { stdio: ["pipe", "pipe", "inherit"] });
    this.nextId = 1;
    this.pending = new Map();
    this.exited = new Promise((resolve) => {
      this.proc.on("exit", (code, signal) => {
        for (const { reject } of this.pending.values()) {
          reject(new Error(`the server exited (code ${code}, signal ${signal})`));
        }
        resolve({ code, signal });
      });
    });
    createInterface({ input: this.proc.stdout }).on("line", (line) => this.receive(line));
  }

  receive(line) {
    if (!line.trim()) return;
    const msg = JSON.parse(line);
    if (msg.method !== undefined) {
      // Notifications need no answer; a request from the server (none is expected) is refused.
      if (msg.id !== undefined) {
        this.write({ id: msg.id, error: { code: -32601, message: "not supported" } });
      }
      return;
    }
    const waiter = this.pending.get(msg.id);
    if (!waiter) return;
    this.pending.delete(msg.id);
    clearTimeout(waiter.timer);
    if (msg.error) waiter.reject(new Error(`${waiter.method}: ${JSON.stringify(msg.error)}`));
    else waiter.resolve(msg.result);
  }

  write(msg) {
    this.proc.stdin.write(JSON.stringify({ jsonrpc: "2.0", ...msg }) + "\n");
  }

  request(method, params) {
    const id = this.nextId++;
    return new Promise((resolve, reject) => {
      const timer = setTimeout(() => {
        this.pending.delete(id);
        reject(new Error(`${method}: no answer in ${TIMEOUT / 1000} s`));
      }, TIMEOUT);
      this.pending.set(id, { resolve, reject, timer, method });
      this.write({ id, method, params });
    });
  }

  notify(method, params) {
    this.write({ method, params });
  }

  callTool(name, args) {
    return this.request("tools/call", { name, arguments: args });
  }
}

// ---- the board as the server sends it --------------------------------------------------------

// The titles of a column (null: the untagged one), sorted; undefined when there is no column.
function titlesIn(board, tag) {
  const notes = tag === null ? board.untagged : board.columns.find((c) => c.tag === tag)?.notes;
  return notes?.map((n) => n.title).sort();
}

function holds(board, tag, id) {
  const notes = tag === null ? board.untagged : board.columns.find((c) => c.tag === tag)?.notes;
  return notes?.some((n) => n.id === id) ?? false;
}

// Every column, untagged last, as {tag: [titles]}; the view's columns are read the same way.
function columnsOf(board) {
  const all = board.columns.map((c) => [c.tag, titlesIn(board, c.tag)]);
  return Object.fromEntries([...all, ["(untagged)", titlesIn(board, null)]]);
}

const ADDED = [
  // Markup in a title and a body: the view must show it as text.
  {
    title: 'Quarterly <b>report</b> & "plan"',
    body: "Numbers first, then <script>plan()</script>.",
    tags: ["work"],
  },
  { title: "Fix the bike", body: "Back tyre; the chain as well.", tags: ["home", "work"] },
  { title: "Loose thought", body: "No tag on this one.", tags: [] },
];

async function serverChecks(server) {
  label = "server";
  const init = await server.request("initialize", {
    protocolVersion: "2025-11-25",
    capabilities: { extensions: { "io.modelcontextprotocol/ui": { mimeTypes: [MIME] } } },
    clientInfo: { name: "apps-browser-check", version: "1.0.0" },
  });
  ok(init.protocolVersion === "2025-11-25", "initialize declaring the MCP Apps extension", init);
  server.notify("notifications/initialized", {});

  const tools = [];
  let cursor;
  do {
    const page = await server.request("tools/list", cursor ? { cursor } : {});
    tools.push(...page.tools);
    cursor = page.nextCursor;
  } while (cursor);
  const show = tools.find((t) => t.name === "show_board");
  ok(show?._meta?.ui?.resourceUri === BOARD_URI, `tools/list: show_board opens ${BOARD_URI}`,
    show ?? "no show_board listed");
  const move = tools.find((t) => t.name === "move_note");
  const visibility = move?._meta?.ui?.visibility;
  ok(isDeepStrictEqual(visibility, ["app"]), "tools/list: move_note is app-only",
    move ?? "no move_note listed");
  // The tools whose visibility includes "app" (the default): the only ones the host lets the
  // view call.
  const appTools = tools
    .filter((t) => t._meta?.ui?.visibility?.includes("app") ?? true)
    .map((t) => t.name);

  const ids = [];
  for (const note of ADDED) {
    const added = await server.callTool("add_note", note);
    const id = added.structuredContent?.id;
    ok(!added.isError && Number.isInteger(id), `add_note "${note.title}"`, added);
    ids.push(id);
  }

  const read = await server.request("resources/read", { uri: BOARD_URI });
  const content = read.contents?.[0];
  ok(content?.uri === BOARD_URI && content?.mimeType === MIME, `resources/read: ${MIME}`, read);
  const html = readFileSync(new URL("examples/notes-tools/src/board.html", repo), "utf8");
  ok(content.text === html, "resources/read: the text of examples/notes-tools/src/board.html",
    String(content.text).slice(0, 80));

  const shown = await server.callTool("show_board", {});
  const board = shown.structuredContent;
  ok(!shown.isError && board?.total === 3, "show_board: 3 notes", shown);
  const tags = board.columns.map((c) => c.tag);
  ok(isDeepStrictEqual(tags, ["home", "work"]), "show_board: the columns home and work", tags);
  ok(isDeepStrictEqual(board.untagged.map((n) => n.id), [ids[2]]), "show_board: one untagged note",
    board.untagged);

  // A real tool error for the view to show: moving a note that does not exist.
  const failed = await server.callTool("move_note", { id: 999_999, to: "work" });
  const errorText = failed.content?.find((c) => c.type === "text")?.text ?? "";
  ok(failed.isError === true && errorText !== "", "move_note, unknown id: a tool error", failed);

  const csp = viewCsp(content._meta?.ui?.csp);
  return { appTools, ids, html, csp, shown, failed, errorText };
}

// ---- the host page, served on a random local port ------------------------------------------

// The CSP a host builds from the resource's `_meta.ui.csp`: only the declared origins, and
// with none declared the spec's restrictive default. A srcdoc frame inherits its parent's
// policy, so the view runs under it, and any violation would be a console error.
function viewCsp(declared = {}) {
  const list = (domains, none) => (domains?.length ? domains.join(" ") : none);
  const resources = list(declared.resourceDomains, "");
  return [
    "default-src 'none'",
    `script-src 'self' 'unsafe-inline' ${resources}`,
    `style-src 'self' 'unsafe-inline' ${resources}`,
    `img-src 'self' data: ${resources}`,
    `font-src 'self' ${resources}`,
    `media-src 'self' data: ${resources}`,
    `connect-src ${list(declared.connectDomains, "'none'")}`,
    `frame-src ${list(declared.frameDomains, "'none'")}`,
    "object-src 'none'",
    `base-uri ${list(declared.baseUriDomains, "'self'")}`,
  ].map((d) => d.trim()).join("; ");
}

function serveHost(csp) {
  const page = readFileSync(new URL(".ci/apps-host.html", repo));
  const headers = {
    "content-type": "text/html; charset=utf-8",
    "content-security-policy": csp,
  };
  const server = createServer((req, res) => {
    if (req.url === "/") res.writeHead(200, headers).end(page);
    else res.writeHead(404).end();
  });
  return new Promise((resolve) => server.listen(0, "127.0.0.1", () => resolve(server)));
}

// ---- the browser ----------------------------------------------------------------------------

const HOST_CONTEXT = {
  theme: "dark",
  displayMode: "inline",
  availableDisplayModes: ["inline"],
  locale: "en-GB",
  timeZone: "UTC",
  platform: "web",
};

async function browserChecks(browser, server, hostUrl, s) {
  label = "browser";
  const page = await browser.newPage();
  const problems = [];
  page.on("console", (m) => {
    if (["error", "warning", "assert"].includes(m.type())) {
      problems.push(`console ${m.type()}: ${m.text()} (${m.location().url})`);
    }
  });
  page.on("pageerror", (e) => problems.push(`page error: ${e.message}`));
  const forwarded = []; // each tools/call the host passed on: {params, answer}
  await page.exposeFunction("callServerTool", (params) => {
    const answer = server.request("tools/call", params);
    forwarded.push({ params, answer });
    return answer;
  });

  // Loads the host page afresh and frames the view with a scenario; returns the view's frame.
  const mount = async (toolResult, hostCapabilities = { serverTools: {}, logging: {} }) => {
    await page.goto(hostUrl);
    const scenario = {
      hostContext: HOST_CONTEXT,
      hostCapabilities,
      toolInput: {},
      toolResult,
      appTools: s.appTools,
    };
    await page.evaluate(([html, sc]) => window.mountView(html, sc), [s.html, scenario]);
    return page.frameLocator('iframe[title="Notes board"]');
  };
  // The messages of one method the view has sent the host since the last mount.
  const sent = async (method) =>
    (await page.evaluate(() => window.hostLog)).filter((m) => m.method === method);
  const column = (view, tag) =>
    view.locator(tag === null ? "section[data-untagged]" : `section[data-tag="${tag}"]`);
  const expectBoard = async (view, board, what) => {
    const want = columnsOf(board);
    let got;
    const same = async () => {
      got = {};
      for (const section of await view.locator("section").all()) {
        const tag = await section.getAttribute("data-tag");
        got[tag ?? "(untagged)"] = (await section.locator("article h3").allTextContents()).sort();
      }
      return isDeepStrictEqual(got, want);
    };
    await waitFor(what, same).catch(() => ok(false, what, { want, got }));
    ok(true, what);
  };

  // 1. The board from show_board.
  let view = await mount(s.shown);
  const init = await waitFor("ui/initialize", async () => (await sent("ui/initialize"))[0]);
  const p = init.params ?? {};
  ok(typeof p.protocolVersion === "string" && typeof p.appInfo?.name === "string"
    && typeof p.appInfo?.version === "string" && typeof p.appCapabilities === "object",
  "the view sends ui/initialize with protocolVersion, appInfo and appCapabilities", p);
  const initialized = "ui/notifications/initialized";
  await waitFor(initialized, async () => (await sent(initialized)).length > 0);
  const order = await page.evaluate(() => window.hostProblems);
  ok(order.length === 0, "the view sends ui/notifications/initialized once answered", order);
  const shownBoard = s.shown.structuredContent;
  await expectBoard(view, shownBoard, "every title in its columns: home, work, Untagged");
  const markup = await view.locator("article b, article script").count();
  const literal = await view.locator("article h3", { hasText: "<b>report</b>" }).count();
  ok(markup === 0 && literal === 1, "note text shown as text, never as markup",
    { markup, literal });
  const origin = await view.locator("body").evaluate(() => window.origin);
  ok(origin === "null", "the view runs sandboxed, in an opaque origin", origin);
  const background = await view.locator("body")
    .evaluate((e) => getComputedStyle(e).backgroundColor);
  const [r, g, b] = background.match(/\d+/g).map(Number);
  ok(r + g + b < 3 * 128, "the view follows the host's dark theme", background);
  // The last size the view reported must be the size it has now that the board is shown.
  const height = await view.locator("html")
    .evaluate((e) => Math.ceil(e.getBoundingClientRect().height));
  await waitFor("ui/notifications/size-changed", async () =>
    (await sent("ui/notifications/size-changed")).at(-1)?.params.height === height);
  ok(true, `the view reports its size (height ${height} px)`);

  // 2. Moves, made in the view: work -> home, then Untagged -> work.
  const moveIn = async (id, from, to) => {
    const card = column(view, from).locator(`article[data-id="${id}"]`);
    await card.locator("select").selectOption(to ?? "");
    await card.locator("button").click();
    const args = { id, ...(from !== null && { from }), ...(to !== null && { to }) };
    const call = await waitFor("tools/call move_note", async () => forwarded.find(({ params }) =>
      params.name === "move_note" && isDeepStrictEqual(params.arguments, args)));
    ok(true, `the view calls move_note ${JSON.stringify(args)} through the host`);
    // The server may answer requests in any order: ask for the board once the move is done.
    await call.answer;
    const after = (await server.callTool("show_board", {})).structuredContent;
    const [a, z] = [from ?? "Untagged", to ?? "Untagged"];
    const where = `the server moved note ${id} from ${a} to ${z}`;
    ok(holds(after, to, id) && !holds(after, from, id), where, after);
    await expectBoard(view, after, `the view shows note ${id} in ${z}, no longer in ${a}`);
  };
  await moveIn(s.ids[0], "work", "home");
  await moveIn(s.ids[2], null, "work");

  // 3. A host that cannot pass tool calls on, a tool error, an empty notebook.
  view = await mount(s.shown, {});
  await expectBoard(view, shownBoard, "a host without serverTools: the board, read-only");
  const controls = await view.locator("select, button").count();
  ok(controls === 0, "a host without serverTools: no move controls", controls);
  view = await mount(s.failed);
  await waitFor("the error text", async () =>
    (await view.locator("#status").textContent()).includes(s.errorText));
  const cards = await view.locator("article").count();
  ok(cards === 0, "a tool error: its text, and no board", s.errorText);
  const empty = { total: 0, columns: [], untagged: [] };
  const text = JSON.stringify(empty);
  view = await mount({ content: [{ type: "text", text }], structuredContent: empty });
  const emptyText = await waitFor("the empty state", () => view.locator("p.empty").textContent());
  ok(emptyText.includes("empty"), "an empty notebook: an empty state", emptyText);

  await page.close();
  ok(problems.length === 0, "no console error or warning and no page error in any frame", problems);
}

// ---- the run --------------------------------------------------------------------------------

async function main(command) {
  const server = new StdioServer(command);
  let browser = null;
  let http = null;
  try {
    const state = await serverChecks(server);

    const { chromium } = createRequire(new URL("target/playwright/", repo))("playwright-core");
    browser = await chromium.launch({
      executablePath: process.env.CHROMIUM || "/usr/bin/chromium",
      // No network and no background services: nothing but the local host page is loaded.
      args: [
        "--headless", "--no-sandbox", "--disable-gpu", "--disable-quic", "--no-first-run",
        "--disable-background-networking", "--disable-component-update", "--disable-sync",
      ],
    });
    http = await serveHost(state.csp);
    await browserChecks(browser, server, `http://127.0.0.1:${http.address().port}/`, state);
    await browser.close();
    browser = null;

    label = "server";
    server.proc.stdin.end();
    const timeout = new Promise((r) => setTimeout(() => r("no exit in 10 s"), 10_000));
    const exit = await Promise.race([server.exited, timeout]);
    ok(exit.code === 0, "exits with status 0 when its stdin closes", exit);
    console.log(`${passed} passed, 0 failed`);
    return 0;
  } catch (e) {
    console.log(`FAIL ${e instanceof CheckFailed ? e.message : `[${label}] ${e.stack || e}`}`);
    console.log(`${passed} passed, 1 failed`);
    return 1;
  } finally {
    if (browser) await browser.close().catch(() => {});
    if (http) http.close();
    if (server.proc.exitCode === null) server.proc.kill();
  }
}

const args = process.argv.slice(2);
if (args[0] === "--") args.shift();
if (args.length === 0 || args[0] === "-h" || args[0] === "--help") {
  console.log("usage: node .ci/apps_browser_check.mjs [--] <notes-server command> [args...]");
  process.exit(args.length === 0 ? 2 : 0);
}
process.exit(await main(args));
