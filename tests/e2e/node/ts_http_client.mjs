// End-to-end checks of Streamable HTTP with the TypeScript SDK clients
// (StreamableHTTPClientTransport).
//
//   node ts_http_client.mjs v1                          # @modelcontextprotocol/sdk 1.x
//   node ts_http_client.mjs v2 legacy|auto|2026-07-28   # @modelcontextprotocol/client 2.x
//
// Starts tests/e2e/server.R serving HTTP on a free port (E2E_TRANSPORT=http),
// reads the URL it prints on stderr and connects by URL, through
// http_capture.py when E2E_LOG_DIR is set (run.sh then checks the recorded
// messages with validate_wire.py). The SDK validates
// every result against its revision's zod schemas (and structuredContent
// against the tool's outputSchema). Prints PASS/FAIL lines.

import { spawn } from 'node:child_process';
import { dirname, join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { CALLS, EXPECTED, LEGACY, MODERN, Report, describe, requireSdk, textOf } from './checks.mjs';

const [sdk = 'v1', mode = 'legacy'] = process.argv.slice(2);
const expectedVersion = sdk === 'v2' && mode !== 'legacy' ? MODERN : LEGACY;

const E2E = join(dirname(fileURLToPath(import.meta.url)), '..');

function startServer() {
  const rscript = process.env.E2E_RSCRIPT || 'Rscript';
  const proc = spawn(rscript, [join(E2E, 'server.R')], {
    env: { ...process.env, E2E_TRANSPORT: 'http' },
    stdio: ['ignore', 'ignore', 'pipe'],
  });
  return new Promise((resolve, reject) => {
    let said = '';
    const timer = setTimeout(() => reject(new Error(`no URL from the server: ${said}`)), 30000);
    proc.stderr.on('data', (chunk) => {
      said += chunk.toString();
      const found = said.match(/http:\/\/\S+/);
      if (found) {
        clearTimeout(timer);
        resolve({ proc, url: found[0] });
      }
    });
    proc.on('exit', () => reject(new Error(`the server exited: ${said}`)));
  });
}

// The two SDKs differ in package names, the callTool signature and how the
// negotiated version is exposed; this hides exactly that.
function connectArgs(url) {
  const clientInfo = { name: 'mcpserver-e2e-http', version: '1.0.0' };
  const capabilities = { elicitation: {} };
  const accept = async () => ({ action: 'accept', content: CALLS.greet.answer });
  if (sdk === 'v1') {
    const { Client } = requireSdk('@modelcontextprotocol/sdk/client/index.js');
    const { StreamableHTTPClientTransport } = requireSdk('@modelcontextprotocol/sdk/client/streamableHttp.js');
    const { ElicitRequestSchema } = requireSdk('@modelcontextprotocol/sdk/types.js');
    const client = new Client(clientInfo, { capabilities });
    client.setRequestHandler(ElicitRequestSchema, accept);
    const transport = new StreamableHTTPClientTransport(new URL(url));
    return { client, transport, callTool: (p, o) => client.callTool(p, undefined, o), version: () => transport.protocolVersion };
  }
  const { Client, StreamableHTTPClientTransport } = requireSdk('@modelcontextprotocol/client');
  const negotiation = mode === 'legacy' ? undefined : { mode: mode === 'auto' ? 'auto' : { pin: mode } };
  const client = new Client(clientInfo, { capabilities, ...(negotiation && { versionNegotiation: negotiation }) });
  client.setRequestHandler('elicitation/create', accept);
  const transport = new StreamableHTTPClientTransport(new URL(url));
  return { client, transport, callTool: (p, o) => client.callTool(p, o), version: () => client.getNegotiatedProtocolVersion() };
}

// The recording proxy in front of `url`, or none.
function capture(url) {
  const logDir = process.env.E2E_LOG_DIR;
  if (!logDir) return Promise.resolve({ url });
  const proxy = spawn(process.env.E2E_PYTHON || 'python3', [join(E2E, 'http_capture.py'), logDir, url], {
    stdio: ['ignore', 'pipe', 'inherit'],
  });
  return new Promise((resolve, reject) => {
    let said = '';
    proxy.stdout.on('data', (chunk) => {
      said += chunk.toString();
      const line = said.split('\n')[0];
      if (said.includes('\n')) resolve({ proxy, url: line.trim() });
    });
    proxy.on('exit', () => reject(new Error('the capture proxy exited')));
  });
}

const report = new Report();
let server;
let proxy;
try {
  server = await startServer();
  const captured = await capture(server.url);
  proxy = captured.proxy;
  const { client, transport, callTool, version } = connectArgs(captured.url);
  await client.connect(transport);
  await report.check('http-connect', async () => {
    const problems = [];
    const modern = expectedVersion === MODERN;
    if (!modern && !transport.sessionId) problems.push('no session id');
    if (modern && transport.sessionId) problems.push('a session id in 2026-07-28');
    if (client.getServerVersion()?.name !== 'e2e-fixture') problems.push('unexpected server info');
    const got = version();
    if (got && got !== expectedVersion) problems.push(`negotiated ${got}, expected ${expectedVersion}`);
    return problems;
  });
  await report.check('http-tools-list', async () => {
    const names = (await client.listTools()).tools.map((t) => t.name);
    return JSON.stringify(names) === JSON.stringify(EXPECTED.tools) ? [] : [`tools are ${names}`];
  });
  await report.check('http-call-text', async () => {
    const text = textOf(await callTool({ name: 'echo', arguments: CALLS.echo.arguments }));
    return text === CALLS.echo.text ? [] : [`text is ${JSON.stringify(text)}`];
  });
  await report.check('http-call-structured', async () => {
    const result = await callTool({ name: 'stats', arguments: CALLS.stats.arguments });
    return result.structuredContent ? [] : ['no structuredContent'];
  });
  await report.check('http-progress', async () => {
    const seen = [];
    const result = await callTool(
      { name: 'progress', arguments: CALLS.progress.arguments },
      { onprogress: (p) => seen.push(p.progress) },
    );
    const problems = textOf(result) === CALLS.progress.text ? [] : [`text is ${textOf(result)}`];
    if (seen.length < CALLS.progress.min_notifications) problems.push(`${seen.length} progress callbacks`);
    return problems;
  });
  await report.check('http-elicitation', async () => {
    const text = textOf(await callTool({ name: 'greet', arguments: {} }));
    return text === CALLS.greet.text_accept ? [] : [`greeting is ${JSON.stringify(text)}`];
  });
  if (transport.sessionId) {
    await report.check('http-session-end', async () => {
      await transport.terminateSession();
      return transport.sessionId ? ['the session id is still set'] : [];
    });
  }
  await client.close();
} catch (e) {
  report.fail('http-session', describe(e));
} finally {
  proxy?.kill();
  server?.proc.kill();
}
process.exit(report.failed ? 1 : 0);
