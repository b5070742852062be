-- wrk: tools/call of one tool in one session, each request with an id of its own (a session
-- refuses a second call under way with the same id). SESSION, TOOL and ARGUMENTS come from the
-- environment.
local session = os.getenv("SESSION")
local tool = os.getenv("TOOL") or "get_note"
local arguments = os.getenv("ARGUMENTS") or '{"id":1}'
local threads = 0

function setup(thread)
   threads = threads + 1
   thread:set("base", threads * 1000000000)
end

function init(args)
   counter = 0
   wrk.method = "POST"
   wrk.headers["Content-Type"] = "application/json"
   wrk.headers["Accept"] = "application/json, text/event-stream"
   wrk.headers["Mcp-Session-Id"] = session
   wrk.headers["MCP-Protocol-Version"] = "2025-11-25"
end

function request()
   counter = counter + 1
   local body = string.format(
      '{"jsonrpc":"2.0","id":%d,"method":"tools/call","params":{"name":"%s","arguments":%s}}',
      base + counter, tool, arguments)
   return wrk.format(nil, nil, nil, body)
end
