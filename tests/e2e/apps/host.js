// The test host: a web page that hosts MCP Apps as the extension's
// specification (2026-01-26) says a web host does, with the extension's
// official host-side bridge (AppBridge of @modelcontextprotocol/ext-apps)
// and the official TypeScript client (@modelcontextprotocol/client) over
// Streamable HTTP. browser.mjs bundles it (esbuild) and drives it in
// Chromium:
//
//   await host.connect()                  // declares io.modelcontextprotocol/ui
//   await host.show("ozone_chart", {...}) // calls the tool, mounts its app
//   await host.teardown()                 // ui/resource-teardown
//
// Every message between the host and the app is kept in host.messages, for
// browser.mjs to check against the extension's schema.

import { Client, StreamableHTTPClientTransport } from '@modelcontextprotocol/client';
import {
  AppBridge,
  PostMessageTransport,
  RESOURCE_MIME_TYPE,
  getToolUiResourceUri,
} from '@modelcontextprotocol/ext-apps/app-bridge';

const params = new URLSearchParams(location.search);
const SERVER = params.get('server');
const SANDBOX = params.get('sandbox');
const MODE = params.get('mode') || 'legacy';
const HOST_INFO = { name: 'mcpserver-test-host', version: '1.0.0' };
const EXTENSION = 'io.modelcontextprotocol/ui';

const messages = [];
let client;
let bridge;
let shown = 0;

async function connect() {
  const negotiation = MODE === 'legacy' ? undefined : { mode: { pin: MODE } };
  client = new Client(HOST_INFO, {
    capabilities: { extensions: { [EXTENSION]: { mimeTypes: [RESOURCE_MIME_TYPE] } } },
    ...(negotiation && { versionNegotiation: negotiation }),
  });
  await client.connect(new StreamableHTTPClientTransport(new URL(SERVER)));
  return { version: client.getNegotiatedProtocolVersion(), capabilities: client.getServerCapabilities() };
}

// The outer frame: the sandbox proxy, of another origin, with the CSP of
// the resource's _meta.ui.csp. Resolves once it says it is ready.
function sandboxProxy(csp) {
  const frame = document.createElement('iframe');
  frame.id = 'app';
  frame.setAttribute('sandbox', 'allow-scripts allow-same-origin allow-forms');
  const url = new URL(SANDBOX);
  if (csp) url.searchParams.set('csp', JSON.stringify(csp));
  const ready = new Promise((resolve) => {
    window.addEventListener('message', function listener(event) {
      if (event.source === frame.contentWindow && event.data?.method === 'ui/notifications/sandbox-proxy-ready') {
        window.removeEventListener('message', listener);
        resolve(frame);
      }
    });
  });
  document.getElementById('apps').replaceChildren(frame);
  frame.src = url.href;
  return ready;
}

async function show(name, args) {
  const { tools } = await client.listTools();
  const tool = tools.find((t) => t.name === name);
  if (!tool) throw new Error(`the server lists no tool ${name}`);
  const uri = getToolUiResourceUri(tool);
  if (!uri) throw new Error(`${name} names no app in _meta.ui.resourceUri`);
  // As a host does: the call and the app's document at once.
  const resultPromise = client.callTool({ name, arguments: args });
  const read = await client.readResource({ uri });
  const content = read.contents[0];
  if (read.contents.length !== 1 || content.mimeType !== RESOURCE_MIME_TYPE) {
    throw new Error(`${uri} is not one ${RESOURCE_MIME_TYPE} document: ${JSON.stringify(read.contents.map((c) => c.mimeType))}`);
  }
  const ui = content._meta?.ui ?? {};
  const frame = await sandboxProxy(ui.csp);
  const app = ++shown;
  const server = client.getServerCapabilities();
  bridge = new AppBridge(
    client,
    HOST_INFO,
    // What the host proxies of the server: the extension's fields only
    // (its schema admits no others, such as resources' `subscribe`).
    {
      openLinks: {}, logging: {},
      ...(server?.tools && { serverTools: { listChanged: Boolean(server.tools.listChanged) } }),
      ...(server?.resources && { serverResources: { listChanged: Boolean(server.resources.listChanged) } }),
    },
    {
      hostContext: {
        theme: 'light', platform: 'web', displayMode: 'inline', availableDisplayModes: ['inline'],
        locale: 'en-US',
      },
    },
  );
  bridge.onsizechange = ({ height }) => {
    if (height) frame.style.height = `${height}px`;
  };
  bridge.onmessage = async () => ({});
  bridge.onopenlink = async () => ({});
  const initialized = new Promise((resolve) => {
    bridge.oninitialized = () => resolve();
  });
  window.addEventListener('message', (event) => {
    if (event.source === frame.contentWindow) messages.push({ app, from: 'app', message: event.data });
  });
  const transport = new PostMessageTransport(frame.contentWindow, frame.contentWindow);
  const send = transport.send.bind(transport);
  transport.send = (message, options) => {
    messages.push({ app, from: 'host', message });
    return send(message, options);
  };
  await bridge.connect(transport);
  await bridge.sendSandboxResourceReady({ html: content.text, csp: ui.csp, permissions: ui.permissions });
  await initialized;
  await bridge.sendToolInput({ arguments: args });
  const result = await resultPromise;
  await bridge.sendToolResult(result);
  return { uri, ui, result, appInfo: bridge.getAppVersion(), appCapabilities: bridge.getAppCapabilities() };
}

async function teardown() {
  const answer = await bridge.teardownResource({});
  await bridge.close();
  return answer;
}

window.host = { connect, show, teardown, messages };
