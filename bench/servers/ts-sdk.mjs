// The benchmark's TypeScript peer: the official SDK's McpServer over
// StdioServerTransport, serving the same tools. Plain JavaScript (ES module)
// so that no compile step sits between the SDK and the measurement. With
// `--http PORT` it serves Streamable HTTP on 127.0.0.1:PORT/mcp instead
// (bench/driver/http_bench.py).
import { randomUUID } from "node:crypto";
import { createServer } from "node:http";
import { McpServer } from "@modelcontextprotocol/sdk/server/mcp.js";
import { StdioServerTransport } from "@modelcontextprotocol/sdk/server/stdio.js";
import { StreamableHTTPServerTransport } from "@modelcontextprotocol/sdk/server/streamableHttp.js";
import { isInitializeRequest } from "@modelcontextprotocol/sdk/types.js";
import { z } from "zod";

// Same values as the R peers; built on the first call and kept, so start-up
// does not pay for it and the timed calls measure serialisation only.
let table = null;
function makeTable(n = 100000) {
  const rows = new Array(n);
  for (let i = 1; i <= n; i++) {
    rows[i - 1] = {
      id: i, x1: i / 3, x2: i / 7, x3: Math.sqrt(i), x4: i * 0.001,
      x5: (i % 97) / 97, x6: i * 1.5, x7: 1 / i, x8: Math.log(i),
      label: `row-${i}`,
    };
  }
  return rows;
}

// One McpServer per client: the SDK binds a server to one transport, so
// over HTTP each session gets its own (the SDK's documented pattern).
function makeServer() {
  const server = new McpServer({ name: "bench-ts-sdk", version: "1.0.0" });

  server.registerTool(
    "add",
    { description: "Add two numbers", inputSchema: { x: z.number(), y: z.number() } },
    async ({ x, y }) => ({ content: [{ type: "text", text: String(x + y) }] }),
  );

  // The SDK requires an object output schema, so the rows go under "result",
  // the same shape the R and Python peers send. The SDK validates
  // structuredContent against the schema; the text copy is the tool's job.
  const row = z.object({
    id: z.number().int(), x1: z.number(), x2: z.number(), x3: z.number(), x4: z.number(),
    x5: z.number(), x6: z.number(), x7: z.number(), x8: z.number(), label: z.string(),
  });
  server.registerTool(
    "big_table",
    { description: "A 100,000-row table", outputSchema: { result: z.array(row) } },
    async () => {
      table ??= makeTable();
      const out = { result: table };
      return { content: [{ type: "text", text: JSON.stringify(out) }], structuredContent: out };
    },
  );

  // The same table without an output schema: structured content unchecked.
  server.registerTool(
    "big_table_open",
    { description: "The same table, no output schema" },
    async () => {
      table ??= makeTable();
      const out = { result: table };
      return { content: [{ type: "text", text: JSON.stringify(out) }], structuredContent: out };
    },
  );

  // Big arguments, each answered with the count it was sent.
  const counter = (name, item) => server.registerTool(
    name,
    { description: `Count ${name}`, inputSchema: { values: z.array(item) } },
    async ({ values }) => ({ content: [{ type: "text", text: String(values.length) }] }),
  );
  counter("count_numbers", z.number());
  counter("count_strings", z.string());
  counter("count_objects", z.object({ x: z.number() }));

  // The SDK runs handlers on the event loop, so a tool that computes (here: a
  // blocking sleep, like R's Sys.sleep) holds up everything else...
  server.registerTool(
    "slow",
    { description: "Block for a number of seconds", inputSchema: { seconds: z.number() } },
    async ({ seconds }) => {
      Atomics.wait(new Int32Array(new SharedArrayBuffer(4)), 0, 0, seconds * 1000);
      return { content: [{ type: "text", text: "done" }] };
    },
  );

  // ...while one that awaits a timer (I/O-style waiting) does not.
  server.registerTool(
    "slow_async",
    { description: "Wait for a number of seconds", inputSchema: { seconds: z.number() } },
    async ({ seconds }) => {
      await new Promise((resolve) => setTimeout(resolve, seconds * 1000));
      return { content: [{ type: "text", text: "done" }] };
    },
  );

  return server;
}

// Streamable HTTP with sessions and plain JSON answers, on Node's own http
// module (no framework in between). A request without a session id must be
// `initialize`; it gets a new transport and server.
async function serveHttp(port) {
  const sessions = new Map();
  const readBody = async (req) => {
    const chunks = [];
    for await (const chunk of req) chunks.push(chunk);
    return chunks.length ? JSON.parse(Buffer.concat(chunks).toString("utf8")) : undefined;
  };
  const refuse = (res, status, message) => {
    res.writeHead(status, { "Content-Type": "application/json" });
    res.end(JSON.stringify({ jsonrpc: "2.0", id: null, error: { code: -32000, message } }));
  };
  const http = createServer(async (req, res) => {
    try {
      if (!req.url.startsWith("/mcp")) return refuse(res, 404, "not found");
      const body = req.method === "POST" ? await readBody(req) : undefined;
      const id = req.headers["mcp-session-id"];
      let transport = id ? sessions.get(id) : undefined;
      if (!transport) {
        if (id || req.method !== "POST" || !isInitializeRequest(body)) {
          return refuse(res, id ? 404 : 400, id ? "unknown session" : "no session");
        }
        transport = new StreamableHTTPServerTransport({
          sessionIdGenerator: () => randomUUID(),
          enableJsonResponse: true,
          onsessioninitialized: (sid) => sessions.set(sid, transport),
        });
        transport.onclose = () => transport.sessionId && sessions.delete(transport.sessionId);
        await makeServer().connect(transport);
      }
      await transport.handleRequest(req, res, body);
    } catch (err) {
      if (!res.headersSent) refuse(res, 500, String(err));
    }
  });
  http.listen(port, "127.0.0.1");
}

const args = process.argv.slice(2);
if (args.length === 2 && args[0] === "--http") {
  await serveHttp(Number(args[1]));
} else {
  await makeServer().connect(new StdioServerTransport());
}
