// End-to-end checks with the official TypeScript SDK clients.
//
//   node ts_client.mjs v1                          # @modelcontextprotocol/sdk 1.x
//   node ts_client.mjs v2 legacy|auto|2026-07-28   # @modelcontextprotocol/client 2.x
//
// One session for all checks (v2 in auto mode also starts a short-lived
// sibling process for its probe). Both SDKs validate structuredContent
// against the tool's outputSchema and throw when it does not fit. Both
// answer elicitation through a registered `elicitation/create` handler (v2
// also for 2026-07-28 input_required rounds). Tasks: v1 through its
// experimental 2025-11-25 API (client.experimental.tasks); v2 has none, so
// its task checks are skipped. Prints PASS/FAIL/SKIP lines.

import {
  CALLS, EXPECTED, LEGACY, MODERN, Report, TASK_CHECKS, User, callProblems, cancellationProblems, captured, describe,
  elicitationProblems, negotiatedInCapture, progressProblems, requireSdk, serverParams, sleep, taskResultProblems,
  taskWireProblems, textOf, toolsProblems, waitForRequest, wireMark,
} from './checks.mjs';

const [sdk, mode = 'legacy'] = process.argv.slice(2);
const expectedVersion = sdk === 'v2' && mode !== 'legacy' ? MODERN : LEGACY;
const modern = expectedVersion === MODERN;
const clientInfo = { name: 'mcpserver-e2e', version: '1.0.0' };
const capabilities = { elicitation: {} };
const NO_TASKS =
  '@modelcontextprotocol/client 2.4.0 has no tasks API: callTool never sends params.task, and a 2026-07-28 ' +
  'resultType "task" is rejected as UnsupportedResultType (no io.modelcontextprotocol/tasks extension ships)';

// The two SDKs differ in package names, the callTool signature and how the
// protocol version is exposed; this adapter hides exactly that.
function connectArgs(user) {
  if (sdk === 'v1') {
    const { Client } = requireSdk('@modelcontextprotocol/sdk/client/index.js');
    const { StdioClientTransport } = requireSdk('@modelcontextprotocol/sdk/client/stdio.js');
    const { ElicitRequestSchema } = requireSdk('@modelcontextprotocol/sdk/types.js');
    const client = new Client(clientInfo, { capabilities });
    client.setRequestHandler(ElicitRequestSchema, async (request) => user.answer(request.params));
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
  const client = new Client(clientInfo, { capabilities, ...(negotiation && { versionNegotiation: negotiation }) });
  client.setRequestHandler('elicitation/create', async (request) => user.answer(request.params));
  return {
    client,
    transport: new StdioClientTransport({ ...serverParams(), stderr: 'inherit' }),
    callTool: (params, options) => client.callTool(params, options),
    version: () => client.getNegotiatedProtocolVersion(),
  };
}

async function main() {
  const report = new Report();
  const user = new User();
  const { client, transport, callTool, version } = connectArgs(user);
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
    await report.check('elicit-accept', () => elicit(callTool, user, 'accept'));
    await report.check('elicit-decline', () => elicit(callTool, user, 'decline'));
    await report.check('task-direct', async () =>
      taskResultProblems('background', await callTool({ name: 'background', arguments: CALLS.background.arguments })));
    await report.check('task-required-refused', () => taskRequiredRefused(callTool));
    if (sdk === 'v1') {
      await report.check('task-call', () => taskCall(client));
      await report.check('task-required', () => taskRequired(client));
      await report.check('task-elicit', () => taskElicit(client, user));
      await report.check('task-cancel', () => taskCancel(client, callTool));
    } else {
      report.skip(TASK_CHECKS, NO_TASKS);
    }
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

// greet asks for a name: the handler answers the server's elicitation/create
// request, or (v2 on 2026-07-28) the input_required round callTool drives.
async function elicit(callTool, user, action) {
  user.action = action;
  const before = user.asked.length;
  const since = wireMark();
  const result = await callTool({ name: 'greet', arguments: {} });
  return elicitationProblems(user, before, result, action, since, modern);
}

// A tool that runs only as a task, called without one: an error, -32601 from
// a 2025-11-25 server and -32021 (missing client capability) from a
// 2026-07-28 one. SDK v1 refuses the call itself, before sending it, once
// tools/list has said the tool needs a task.
async function taskRequiredRefused(callTool) {
  const want = modern ? -32021 : -32601;
  const since = wireMark();
  try {
    const result = await callTool({ name: 'task_only', arguments: {} });
    return [`a result instead of error ${want}: ${JSON.stringify(result)}`];
  } catch (e) {
    const sent = captured(since).some(([d, m]) => d === 'c2s' && m.method === 'tools/call');
    if (!sent) return /task/i.test(e.message) ? [] : [`refused before sending, but not for the task: ${describe(e)}`];
    return e.code === want ? [] : [`error ${describe(e)} (code ${e.code}), expected code ${want}`];
  }
}

// SDK v1: calls `name` as a task (callToolStream: tools/call with params.task,
// then tasks/get polls, then tasks/result) and collects what the stream yields.
async function runTask(client, name, args) {
  const out = { statuses: [] };
  const stream = client.experimental.tasks.callToolStream({ name, arguments: args }, undefined, { task: { ttl: 60000 } });
  for await (const message of stream) {
    if (message.type === 'taskCreated') {
      out.taskId = message.task.taskId;
      out.statuses.push(message.task.status);
    } else if (message.type === 'taskStatus') out.statuses.push(message.task.status);
    else if (message.type === 'result') out.result = message.result;
    else if (message.type === 'error') out.error = message.error;
  }
  return out;
}

function runProblems(name, run) {
  const problems = run.statuses[0] === 'working' ? [] : [`the task was created ${run.statuses[0]}, expected working`];
  if (run.error || !run.result) return [...problems, `the task went ${run.statuses.join(' -> ')}: ${describe(run.error)}`];
  const related = run.result._meta?.['io.modelcontextprotocol/related-task']?.taskId;
  if (related !== run.taskId) problems.push(`tasks/result carries related-task ${related}, expected ${run.taskId}`);
  return [...problems, ...taskResultProblems(name, run.result)];
}

// background as a task: created at once, polled, its result fetched, and
// listed by tasks/list.
async function taskCall(client) {
  const since = wireMark();
  const run = await runTask(client, 'background', CALLS.background.arguments);
  const problems = runProblems('background', run);
  const listed = await client.experimental.tasks.listTasks();
  const found = listed.tasks.find((t) => t.taskId === run.taskId);
  if (found?.status !== 'completed') {
    problems.push(`tasks/list shows ${JSON.stringify(listed.tasks.map((t) => [t.taskId, t.status]))}, expected ${run.taskId} completed`);
  }
  return [...problems, ...taskWireProblems(since, 'background')];
}

// task_only, which runs only as a task, runs as one.
const taskRequired = async (client) => runProblems('task_only', await runTask(client, 'task_only', {}));

// greet as a task: its question reaches the handler, tied to the task, and
// the task completes with the answer.
async function taskElicit(client, user) {
  user.action = 'accept';
  const before = user.asked.length;
  const since = wireMark();
  const run = await runTask(client, 'greet', {});
  const problems = run.result ? [] : runProblems('greet', run);
  return [...problems, ...elicitationProblems(user, before, run.result, 'accept', since, false, run.taskId)];
}

// A 30-second task is cancelled: tasks/cancel says cancelled, the stream ends
// with the cancellation, tasks/result has no result, and the next call runs
// at once.
async function taskCancel(client, callTool) {
  const tasks = client.experimental.tasks;
  const stream = tasks.callToolStream({ name: 'background', arguments: CALLS.background.cancel_arguments }, undefined, {
    task: { ttl: 60000 },
  });
  const first = await stream.next(); // the stream waits here until asked for more
  if (first.value?.type !== 'taskCreated') return [`the stream began with ${JSON.stringify(first.value)}`];
  const taskId = first.value.task.taskId;
  await sleep(500); // R is inside Sys.sleep() by now
  const cancelled = await tasks.cancelTask(taskId);
  const problems = cancelled.status === 'cancelled' ? [] : [`tasks/cancel answered ${cancelled.status}`];
  const rest = [];
  for await (const message of stream) rest.push(message);
  const last = rest.at(-1);
  if (last?.type !== 'error' || !/cancelled/.test(last.error?.message)) {
    problems.push(`the stream ended with ${JSON.stringify(last)}, expected the cancellation`);
  }
  try {
    const result = await tasks.getTaskResult(taskId);
    problems.push(`tasks/result of the cancelled task answered ${JSON.stringify(result)}`);
  } catch {
    // no result, as it should be
  }
  const start = Date.now();
  problems.push(...callProblems('echo', await callTool({ name: 'echo', arguments: CALLS.echo.arguments }, { timeout: 10000 }), modern));
  const seconds = (Date.now() - start) / 1000;
  if (seconds > 5) problems.push(`the next call took ${seconds.toFixed(1)}s: the task's R code was not interrupted`);
  return problems;
}

process.exitCode = await main();
