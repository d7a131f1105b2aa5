// End-to-end checks with the official TypeScript SDK clients.
//
//   node ts_client.mjs v1                          # @modelcontextprotocol/sdk 1.x
//   node ts_client.mjs v2 legacy|auto|2026-07-28   # @modelcontextprotocol/client 2.x
//
// One session for all checks (v2 in auto mode also starts a short-lived
// sibling process for its probe). Both SDKs validate structuredContent
// against the tool's outputSchema and throw when it does not fit. Prints
// PASS/FAIL lines.

import {
  CALLS, EXPECTED, LEGACY, MODERN, Report, callProblems, cancellationProblems, describe,
  negotiatedInCapture, progressProblems, requireSdk, serverParams, sleep, textOf, toolsProblems, waitForRequest,
} from './checks.mjs';

const [sdk, mode = 'legacy'] = process.argv.slice(2);
const expectedVersion = sdk === 'v2' && mode !== 'legacy' ? MODERN : LEGACY;
const modern = expectedVersion === MODERN;
const clientInfo = { name: 'mcpserver-e2e', version: '1.0.0' };

// The two SDKs differ in package names, the callTool signature and how the
// protocol version is exposed; this adapter hides exactly that.
function connectArgs() {
  if (sdk === 'v1') {
    const { Client } = requireSdk('@modelcontextprotocol/sdk/client/index.js');
    const { StdioClientTransport } = requireSdk('@modelcontextprotocol/sdk/client/stdio.js');
    const client = new Client(clientInfo);
    return {
      client,
      transport: new StdioClientTransport({ ...serverParams(), stderr: 'inherit' }),
      callTool: (params, options) => client.callTool(params, undefined, options),
      version: () => negotiatedInCapture(),
    };
  }
  const { Client } = requireSdk('@modelcontextprotocol/client');
  const { StdioClientTransport } = requireSdk('@modelcontextprotocol/client/stdio');
  const negotiation = mode === 'legacy' ? undefined : { mode: mode === 'auto' ? 'auto' : { pin: mode } };
  const client = new Client(clientInfo, negotiation ? { versionNegotiation: negotiation } : {});
  return {
    client,
    transport: new StdioClientTransport({ ...serverParams(), stderr: 'inherit' }),
    callTool: (params, options) => client.callTool(params, options),
    version: () => client.getNegotiatedProtocolVersion(),
  };
}

async function main() {
  const report = new Report();
  const { client, transport, callTool, version } = connectArgs();
  try {
    await client.connect(transport);
  } catch (e) {
    report.fail('connect', describe(e));
    return 1;
  }
  try {
    await report.check('connect', () => {
      const got = version();
      return got === expectedVersion ? [] : [`negotiated ${got}, expected ${expectedVersion}`];
    });
    await report.check('server-info', () => {
      const info = client.getServerVersion() ?? {};
      const got = { name: info.name, version: info.version, instructions: client.getInstructions() };
      return Object.entries(EXPECTED.server).filter(([k, v]) => got[k] !== v).map(([k, v]) => `${k} is ${JSON.stringify(got[k])}, expected ${JSON.stringify(v)}`);
    });
    await report.check('tools-list', async () => toolsProblems(await client.listTools(), modern));

    const call = (name, key = name) => async () =>
      callProblems(key, await callTool({ name, arguments: CALLS[key].arguments ?? {} }), modern);
    await report.check('call-text', call('echo'));
    await report.check('call-typed-arguments', call('typed'));
    await report.check('call-invalid-arguments', call('typed', 'typed_invalid'));
    await report.check('call-structured-object', call('stats'));
    await report.check('call-structured-array', call('squares'));
    await report.check('call-content-types', call('everything'));
    await report.check('call-r-error', call('fail'));
    await report.check('call-stdout-noise', call('noisy'));
    await report.check('call-unknown-tool', async () => {
      try {
        const result = await callTool({ name: 'no_such_tool', arguments: {} });
        return [`a result instead of error -32602: ${JSON.stringify(result)}`];
      } catch (e) {
        return e.code === -32602 ? [] : [`error ${describe(e)} (code ${e.code}), expected code -32602`];
      }
    });
    await report.check('progress', async () => {
      const events = [];
      let done = false;
      const onprogress = (p) => events.push({ ...p, afterResult: done });
      const result = await callTool({ name: 'progress', arguments: CALLS.progress.arguments }, { onprogress });
      done = true;
      await sleep(200); // let a late notification show up as such
      return progressProblems(events, result);
    });
    await cancellation(report, client, callTool);
  } catch (e) {
    report.fail('session', describe(e));
  } finally {
    await client.close();
  }
  return report.failed ? 1 : 0;
}

// Cancel the 30-second tool: no result for it; the next call runs at once.
async function cancellation(report, client, callTool) {
  const abort = new AbortController();
  const slow = callTool({ name: 'slow', arguments: {} }, { signal: abort.signal }).then(
    (result) => ({ result }),
    (error) => ({ error }),
  );
  const requestId = await waitForRequest('slow');
  await sleep(500); // R is inside Sys.sleep() by now
  // While R runs a tool, the server's own threads still answer: ping
  // (keepalives) before 2026-07-28, where ping no longer exists tools/list.
  await report.check('answers-while-busy', async () => {
    await (modern ? client.listTools(undefined, { cacheMode: 'bypass', timeout: 3000 }) : client.ping({ timeout: 3000 }));
    return [];
  });
  abort.abort('e2e cancel'); // the SDK sends notifications/cancelled
  const outcome = await slow;

  await report.check('cancel-next-call', async () => {
    if (outcome.result) return [`the cancelled call returned ${JSON.stringify(textOf(outcome.result))}`];
    const start = Date.now();
    const result = await callTool({ name: 'echo', arguments: CALLS.echo.arguments }, { timeout: 10000 });
    const seconds = (Date.now() - start) / 1000;
    const problems = callProblems('echo', result, modern);
    if (seconds > 5) problems.push(`the next call took ${seconds.toFixed(1)}s: the R code was not interrupted`);
    return problems;
  });
  await sleep(200);
  await report.check('cancel-no-response', () => cancellationProblems(requestId));
}

process.exitCode = await main();
