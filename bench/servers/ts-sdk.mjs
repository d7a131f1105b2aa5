// The benchmark's TypeScript peer: the official SDK's McpServer over
// StdioServerTransport, serving the same tools. Plain JavaScript (ES module)
// so that no compile step sits between the SDK and the measurement.
import { McpServer } from "@modelcontextprotocol/sdk/server/mcp.js";
import { StdioServerTransport } from "@modelcontextprotocol/sdk/server/stdio.js";
import { z } from "zod";

const server = new McpServer({ name: "bench-ts-sdk", version: "1.0.0" });

server.registerTool(
  "add",
  { description: "Add two numbers", inputSchema: { x: z.number(), y: z.number() } },
  async ({ x, y }) => ({ content: [{ type: "text", text: String(x + y) }] }),
);

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

await server.connect(new StdioServerTransport());
