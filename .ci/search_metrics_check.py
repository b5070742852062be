"""A search ranked by words only is counted in the metrics, with why.

Usage: search_metrics_check.py -- <catalog-server built with `semantic` and `otel`> [args...]

Starts the server with `--catalog progressive --embedding-model $TOOLWRIGHT_EMBEDDING_MODEL
--metrics --http 127.0.0.1:<free port>`, built without vectors: it embeds its 1,000 tools on a
thread of its own, which takes seconds. Meanwhile, with the official MCP Python SDK client over
Streamable HTTP:
  1. `search_tools` answers ranked by words, saying so in a `note` ("still being embedded");
  2. the server's `/metrics` counts it: `toolwright_search_words_only_total` with
     `toolwright_search_reason="embedding"` at 1 or more;
  3. once the tools are embedded, a search has no `note`, and the count does not grow.

Prints one line per passed check and ends with "N passed, 0 failed"; exits 1 on a failure.
"""

import json
import os
import re
import sys
import time
import urllib.request

import anyio
from mcp import Client

from mcp_checks import (
    TIMEOUT, CheckFailed, Checks, reported, serving, server_command, stdio_params,
)

QUERY = "take back the money a customer paid"
COUNTER = re.compile(
    r'^toolwright_search_words_only_total\{[^}]*toolwright_search_reason="embedding"[^}]*\}\s+(\d+)',
    re.M,
)


def counted(url: str) -> int:
    """The words-only searches counted for `embedding` on the server's /metrics, 0 if none."""
    with urllib.request.urlopen(url.replace("/mcp", "/metrics"), timeout=5) as response:
        text = response.read().decode()
    found = COUNTER.search(text)
    return int(found.group(1)) if found else 0


async def search(client: Client) -> dict:
    result = await client.call_tool("search_tools", {"query": QUERY})
    return json.loads(result.content[0].text)


async def main() -> int:
    command = server_command(sys.argv[1:], __doc__)
    model = os.environ["TOOLWRIGHT_EMBEDDING_MODEL"]
    command = [*command, "--catalog", "progressive", "--embedding-model", model, "--metrics"]
    c = Checks()
    c.label = "words only"

    async def checks() -> None:
        async with serving(c, "http", command, stdio_params(command)) as url:
            async with Client(url, read_timeout_seconds=TIMEOUT) as client:
                found = await search(client)
                note = found.get("note", "")
                c.ok("still being embedded" in note,
                     "a search while the tools are embedded is ranked by words, and says so", note)
                before = counted(url)
                c.ok(before >= 1, "/metrics counts it, reason `embedding`", before)
                deadline = time.monotonic() + 120
                while "note" in found:
                    if time.monotonic() > deadline:
                        raise CheckFailed(f"[{c.label}] the tools were not embedded within 120 s")
                    await anyio.sleep(0.5)
                    found = await search(client)
                c.label = "by meaning"
                c.ok(found["tools"][0]["name"].endswith("refund"),
                     "once embedded, a search is ranked by meaning", found["tools"][0])
                after = counted(url)
                found = await search(client)
                c.ok("note" not in found and counted(url) == after,
                     "a search ranked by meaning is not counted", (counted(url), after))

    return await reported(c, checks)


if __name__ == "__main__":
    sys.exit(anyio.run(main))
