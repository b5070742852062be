"""FastMCP's proxy mounting a server, as the gateway benchmark compares it with
toolwright-gateway: the server at the command given is mounted under the namespace `bench`,
through one client connected once and reused for every request (FastMCP's documented way to
keep a backend session, its fastest), and served over stdio.

    python proxy.py SERVER_COMMAND [ARG ...]
"""

import asyncio
import sys

from fastmcp import Client, FastMCP
from fastmcp.client.transports import StdioTransport
from fastmcp.server import create_proxy


async def main() -> None:
    backend = Client(StdioTransport(command=sys.argv[1], args=sys.argv[2:]))
    async with backend:
        gateway = FastMCP("fastmcp-proxy")
        gateway.mount(create_proxy(backend), namespace="bench")
        await gateway.run_async(transport="stdio", show_banner=False)


if __name__ == "__main__":
    asyncio.run(main())
