#!/usr/bin/env python3
"""Checks the real-server evaluation set in this folder: tools.json and queries.json.

    python3 eval/catalog/real/check.py [--verbose]

Verifies the JSON shape of both files, that every relevant name exists, that every
paraphrase obeys the paraphrase rule of README.md, and the counts per style and per
server. Prints the counts table and exits non-zero on any failure. Also reports, for
information, the paraphrases that share a distinctive word with a relevant tool's
description or title (a word found in at most DISTINCTIVE_DF tools' descriptions).
"""
import json
import re
import sys
from collections import Counter
from pathlib import Path

HERE = Path(__file__).resolve().parent
STYLES = ("keyword", "paraphrase")
MIN_PARAPHRASE = 200
MIN_KEYWORD = 100
MAX_SHARE = 0.20  # no server may have more than this share of the queries
MAX_RELEVANT = 3
DISTINCTIVE_DF = 10
TOOL_KEYS = {"name", "title", "description", "inputSchema", "outputSchema", "annotations", "execution", "_meta", "icons"}

STOPWORDS = set("""
the and for with from into onto that this these those what which who whom whose when where why how
are was were been being has have had does did doing done can could should would will shall may might must
you your yours our ours his her its their them they she him not but all any each every some more most
other than then there here out off over under again once only own same just also very too about above
below after before between both few nor now such via per let lets get got use used using make made
one two three new old want need like please show give tell know see look find run set put take add
out into onto upon within without while still yet back way
""".split())

failures = []


def fail(msg):
    failures.append(msg)


def name_words(name):
    """Words of a tool name: split on _ - . and camelCase, lowercase, 3+ letters."""
    words = []
    for piece in re.split(r"[_\-.]+", name):
        for w in re.findall(r"[A-Z]+(?![a-z])|[A-Z]?[a-z0-9]+", piece):
            w = w.lower()
            if len(w) >= 3:
                words.append(w)
    return words


def text_words(text):
    """Whole words of a lowercased text (any non-alphanumeric character separates words)."""
    return [w for w in re.split(r"[^a-z0-9]+", text.lower()) if w]


def load(path):
    try:
        return json.loads(path.read_text(encoding="utf-8"))
    except Exception as e:  # noqa: BLE001
        print(f"FAIL {path.name}: {e}")
        sys.exit(1)


def main():
    verbose = "--verbose" in sys.argv
    tools_doc = load(HERE / "tools.json")
    queries_doc = load(HERE / "queries.json")

    # tools.json shape
    if set(tools_doc) != {"servers"} or not isinstance(tools_doc["servers"], list):
        fail('tools.json must be {"servers": [...]}')
        tools_doc = {"servers": []}
    tools = {}  # "<server>/<name>" -> tool
    server_of = {}
    servers = []
    untyped = []
    for s in tools_doc["servers"]:
        if set(s) != {"server", "version", "tools"}:
            fail(f"server entry keys {sorted(s)} != server, version, tools")
            continue
        if not isinstance(s["server"], str) or not s["server"]:
            fail("server name must be a non-empty string")
            continue
        if not re.fullmatch(r"\d+\.\d+\.\d+([-+].*)?", str(s["version"])):
            fail(f"{s['server']}: version {s['version']!r} is not x.y.z")
        if s["server"] in servers:
            fail(f"server {s['server']} listed twice")
        servers.append(s["server"])
        if not isinstance(s["tools"], list) or not s["tools"]:
            fail(f"{s['server']}: tools must be a non-empty list")
            continue
        for t in s["tools"]:
            name = t.get("name")
            if not isinstance(name, str) or not re.fullmatch(r"[A-Za-z0-9_.-]{1,64}", name):
                fail(f"{s['server']}: bad tool name {name!r}")
                continue
            if "tags" in t:
                fail(f"{s['server']}/{name}: has tags")
            extra = set(t) - TOOL_KEYS
            if extra:
                fail(f"{s['server']}/{name}: unexpected keys {sorted(extra)}")
            if not isinstance(t.get("description"), str) or not t["description"].strip():
                fail(f"{s['server']}/{name}: no description")
            schema = t.get("inputSchema")
            if not isinstance(schema, dict):
                fail(f"{s['server']}/{name}: inputSchema is not a JSON object")
            elif schema.get("type") != "object":
                # kept as served (some servers publish a schema without "type"); reported below
                untyped.append(f"{s['server']}/{name}")
            if "annotations" in t and not isinstance(t["annotations"], dict):
                fail(f"{s['server']}/{name}: annotations is not an object")
            key = f"{s['server']}/{name}"
            if key in tools:
                fail(f"{key}: duplicate tool in one server")
            tools[key] = t
            server_of[key] = s["server"]

    # document frequency of description/title words, for the distinctive-word report
    df = Counter()
    for t in tools.values():
        df.update(set(text_words(t.get("description", "") + " " + t.get("title", ""))))

    # queries.json shape
    if set(queries_doc) != {"queries"} or not isinstance(queries_doc["queries"], list):
        fail('queries.json must be {"queries": [...]}')
        queries_doc = {"queries": []}
    per_server = {s: Counter() for s in servers}
    per_style = Counter()
    seen = set()
    referenced = set()
    overlaps = []
    naming_service = 0
    for i, q in enumerate(queries_doc["queries"]):
        where = f"query {i} {q.get('query')!r}"
        if set(q) != {"query", "style", "relevant"}:
            fail(f"{where}: keys {sorted(q)} != query, style, relevant")
            continue
        text, style, relevant = q["query"], q["style"], q["relevant"]
        if not isinstance(text, str) or not text.strip() or text != text.strip():
            fail(f"{where}: empty or untrimmed query")
            continue
        if text.lower() in seen:
            fail(f"{where}: duplicate query")
        seen.add(text.lower())
        if style not in STYLES:
            fail(f"{where}: style {style!r}")
            continue
        if (not isinstance(relevant, list) or not 1 <= len(relevant) <= MAX_RELEVANT
                or len(set(relevant)) != len(relevant)):
            fail(f"{where}: relevant must list 1 to {MAX_RELEVANT} distinct names")
            continue
        missing = [r for r in relevant if r not in tools]
        if missing:
            fail(f"{where}: unknown relevant {missing}")
            continue
        referenced.update(relevant)
        per_style[style] += 1
        per_server[server_of[relevant[0]]][style] += 1
        if style == "paraphrase":
            qwords = set(text_words(text))
            for r in relevant:
                bad = [w for w in name_words(tools[r]["name"]) if w in qwords]
                if bad:
                    fail(f"{where}: paraphrase uses {bad} from the name of {r}")
            own = set()
            for r in relevant:
                t = tools[r]
                own |= set(text_words(t.get("description", "") + " " + t.get("title", "")))
            shared = sorted(w for w in qwords & own
                            if len(w) >= 3 and w not in STOPWORDS and df[w] <= DISTINCTIVE_DF)
            if shared:
                overlaps.append((text, shared))
            service_words = set()
            for r in relevant:
                service_words |= {w for w in text_words(server_of[r]) if len(w) >= 3} - {
                    "mcp", "server", "modelcontextprotocol", "dev", "developer", "search"}
            if qwords & service_words:
                naming_service += 1

    total = sum(per_style.values())
    if per_style["paraphrase"] < MIN_PARAPHRASE:
        fail(f"only {per_style['paraphrase']} paraphrases (< {MIN_PARAPHRASE})")
    if per_style["keyword"] < MIN_KEYWORD:
        fail(f"only {per_style['keyword']} keyword queries (< {MIN_KEYWORD})")
    for s, c in per_server.items():
        n = sum(c.values())
        if n == 0 or c["keyword"] == 0 or c["paraphrase"] == 0:
            fail(f"{s}: needs at least one keyword and one paraphrase query (has {dict(c)})")
        if total and n / total > MAX_SHARE:
            fail(f"{s}: {n} of {total} queries ({n / total:.0%} > {MAX_SHARE:.0%})")

    # report
    tools_per_server = Counter(server_of.values())
    print("| Server | Tools | Keyword | Paraphrase |")
    print("|---|---:|---:|---:|")
    for s in servers:
        print(f"| `{s}` | {tools_per_server[s]} | {per_server[s]['keyword']} | {per_server[s]['paraphrase']} |")
    print(f"| **Total** | **{len(tools)}** | **{per_style['keyword']}** | **{per_style['paraphrase']}** |")
    print()
    print(f"{len(servers)} servers, {len(tools)} tools, {total} queries "
          f"({per_style['keyword']} keyword, {per_style['paraphrase']} paraphrase)")
    print(f"tools referenced by some query: {len(referenced)} of {len(tools)}")
    print(f"largest server share: {max((sum(c.values()) for c in per_server.values()), default=0) / max(total, 1):.1%}")
    multi = sum(1 for q in queries_doc["queries"] if len(q.get("relevant", [])) > 1)
    cross = sum(1 for q in queries_doc["queries"]
                if len({server_of.get(r) for r in q.get("relevant", [])}) > 1)
    print(f"queries with several relevant tools: {multi} (across servers: {cross})")
    if untyped:
        print(f"tools whose served inputSchema has no \"type\": \"object\" (kept as served): "
              f"{len(untyped)}: {', '.join(untyped)}")
    print(f"paraphrases naming the service (e.g. 'on Heroku'): {naming_service}")
    print(f"paraphrases sharing a distinctive description word (df <= {DISTINCTIVE_DF}): "
          f"{len(overlaps)} of {per_style['paraphrase']}")
    if verbose:
        for text, shared in overlaps:
            print(f"  {text!r}: {shared}")
    if failures:
        print()
        for f in failures:
            print("FAIL", f)
        print(f"\n{len(failures)} failure(s)")
        sys.exit(1)
    print("\nOK: all checks passed")


if __name__ == "__main__":
    main()
