// A real host for MCP Apps: headless Chromium (Debian's, driven by
// playwright-core; no browser is downloaded) loads the test host page
// (host.js: the official host-side bridge of @modelcontextprotocol/ext-apps
// and the official TypeScript client), which connects to the example
// server inst/examples/apps/server.R over Streamable HTTP, calls its tools
// and mounts their apps in sandboxed frames, as the specification says a
// web host does. Checks that the plotly chart and the DT table rendered
// (their DOM, and a screenshot that is not blank), that the table's own
// "Next" button called a tool of the server, that the app worked under
// the specification's CSP without reaching the network, and that every
// message between the app and the host fits the extension's schema.
//
//   node browser.mjs legacy|2026-07-28
//
// Plotly charts load plotly.js's strict build from plotly's CDN (R/app.R);
// the test machine has no network, so requests for it are answered with
// the copy of E2E_PLOTLY_STRICT (tools/plotly-strict.sh), as the CDN would,
// and any other request leaving the machine fails the test.
//
// The server is reached through http_capture.py, recording to E2E_LOG_DIR
// (run.sh validates the record against the MCP wire schema). Screenshots
// go to E2E_SCREENSHOTS (default .cache/e2e/apps-browser-<mode>); their
// paths are printed as "screenshot: <path>". Prints PASS/FAIL lines.

import { spawn } from 'node:child_process';
import { mkdirSync, mkdtempSync, readFileSync, readdirSync, rmSync } from 'node:fs';
import { createServer } from 'node:http';
import { tmpdir } from 'node:os';
import { dirname, join, relative, resolve } from 'node:path';
import { fileURLToPath } from 'node:url';
import { Report, describe, requireSdk } from '../node/checks.mjs';

const mode = process.argv[2] || 'legacy';
const HERE = dirname(fileURLToPath(import.meta.url));
const ROOT = resolve(HERE, '..', '..', '..');
const EXAMPLE = process.env.E2E_APPS_EXAMPLE || join(ROOT, 'inst', 'examples', 'apps', 'server.R');
const CHROMIUM = process.env.E2E_CHROMIUM || '/usr/bin/chromium';
const SHOTS = resolve(process.env.E2E_SCREENSHOTS || join(ROOT, '.cache', 'e2e', `apps-browser-${mode}`));
const FLAGS = [
  '--headless', '--no-sandbox', '--disable-gpu', '--disable-quic', '--no-first-run',
  '--disable-background-networking', '--disable-component-update', '--disable-sync',
];
const SCHEMA = JSON.parse(readFileSync(join(ROOT, 'tests', 'testthat', 'schemas', 'ext-apps', 'schema.json'), 'utf8'));

const PLOTLY_STRICT = process.env.E2E_PLOTLY_STRICT;
const PLOTLY_VERSION = process.env.E2E_PLOTLY_VERSION;

const report = new Report();
const children = [];
const cdn = []; // the requests answered as plotly's CDN
const problems = []; // errors, CSP refusals and outside requests seen in the browser

function waitForLine(proc, stream, pattern, what, ms = 60000) {
  return new Promise((resolveLine, reject) => {
    let said = '';
    const timer = setTimeout(() => reject(new Error(`${what} said nothing useful in ${ms} ms: ${said.slice(-400)}`)), ms);
    proc[stream].on('data', (chunk) => {
      said += chunk.toString();
      const found = said.match(pattern);
      if (found) {
        clearTimeout(timer);
        resolveLine(found[0]);
      }
    });
    proc.on('exit', (code) => reject(new Error(`${what} exited (${code}): ${said.slice(-400)}`)));
  });
}

async function startServer() {
  const proc = spawn(process.env.E2E_RSCRIPT || 'Rscript', [join(HERE, 'serve.R'), EXAMPLE], {
    stdio: ['ignore', 'ignore', 'pipe'],
  });
  children.push(proc);
  const url = await waitForLine(proc, 'stderr', /http:\/\/\S+/, 'the example server');
  if (!process.env.E2E_LOG_DIR) return url;
  const python = process.env.E2E_PYTHON || 'python3';
  const proxy = spawn(python, [join(HERE, '..', 'http_capture.py'), process.env.E2E_LOG_DIR, url], {
    stdio: ['ignore', 'pipe', 'inherit'],
  });
  children.push(proxy);
  return (await waitForLine(proxy, 'stdout', /http:\/\/\S+/, 'the recording proxy')).trim();
}

// The CSP a host builds from a resource's _meta.ui.csp (the specification's
// "Host Behavior" and "Content Security Policy Enforcement"), or its
// restrictive default when there is none.
function contentSecurityPolicy(csp) {
  if (!csp) {
    return "default-src 'none'; script-src 'self' 'unsafe-inline'; style-src 'self' 'unsafe-inline'; " +
      "img-src 'self' data:; media-src 'self' data:; connect-src 'none'";
  }
  const list = (origins) => (origins || []).join(' ');
  const resources = list(csp.resourceDomains);
  return [
    "default-src 'none'",
    `script-src 'self' 'unsafe-inline' ${resources}`,
    `style-src 'self' 'unsafe-inline' ${resources}`,
    `connect-src 'self' ${list(csp.connectDomains)}`,
    `img-src 'self' data: ${resources}`,
    `font-src 'self' ${resources}`,
    `media-src 'self' data: ${resources}`,
    `frame-src ${list(csp.frameDomains) || "'none'"}`,
    "object-src 'none'",
    `base-uri ${list(csp.baseUriDomains) || "'self'"}`,
  ].join('; ');
}

// Serves the host page (on 127.0.0.1) and the sandbox proxy (the same
// server, reached as localhost: another origin).
async function startPages(bundle) {
  const files = {
    '/host.html': [readFileSync(join(HERE, 'host.html')), 'text/html'],
    '/host.bundle.js': [bundle, 'text/javascript'],
    '/sandbox.html': [readFileSync(join(HERE, 'sandbox.html')), 'text/html'],
  };
  const server = createServer((request, response) => {
    const url = new URL(request.url, 'http://localhost');
    const file = files[url.pathname];
    if (!file) {
      response.writeHead(404).end();
      return;
    }
    const headers = { 'Content-Type': `${file[1]}; charset=utf-8`, 'Cache-Control': 'no-store' };
    if (url.pathname === '/sandbox.html') {
      const csp = url.searchParams.get('csp');
      headers['Content-Security-Policy'] = contentSecurityPolicy(csp ? JSON.parse(csp) : undefined);
    }
    response.writeHead(200, headers).end(file[0]);
  });
  await new Promise((done) => server.listen(0, '127.0.0.1', done));
  return server;
}

async function bundleHost() {
  const esbuild = requireSdk('esbuild');
  const built = await esbuild.build({
    entryPoints: [join(HERE, 'host.js')],
    bundle: true, format: 'esm', platform: 'browser', target: 'chrome120', write: false,
    nodePaths: [join(dirname(requireSdk.resolve('esbuild/package.json')), '..')],
    logLevel: 'silent',
  });
  return Buffer.from(built.outputFiles[0].contents);
}

// The frames of the app: the sandbox proxy, and the app inside it.
const appFrame = (page) => page.frameLocator('#app').frameLocator('iframe');

// Decodes a PNG in the browser and counts its colours and inked pixels.
async function imageStats(page, png) {
  return page.evaluate(async (data) => {
    const img = new Image();
    img.src = `data:image/png;base64,${data}`;
    await img.decode();
    const canvas = document.createElement('canvas');
    canvas.width = img.width;
    canvas.height = img.height;
    const context = canvas.getContext('2d');
    context.drawImage(img, 0, 0);
    const pixels = context.getImageData(0, 0, img.width, img.height).data;
    const colours = new Set();
    let inked = 0;
    for (let i = 0; i < pixels.length; i += 4) {
      colours.add((pixels[i] << 16) | (pixels[i + 1] << 8) | pixels[i + 2]);
      if (pixels[i] < 235 || pixels[i + 1] < 235 || pixels[i + 2] < 235) inked += 1;
    }
    return { width: img.width, height: img.height, colours: colours.size, inked: inked / (pixels.length / 4) };
  }, png.toString('base64'));
}

async function screenshot(page, blank, name) {
  const path = join(SHOTS, `${name}.png`);
  const png = await page.locator('#app').screenshot({ path });
  const stats = await imageStats(blank, png);
  console.log(`screenshot: ${relative(ROOT, path)} (${stats.width}x${stats.height}, ${stats.colours} colours, ${(stats.inked * 100).toFixed(1)}% inked)`);
  const found = [];
  if (stats.width < 300 || stats.height < 150) found.push(`the app is ${stats.width}x${stats.height} pixels`);
  if (stats.colours < 16) found.push(`only ${stats.colours} colours: blank`);
  if (stats.inked < 0.01) found.push(`only ${(stats.inked * 100).toFixed(2)}% of the pixels are inked: blank`);
  return found;
}

// Every message between the app and the host, checked against the
// extension's schema: its own methods by their definitions, and the
// answers to them; MCP's methods (tools/call, ping) by their shape here
// (the server's side of them is checked against the MCP schema by run.sh).
const DEFINITIONS = {
  'ui/initialize': 'McpUiInitializeRequest',
  'ui/notifications/initialized': 'McpUiInitializedNotification',
  'ui/notifications/size-changed': 'McpUiSizeChangedNotification',
  'ui/notifications/sandbox-proxy-ready': 'McpUiSandboxProxyReadyNotification',
  'ui/notifications/sandbox-resource-ready': 'McpUiSandboxResourceReadyNotification',
  'ui/notifications/tool-input': 'McpUiToolInputNotification',
  'ui/notifications/tool-result': 'McpUiToolResultNotification',
  'ui/notifications/host-context-changed': 'McpUiHostContextChangedNotification',
  'ui/resource-teardown': 'McpUiResourceTeardownRequest',
  'ui/message': 'McpUiMessageRequest',
  'ui/open-link': 'McpUiOpenLinkRequest',
};
const ANSWERS = { 'ui/initialize': 'McpUiInitializeResult', 'ui/resource-teardown': 'McpUiResourceTeardownResult' };

function messageProblems(messages) {
  const Ajv2020 = requireSdk('ajv/dist/2020').default;
  const ajv = new Ajv2020({ strict: false, allErrors: true });
  requireSdk('ajv-formats').default(ajv);
  const validators = {};
  const validate = (name, value) => {
    // Each definition is a schema of its own (with its own $schema and $defs).
    validators[name] ??= ajv.compile(SCHEMA.$defs[name]);
    return validators[name](value) ? [] : [`${name} rejects ${JSON.stringify(value).slice(0, 300)}: ${ajv.errorsText(validators[name].errors)}`];
  };
  const asked = {};
  const found = [];
  const seen = new Set();
  for (const { app, from, message } of messages) {
    if (message?.jsonrpc !== '2.0') {
      found.push(`${from} sent a message that is not JSON-RPC 2.0: ${JSON.stringify(message).slice(0, 200)}`);
      continue;
    }
    if (message.method) {
      seen.add(`${from}:${message.method}`);
      if (message.id !== undefined) asked[`${app}:${from}:${message.id}`] = message.method;
      const name = DEFINITIONS[message.method];
      const body = { method: message.method, ...(message.params !== undefined && { params: message.params }) };
      if (name) found.push(...validate(name, body));
      else if (!['tools/call', 'ping', 'resources/read', 'notifications/message'].includes(message.method)) {
        found.push(`${from} sent ${message.method}, which is not a method of the extension`);
      }
    } else {
      const other = from === 'app' ? 'host' : 'app';
      const method = asked[`${app}:${other}:${message.id}`];
      if (!method) found.push(`${from} answered ${message.id}, which was never asked`);
      else if (message.error) found.push(`${from} refused ${method}: ${JSON.stringify(message.error)}`);
      else if (ANSWERS[method]) found.push(...validate(ANSWERS[method], message.result));
    }
  }
  for (const needed of ['app:ui/initialize', 'app:ui/notifications/initialized', 'app:ui/notifications/size-changed',
    'host:ui/notifications/tool-input', 'host:ui/notifications/tool-result']) {
    if (!seen.has(needed)) found.push(`no ${needed.replace(':', ' ')}`);
  }
  return found;
}

// The calls the server answered, from the proxy's record.
function recordedCalls() {
  const dir = process.env.E2E_LOG_DIR;
  if (!dir) return null;
  const calls = [];
  for (const file of readdirSync(dir)) {
    for (const line of readFileSync(join(dir, file), 'utf8').split('\n').filter(Boolean)) {
      const entry = JSON.parse(line);
      let message;
      try {
        message = JSON.parse(entry.line);
      } catch {
        continue;
      }
      if (entry.dir === 'c2s' && message.method === 'tools/call') calls.push(message.params);
    }
  }
  return calls;
}

async function main() {
  const { chromium } = requireSdk('playwright-core');
  mkdirSync(SHOTS, { recursive: true });
  const url = await startServer();
  const pages = await startPages(await bundleHost());
  const port = pages.address().port;
  const profile = mkdtempSync(join(tmpdir(), 'mcpserver-chromium-'));
  const context = await chromium.launchPersistentContext(profile, {
    executablePath: CHROMIUM, headless: true, args: FLAGS, viewport: { width: 900, height: 1400 },
  });
  try {
    await context.route('https://cdn.plot.ly/**', async (route) => {
      const url = route.request().url();
      cdn.push(url);
      if (PLOTLY_STRICT && url === `https://cdn.plot.ly/plotly-strict-${PLOTLY_VERSION}.min.js`) {
        await route.fulfill({ status: 200, contentType: 'text/javascript', body: readFileSync(PLOTLY_STRICT) });
      } else {
        problems.push(`a request to ${url}, which the CDN stub does not have (E2E_PLOTLY_STRICT, E2E_PLOTLY_VERSION)`);
        await route.fulfill({ status: 404, body: '' });
      }
    });
    context.on('request', (request) => {
      const { protocol, hostname } = new URL(request.url());
      const local = ['data:', 'about:', 'blob:'].includes(protocol) || ['127.0.0.1', 'localhost'].includes(hostname);
      if (!local && hostname !== 'cdn.plot.ly') problems.push(`a request to ${request.url()}`);
    });
    const page = await context.newPage();
    page.on('pageerror', (error) => problems.push(`an error in the page: ${error.message}`));
    page.on('console', (message) => {
      if (/Refused to|Content Security Policy/i.test(message.text())) problems.push(`CSP: ${message.text().slice(0, 300)}`);
    });
    const blank = await context.newPage();
    const query = new URLSearchParams({ server: url, sandbox: `http://localhost:${port}/sandbox.html`, mode });
    await page.goto(`http://127.0.0.1:${port}/host.html?${query}`);

    let connected = null;
    await report.check('apps-connect', async () => {
      connected = await page.evaluate(() => window.host.connect());
      const found = [];
      const expected = mode === 'legacy' ? '2025-11-25' : mode;
      if (connected.version !== expected) found.push(`negotiated ${connected.version}, expected ${expected}`);
      if (!connected.capabilities?.extensions?.['io.modelcontextprotocol/ui']) {
        found.push(`the server declares no io.modelcontextprotocol/ui: ${JSON.stringify(connected.capabilities)}`);
      }
      return found;
    });
    if (!connected) return;

    // The plotly chart of May: one marker per day with a reading.
    let chart = null;
    await report.check('apps-chart-shown', async () => {
      chart = await page.evaluate(() => window.host.show('ozone_chart', { month: 5 }));
      return chart.uri === 'ui://airquality/ozone.html' ? [] : [`the app is ${chart.uri}`];
    });
    if (chart) {
      await report.check('apps-chart-rendered', async () => {
        const app = appFrame(page);
        await app.locator('.js-plotly-plot .scatterlayer .trace').first().waitFor({ timeout: 30000 });
        const days = JSON.parse(chart.result.content[0].text);
        const readings = days.filter((d) => d.Ozone !== null && d.Ozone !== undefined).length;
        const points = await app.locator('.scatterlayer .trace .point').count();
        const title = await app.locator('.gtitle').textContent();
        const xTitle = await app.locator('.g-xtitle').textContent();
        const found = [];
        if (points !== readings) found.push(`${points} markers for ${readings} readings`);
        if (!/Ozone in New York, May 1973/.test(title)) found.push(`the title is ${JSON.stringify(title)}`);
        if (xTitle !== 'Day') found.push(`the x axis is ${JSON.stringify(xTitle)}`);
        // Declared in the app's CSP, and so allowed by the sandbox's.
        if (!(chart.ui.csp?.resourceDomains ?? []).includes('https://cdn.plot.ly')) found.push(`the app's CSP is ${JSON.stringify(chart.ui.csp)}`);
        if (cdn.length !== 1) found.push(`plotly's CDN was asked for ${JSON.stringify(cdn)}`);
        return found;
      });
      await report.check('apps-chart-screenshot', () => screenshot(page, blank, 'plotly-chart'));
      await report.check('apps-chart-teardown', async () => {
        const answer = await page.evaluate(() => window.host.teardown());
        return JSON.stringify(answer) === '{}' ? [] : [`the app answered ${JSON.stringify(answer)}`];
      });
    }

    // The DT table of mtcars, and a page turned by the app's own button.
    let table = null;
    await report.check('apps-table-shown', async () => {
      table = await page.evaluate(() => window.host.show('dataset_table', { dataset: 'mtcars' }));
      return table.result.structuredContent?.page === 1 ? [] : [`the result is ${JSON.stringify(table.result).slice(0, 200)}`];
    });
    if (table) {
      const app = appFrame(page);
      await report.check('apps-table-rendered', async () => {
        await app.locator('table.dataTable tbody tr').first().waitFor({ timeout: 30000 });
        const rows = await app.locator('table.dataTable tbody tr').count();
        const text = await app.locator('table.dataTable').textContent();
        const where = await app.locator('#where').textContent();
        const found = [];
        if (rows !== 10) found.push(`${rows} rows`);
        if (!text.includes('Mazda RX4')) found.push('no Mazda RX4 on page 1');
        if (!where.includes('mtcars, page 1 of 4')) found.push(`the page says ${JSON.stringify(where)}`);
        return found;
      });
      await report.check('apps-table-screenshot', () => screenshot(page, blank, 'dt-table'));
      await report.check('apps-table-next-page', async () => {
        const before = (recordedCalls() ?? []).length;
        await app.locator('#next').click();
        await app.locator('#where', { hasText: 'page 2 of 4' }).waitFor({ timeout: 30000 });
        await app.locator('table.dataTable', { hasText: 'Honda Civic' }).waitFor({ timeout: 30000 });
        const text = await app.locator('table.dataTable').textContent();
        const found = [];
        if (text.includes('Mazda RX4')) found.push('page 1 is still shown');
        const calls = recordedCalls();
        if (calls === null) found.push('no record of the server (E2E_LOG_DIR is not set)');
        else {
          const sent = calls.slice(before).filter((c) => c.name === 'table_page');
          if (sent.length !== 1 || sent[0].arguments?.page !== 2 || sent[0].arguments?.dataset !== 'mtcars') {
            found.push(`the server got ${JSON.stringify(calls.slice(before))}, not one table_page of page 2`);
          }
        }
        const fromApp = (await page.evaluate(() => window.host.messages))
          .filter((m) => m.from === 'app' && m.message.method === 'tools/call');
        if (fromApp.length !== 1 || fromApp[0].message.params.name !== 'table_page') {
          found.push(`the app sent ${JSON.stringify(fromApp)}`);
        }
        return found;
      });
      await report.check('apps-table-next-page-screenshot', () => screenshot(page, blank, 'dt-table-page-2'));
      await report.check('apps-table-teardown', async () => {
        const answer = await page.evaluate(() => window.host.teardown());
        return JSON.stringify(answer) === '{}' ? [] : [`the app answered ${JSON.stringify(answer)}`];
      });
    }

    await report.check('apps-messages-fit-the-schema', async () => messageProblems(await page.evaluate(() => window.host.messages)));
    await report.check('apps-no-errors-csp-or-network', () => problems.slice(0, 10));
  } finally {
    await context.close().catch(() => {});
    rmSync(profile, { recursive: true, force: true });
    pages.close();
  }
}

try {
  await main();
} catch (e) {
  report.fail('apps-browser', describe(e));
} finally {
  for (const child of children) child.kill();
}
process.exit(report.failed ? 1 : 0);
