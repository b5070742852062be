"""Vectors built with the binary rank every query of the evaluation as embedding at start does.

Usage: vectors_check.py AT_START BUILT

AT_START and BUILT are `catalog-server` built with the `semantic` feature, the first without a
model for its build (it embeds its 1,000 tools at start), the second with one (its tools'
vectors are in the binary). Each is started on stdio with `--catalog progressive
--embedding-model $TOOLWRIGHT_EMBEDDING_MODEL` and driven by the official MCP Python SDK client:
  1. BUILT ranks its first `search_tools` by meaning (no `note`), with no wait;
  2. AT_START is searched until it ranks by meaning too (its tools embedded);
  3. every query of the evaluation's two sets (`eval/catalog/queries.json` and
     `eval/catalog/real/queries.json`, 727 queries) is searched on both, asking for every hit:
     the answers are the same JSON: the same tools in the same order, each marked alike (and
     the same refusal for the few queries longer than `search_tools` takes).

Prints one line per passed check and ends with "N passed, 0 failed"; exits 1 on a failure.
"""

import json
import os
import sys
import time

import anyio
from mcp import Client

from mcp_checks import TIMEOUT, CheckFailed, Checks, reported, stdio_params

SETS = ("eval/catalog/queries.json", "eval/catalog/real/queries.json")


def queries() -> list[str]:
    found = []
    for path in SETS:
        with open(path) as file:
            found += [query["query"] for query in json.load(file)["queries"]]
    return found


async def search(client: Client, query: str) -> dict:
    """The answer's JSON; for a query `search_tools` refuses (more words than it takes), the
    refusal's text, which both must give alike."""
    result = await client.call_tool("search_tools", {"query": query, "limit": 50})
    if result.is_error:
        return {"refused": result.content[0].text}
    return json.loads(result.content[0].text)


async def main() -> int:
    if len(sys.argv) != 3:
        print(__doc__, file=sys.stderr)
        return 2
    at_start, built = sys.argv[1:]
    model = os.environ["TOOLWRIGHT_EMBEDDING_MODEL"]
    args = ["--catalog", "progressive", "--embedding-model", model]
    every = queries()
    c = Checks()

    async def checks() -> None:
        answers = {}
        for label, binary in (("built", built), ("at start", at_start)):
            c.label = label
            async with Client(stdio_params([binary, *args]), read_timeout_seconds=TIMEOUT) as client:
                found = await search(client, every[0])
                if binary == built:
                    c.ok("note" not in found,
                         "the first search is ranked by meaning, with no wait", found.get("note"))
                else:
                    deadline = time.monotonic() + 180
                    while "note" in found:
                        if time.monotonic() > deadline:
                            raise CheckFailed("the tools were not embedded within 180 s")
                        await anyio.sleep(0.5)
                        found = await search(client, every[0])
                    c.ok(True, "ranks by meaning once its tools are embedded")
                answers[label] = [await search(client, query) for query in every]
                ranked = [answer for answer in answers[label] if "refused" not in answer]
                hits = sum(len(answer["tools"]) for answer in ranked)
                c.ok(all("note" not in answer for answer in ranked),
                     f"{len(ranked)} queries ranked by meaning, {hits} hits; "
                     f"{len(every) - len(ranked)} refused as too long")
        c.label = "alike"
        differ = [
            (query, built["tools"][:3], start["tools"][:3])
            for query, built, start in zip(every, answers["built"], answers["at start"])
            if built != start
        ]
        c.ok(not differ, f"all {len(every)} answers are the same JSON", differ[:3])

    return await reported(c, checks)


if __name__ == "__main__":
    sys.exit(anyio.run(main))
