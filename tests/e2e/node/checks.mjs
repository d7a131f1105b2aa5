// What the TypeScript drivers share: the fixture's expected answers, the
// command a client starts, helpers over the capture log, and the PASS/FAIL
// report. The same checks as tests/e2e/python/checks.py, on wire-shaped
// results (the SDKs hand results over as the JSON the server sent).

import { readFileSync, readdirSync, mkdtempSync, existsSync } from 'node:fs';
import { createRequire } from 'node:module';
import { tmpdir } from 'node:os';
import { dirname, join, resolve } from 'node:path';
import { fileURLToPath } from 'node:url';

const E2E = resolve(dirname(fileURLToPath(import.meta.url)), '..');
export const EXPECTED = JSON.parse(readFileSync(join(E2E, 'expected.json'), 'utf8'));
export const CALLS = EXPECTED.calls;
export const LEGACY = '2025-11-25';
export const MODERN = '2026-07-28';
const LOG_DIR = process.env.E2E_LOG_DIR || mkdtempSync(join(tmpdir(), 'e2e-wire-'));

// The SDKs live in .cache/clients/node (tools/node-clients.sh), not next to
// this file, so resolve them from there.
const CLIENTS = process.env.E2E_NODE_CLIENTS || join(E2E, '..', '..', '.cache', 'clients', 'node');
export const requireSdk = createRequire(join(CLIENTS, 'package.json'));

// The command a client is configured with: capture.py in front of
// `Rscript server.R`, with only the environment the server needs (the SDKs
// add a minimal PATH/HOME set, as for any user's server).
export function serverParams() {
  const rscript = process.env.E2E_RSCRIPT || 'Rscript';
  const server = process.env.E2E_SERVER || join(E2E, 'server.R');
  const env = {};
  for (const key of ['R_LIBS', 'MCPSERVER_TRACE']) if (process.env[key]) env[key] = process.env[key];
  return {
    command: process.env.E2E_PYTHON || 'python3',
    args: [join(E2E, 'capture.py'), LOG_DIR, '--', rscript, server],
    env,
  };
}

// Prints "PASS name" or "FAIL name: why" per check, as run.sh counts them.
export class Report {
  failed = 0;
  fail(name, why) {
    this.failed += 1;
    console.log(`FAIL ${name}: ${why}`);
  }
  // fn returns (or resolves to) a list of problems; throwing is a problem too.
  async check(name, fn) {
    let problems;
    try {
      problems = await fn();
    } catch (e) {
      problems = [describe(e)];
    }
    if (problems.length) this.fail(name, problems.join('; '));
    else console.log(`PASS ${name}`);
  }
  // Checks this client cannot run: counted as skipped, with the reason.
  skip(names, why) {
    for (const name of names) console.log(`SKIP ${name}: ${why}`);
  }
}

export function describe(e) {
  return `${e?.name ?? 'Error'}: ${e?.message ?? e}`.replace(/\s+/g, ' ').slice(0, 400);
}

// Results ------------------------------------------------------------------

export const textOf = (result) =>
  (result.content ?? []).filter((b) => b.type === 'text').map((b) => b.text).join('\n');

const show = (x) => JSON.stringify(x);

// Where `actual` lacks or changes something `expected` has (extra fields are fine).
export function missing(expected, actual, where = 'result') {
  if (Array.isArray(expected)) {
    if (!Array.isArray(actual) || actual.length !== expected.length) {
      return [`${where} is ${show(actual)}, expected ${show(expected)}`];
    }
    return expected.flatMap((v, i) => missing(v, actual[i], `${where}[${i}]`));
  }
  if (expected !== null && typeof expected === 'object') {
    if (actual === null || typeof actual !== 'object') return [`${where} is ${show(actual)}, expected an object`];
    return Object.entries(expected).flatMap(([k, v]) => missing(v, actual[k], `${where}.${k}`));
  }
  return expected === actual ? [] : [`${where} is ${show(actual)}, expected ${show(expected)}`];
}

export function toolsProblems(listed, modern) {
  const names = listed.tools.map((t) => t.name);
  if (show(names) !== show(EXPECTED.tools)) return [`tools are ${show(names)}, expected ${show(EXPECTED.tools)}`];
  const tools = Object.fromEntries(listed.tools.map((t) => [t.name, t]));
  const array = { type: 'array', items: { type: 'number' } };
  return [
    ...missing(
      {
        numbers: array,
        count: { type: 'integer' },
        flag: { type: 'boolean' },
        unit: { enum: ['cm', 'in'] },
        options: { type: 'object', properties: { label: { type: 'string' }, scale: { type: 'number' } } },
      },
      tools.typed.inputSchema.properties,
      'typed.inputSchema.properties',
    ),
    ...missing(
      { type: 'object', properties: { mean: { type: 'number' }, n: { type: 'integer' } } },
      tools.stats.outputSchema,
      'stats.outputSchema',
    ),
    // Array-rooted output schemas exist only from 2026-07-28; before, the
    // server wraps them in an object with one `result` property.
    ...missing(modern ? array : { type: 'object', properties: { result: array } }, tools.squares.outputSchema, 'squares.outputSchema'),
    ...missing({ type: 'object', properties: {} }, tools.fail.inputSchema, 'fail.inputSchema'),
  ];
}

export function callProblems(name, result, modern) {
  const spec = CALLS[name];
  const text = textOf(result);
  if (name === 'typed_invalid' || name === 'fail') {
    const problems = result.isError === true ? [] : [`isError is ${result.isError}, expected true`];
    const wanted = spec.error_mentions ?? [spec.error_text];
    return [...problems, ...wanted.filter((w) => !text.includes(w)).map((w) => `error text ${show(text)} does not mention ${show(w)}`)];
  }
  const problems = result.isError ? [`isError is true: ${show(text)}`] : [];
  if ('text' in spec && text !== spec.text) problems.push(`text is ${show(text)}, expected ${show(spec.text)}`);
  if (name === 'stats') {
    problems.push(...missing(spec.structured, result.structuredContent, 'structuredContent'));
    problems.push(...missing(spec.structured, JSON.parse(text), 'text copy of structuredContent'));
  }
  if (name === 'squares') {
    problems.push(...missing(modern ? spec.structured_modern : spec.structured_legacy, result.structuredContent, 'structuredContent'));
    problems.push(...missing(spec.structured_modern, JSON.parse(text), 'text copy of the array'));
  }
  if (name === 'everything') problems.push(...missing(spec.content, result.content, 'content'));
  return problems;
}

// events: {progress, total, message, afterResult} per callback.
export function progressProblems(events, result) {
  const spec = CALLS.progress;
  const problems = [];
  if (events.length < spec.min_notifications) {
    const hint = result ? ` (tool said: ${show(textOf(result))})` : '';
    problems.push(`${events.length} progress callbacks, expected at least ${spec.min_notifications}${hint}`);
  }
  const values = events.map((e) => e.progress);
  if (values.some((v, i) => i > 0 && v <= values[i - 1])) problems.push(`progress values do not increase: ${show(values)}`);
  if (events.some((e) => e.total !== spec.arguments.steps)) {
    problems.push(`totals are ${show(events.map((e) => e.total))}, expected ${spec.arguments.steps}`);
  }
  if (events.some((e) => e.afterResult)) problems.push('a progress callback came after the result');
  if (result && textOf(result) !== spec.text) problems.push(`result text is ${show(textOf(result))}, expected ${show(spec.text)}`);
  return problems;
}

// The capture log -----------------------------------------------------------

const captureFiles = () => (existsSync(LOG_DIR) ? readdirSync(LOG_DIR).filter((f) => /^conn-.*\.jsonl$/.test(f)).sort() : []);
const captureLines = (file) => readFileSync(join(LOG_DIR, file), 'utf8').split('\n').filter((raw) => raw.trim());

// Where each capture file ends now: pass to captured() for what came after.
export const wireMark = () => Object.fromEntries(captureFiles().map((f) => [f, captureLines(f).length]));

// [direction, message] for every line captured so far, all server processes
// (only those after the wireMark() `since`, if given).
export function captured(since = {}) {
  const out = [];
  for (const file of captureFiles()) {
    for (const raw of captureLines(file).slice(since[file] ?? 0)) {
      const entry = JSON.parse(raw);
      try {
        out.push([entry.dir, JSON.parse(entry.line)]);
      } catch {
        // not JSON: validate_wire.py reports it
      }
    }
  }
  return out;
}

// The protocol version the initialize handshake settled on (for clients
// that do not expose it).
export function negotiatedInCapture() {
  const msgs = captured();
  const init = msgs.find(([d, m]) => d === 'c2s' && m.method === 'initialize');
  const answer = init && msgs.find(([d, m]) => d === 's2c' && m.id === init[1].id && m.result);
  return answer?.[1].result.protocolVersion;
}

export function requestIdOf(tool) {
  const ids = captured()
    .filter(([d, m]) => d === 'c2s' && m.method === 'tools/call' && m.params?.name === tool)
    .map(([, m]) => m.id);
  return ids.at(-1);
}

export const sleep = (ms) => new Promise((r) => setTimeout(r, ms));

export async function waitForRequest(tool, timeoutMs = 15000) {
  const deadline = Date.now() + timeoutMs;
  while (Date.now() < deadline) {
    const id = requestIdOf(tool);
    if (id !== undefined) return id;
    await sleep(50);
  }
  throw new Error(`the server never received the ${tool} call`);
}

// The capture shows a cancellation of `id` and no response to it.
export function cancellationProblems(id) {
  const msgs = captured();
  const cancels = msgs.filter(([d, m]) => d === 'c2s' && m.method === 'notifications/cancelled' && m.params?.requestId === id);
  if (!cancels.length) return [`the client sent no notifications/cancelled for request ${id}`];
  return msgs
    .filter(([d, m]) => d === 's2c' && !m.method && m.id === id)
    .map(([, m]) => `the server still answered the cancelled request: ${show(m).slice(0, 200)}`);
}

// Asking the user (elicitation) ---------------------------------------------

export const GREET = CALLS.greet;
// The checks of tasks, for clients that cannot make them to skip by name.
export const TASK_CHECKS = ['task-call', 'task-required', 'task-elicit', 'task-cancel'];

// The person at the client: answers each elicitation request with the
// planned action (and GREET's answer when accepting), and records what was
// asked (the request's params, as sent).
export class User {
  action = 'accept';
  asked = [];
  answer(params) {
    this.asked.push(params);
    return this.action === 'accept' ? { action: 'accept', content: GREET.answer } : { action: this.action };
  }
}

// The greet tool asked once, got `action` back and said so; and the wire
// shows the revision's way of asking: an `elicitation/create` request of the
// server's before 2026-07-28 (and in a task), an `input_required` result
// and a retry carrying the answer and the echoed state on 2026-07-28.
export function elicitationProblems(user, askedBefore, result, action, since, modern, taskId) {
  const problems = [];
  const asked = user.asked.slice(askedBefore);
  if (asked.length !== 1) problems.push(`the user was asked ${asked.length} times, expected once`);
  for (const params of asked.slice(0, 1)) {
    if (params.message !== GREET.message) problems.push(`the question was ${show(params.message)}, expected ${show(GREET.message)}`);
    if (params.requestedSchema?.properties?.name?.type !== 'string') {
      problems.push(`requestedSchema is ${show(params.requestedSchema)}, expected a string \`name\``);
    }
    if (taskId !== undefined) {
      const related = params._meta?.['io.modelcontextprotocol/related-task']?.taskId;
      if (related !== taskId) problems.push(`the question's related-task is ${show(related)}, expected ${show(taskId)}`);
    }
  }
  if (result) {
    const want = action === 'accept' ? GREET.text_accept : GREET.text_decline;
    if (result.isError) problems.push(`isError is true: ${show(textOf(result))}`);
    else if (textOf(result) !== want) problems.push(`text is ${show(textOf(result))}, expected ${show(want)}`);
  }
  return [...problems, ...elicitationWireProblems(since, action, modern && taskId === undefined)];
}

function elicitationWireProblems(since, action, retried) {
  const msgs = captured(since);
  const asks = msgs.filter(([d, m]) => d === 's2c' && m.method === 'elicitation/create' && 'id' in m).map(([, m]) => m);
  const rounds = msgs
    .filter(([d, m]) => d === 's2c' && 'id' in m && m.result?.resultType === 'input_required')
    .map(([, m]) => m.result);
  if (!retried) {
    if (asks.length !== 1 || rounds.length) {
      return [`expected one elicitation/create request and no input_required result, saw ${asks.length} and ${rounds.length}`];
    }
    const answers = msgs.filter(([d, m]) => d === 'c2s' && !m.method && m.id === asks[0].id).map(([, m]) => m);
    return answers[0]?.result?.action === action ? [] : [`the client answered the elicitation/create with ${show(answers).slice(0, 200)}`];
  }
  if (asks.length || rounds.length !== 1) {
    return [`expected one input_required result and no elicitation/create request, saw ${rounds.length} and ${asks.length}`];
  }
  const keys = Object.keys(rounds[0].inputRequests ?? {}).sort();
  const retries = msgs
    .filter(([d, m]) => d === 'c2s' && m.method === 'tools/call' && m.params?.requestState !== undefined)
    .map(([, m]) => m.params);
  if (retries.length !== 1) return [`expected one retry with requestState, saw ${retries.length}`];
  const problems = retries[0].requestState === rounds[0].requestState ? [] : ['the retry did not echo requestState byte for byte'];
  const responses = retries[0].inputResponses ?? {};
  if (show(Object.keys(responses).sort()) !== show(keys)) {
    problems.push(`the retry answers ${show(Object.keys(responses))}, the server asked ${show(keys)}`);
  } else if (Object.values(responses).some((r) => r.action !== action)) {
    problems.push(`the retry carries ${show(responses).slice(0, 200)}, expected action ${show(action)}`);
  }
  return problems;
}

// Tasks ----------------------------------------------------------------------

// The final result of a task of the fixture tool `name` (background or task_only).
export function taskResultProblems(name, result) {
  const spec = CALLS[name];
  const problems = result.isError ? [`isError is true: ${show(textOf(result))}`] : [];
  if (spec.structured) problems.push(...missing(spec.structured, result.structuredContent, 'structuredContent'));
  if (spec.text !== undefined && textOf(result) !== spec.text) problems.push(`text is ${show(textOf(result))}, expected ${show(spec.text)}`);
  return problems;
}

// The task-augmented call of `tool` went out with `params.task`, was answered
// with a task handle, and tasks/get was polled.
export function taskWireProblems(since, tool) {
  const msgs = captured(since);
  const calls = msgs.filter(([d, m]) => d === 'c2s' && m.method === 'tools/call' && m.params?.name === tool).map(([, m]) => m);
  if (calls.length !== 1 || !calls[0].params.task) {
    return [`expected one tools/call of ${tool} with params.task, saw ${show(calls.map((c) => c.params))}`];
  }
  const answer = msgs.find(([d, m]) => d === 's2c' && m.id === calls[0].id && !m.method);
  if (!answer?.[1].result?.task) return [`the call was not answered with a task: ${show(answer?.[1]).slice(0, 200)}`];
  return msgs.some(([d, m]) => d === 'c2s' && m.method === 'tasks/get') ? [] : ['the client never polled tasks/get'];
}
