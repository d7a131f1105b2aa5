// End-to-end checks of Streamable HTTP with the TypeScript SDK 1.x client
// (StreamableHTTPClientTransport).
//
//   node ts_http_client.mjs
//
// Starts tests/e2e/server.R serving HTTP on a free port (E2E_TRANSPORT=http),
// reads the URL it prints on stderr and connects by URL. The SDK validates
// every result against its revision's zod schemas (and structuredContent
// against the tool's outputSchema). Prints PASS/FAIL lines.

import { spawn } from 'node:child_process';
import { dirname, join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { CALLS, EXPECTED, LEGACY, Report, describe, requireSdk, textOf } from './checks.mjs';

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

const report = new Report();
const { Client } = requireSdk('@modelcontextprotocol/sdk/client/index.js');
const { StreamableHTTPClientTransport } = requireSdk('@modelcontextprotocol/sdk/client/streamableHttp.js');
const { ElicitRequestSchema } = requireSdk('@modelcontextprotocol/sdk/types.js');

let server;
try {
  server = await startServer();
  const client = new Client({ name: 'mcpserver-e2e-http', version: '1.0.0' }, { capabilities: { elicitation: {} } });
  client.setRequestHandler(ElicitRequestSchema, async () => ({ action: 'accept', content: CALLS.greet.answer }));
  const transport = new StreamableHTTPClientTransport(new URL(server.url));
  await client.connect(transport);
  await report.check('http-connect', async () => {
    const problems = [];
    if (!transport.sessionId) problems.push('no session id');
    if (client.getServerVersion()?.name !== 'e2e-fixture') problems.push('unexpected server info');
    if (transport.protocolVersion && transport.protocolVersion !== LEGACY) problems.push(`version ${transport.protocolVersion}`);
    return problems;
  });
  await report.check('http-tools-list', async () => {
    const names = (await client.listTools()).tools.map((t) => t.name);
    return JSON.stringify(names) === JSON.stringify(EXPECTED.tools) ? [] : [`tools are ${names}`];
  });
  await report.check('http-call-text', async () => {
    const text = textOf(await client.callTool({ name: 'echo', arguments: CALLS.echo.arguments }));
    return text === CALLS.echo.text ? [] : [`text is ${JSON.stringify(text)}`];
  });
  await report.check('http-call-structured', async () => {
    const result = await client.callTool({ name: 'stats', arguments: CALLS.stats.arguments });
    return result.structuredContent ? [] : ['no structuredContent'];
  });
  await report.check('http-progress', async () => {
    const seen = [];
    const result = await client.callTool(
      { name: 'progress', arguments: CALLS.progress.arguments },
      undefined,
      { onprogress: (p) => seen.push(p.progress) },
    );
    const problems = textOf(result) === CALLS.progress.text ? [] : [`text is ${textOf(result)}`];
    if (seen.length < CALLS.progress.min_notifications) problems.push(`${seen.length} progress callbacks`);
    return problems;
  });
  await report.check('http-elicitation', async () => {
    const text = textOf(await client.callTool({ name: 'greet', arguments: {} }));
    return text === CALLS.greet.text_accept ? [] : [`greeting is ${JSON.stringify(text)}`];
  });
  await report.check('http-session-end', async () => {
    await transport.terminateSession();
    return transport.sessionId ? ['the session id is still set'] : [];
  });
  await client.close();
} catch (e) {
  report.fail('http-session', describe(e));
} finally {
  server?.proc.kill();
}
process.exit(report.failed ? 1 : 0);
