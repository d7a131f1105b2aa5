// MCP Apps with the official TypeScript SDK clients and the extension's
// own SDK (@modelcontextprotocol/ext-apps):
//
//   node apps.mjs v1                     # @modelcontextprotocol/sdk 1.x, 2025-11-25
//   node apps.mjs v2 legacy|2026-07-28   # @modelcontextprotocol/client 2.x
//
// The example server inst/examples/apps/server.R (E2E_SERVER), started
// through capture.py, seen by a host that declares io.modelcontextprotocol/ui.
// Its tools' `_meta.ui` and its app documents' `_meta.ui` are parsed with the
// extension SDK's own schemas (McpUiToolMetaSchema, McpUiResourceMetaSchema)
// and read with its helpers (getToolUiResourceUri, isToolVisibilityAppOnly),
// as a host built on it reads them. Prints PASS/FAIL lines.

import { Report, describe, requireSdk, serverParams } from './checks.mjs';

const [sdk = 'v2', mode = 'legacy'] = process.argv.slice(2);
const EXTENSION = 'io.modelcontextprotocol/ui';
const apps = requireSdk('@modelcontextprotocol/ext-apps/app-bridge');
const capabilities = { extensions: { [EXTENSION]: { mimeTypes: [apps.RESOURCE_MIME_TYPE] } } };
const APPS = {
  ozone_chart: 'ui://airquality/ozone.html',
  dataset_table: 'ui://datasets/table.html',
  table_page: 'ui://datasets/table.html',
};

function connectArgs() {
  const clientInfo = { name: 'mcpserver-e2e-apps', version: '1.0.0' };
  if (sdk === 'v1') {
    const { Client } = requireSdk('@modelcontextprotocol/sdk/client/index.js');
    const { StdioClientTransport } = requireSdk('@modelcontextprotocol/sdk/client/stdio.js');
    const client = new Client(clientInfo, { capabilities });
    return { client, transport: new StdioClientTransport({ ...serverParams(), stderr: 'inherit' }), callTool: (p) => client.callTool(p) };
  }
  const { Client } = requireSdk('@modelcontextprotocol/client');
  const { StdioClientTransport } = requireSdk('@modelcontextprotocol/client/stdio');
  const negotiation = mode === 'legacy' ? undefined : { mode: { pin: mode } };
  const client = new Client(clientInfo, { capabilities, ...(negotiation && { versionNegotiation: negotiation }) });
  return { client, transport: new StdioClientTransport({ ...serverParams(), stderr: 'inherit' }), callTool: (p) => client.callTool(p) };
}

const parsed = (schema, value, what) => {
  const got = schema.safeParse(value);
  return got.success ? [] : [`${what} does not parse: ${got.error.message.replace(/\s+/g, ' ').slice(0, 300)}`];
};

async function main() {
  const report = new Report();
  const { client, transport, callTool } = connectArgs();
  try {
    await client.connect(transport);
  } catch (e) {
    report.fail('apps-connect', describe(e));
    return 1;
  }
  try {
    await report.check('apps-capabilities', async () => {
      const caps = client.getServerCapabilities() ?? {};
      return caps.extensions?.[EXTENSION] ? [] : [`capabilities are ${JSON.stringify(caps)}`];
    });
    await report.check('apps-tools-list', async () => {
      const tools = Object.fromEntries((await client.listTools()).tools.map((t) => [t.name, t]));
      const problems = [];
      for (const [name, uri] of Object.entries(APPS)) {
        const tool = tools[name];
        if (!tool) {
          problems.push(`${name} is not listed`);
          continue;
        }
        problems.push(...parsed(apps.McpUiToolMetaSchema, tool._meta?.ui, `${name}'s _meta.ui`));
        if (apps.getToolUiResourceUri(tool) !== uri) problems.push(`${name} names ${apps.getToolUiResourceUri(tool)}`);
      }
      if (!apps.isToolVisibilityAppOnly(tools.table_page ?? {})) problems.push('table_page is not for the app only');
      if (apps.isToolVisibilityAppOnly(tools.dataset_table ?? {})) problems.push('dataset_table is for the app only');
      return problems;
    });
    await report.check('apps-resources-read', async () => {
      const problems = [];
      for (const uri of new Set(Object.values(APPS))) {
        const { contents } = await client.readResource({ uri });
        const [content] = contents;
        if (contents.length !== 1 || content.mimeType !== apps.RESOURCE_MIME_TYPE) {
          problems.push(`${uri} is ${JSON.stringify(contents.map((c) => c.mimeType))}`);
          continue;
        }
        if (!content.text.startsWith('<!DOCTYPE html>')) problems.push(`${uri} is not an HTML document`);
        if (content._meta?.ui) problems.push(...parsed(apps.McpUiResourceMetaSchema, content._meta.ui, `${uri}'s _meta.ui`));
      }
      const table = (await client.readResource({ uri: APPS.dataset_table })).contents[0];
      if (table._meta?.ui?.prefersBorder !== true) problems.push(`the table's _meta.ui is ${JSON.stringify(table._meta)}`);
      return problems;
    });
    await report.check('apps-call', async () => {
      const result = await callTool({ name: 'dataset_table', arguments: { dataset: 'iris' } });
      const problems = [];
      const page = result.structuredContent;
      if (page?.dataset !== 'iris' || page?.page !== 1 || page?.pages !== 15 || page?.rows?.length !== 10) {
        problems.push(`structuredContent is ${JSON.stringify(page).slice(0, 200)}`);
      }
      const view = result._meta?.['mcpserver/view'];
      if (!view?.html?.includes('datatables html-widget') || view.dependencies.length !== 0) {
        problems.push(`the view is ${JSON.stringify(view).slice(0, 200)}`);
      }
      return problems;
    });
    await report.check('apps-app-tool', async () => {
      const result = await callTool({ name: 'table_page', arguments: { dataset: 'iris', page: 15 } });
      const rows = result.structuredContent?.rows ?? [];
      return rows.length === 10 && rows[9].row === '150' ? [] : [`page 15 is ${JSON.stringify(rows).slice(0, 200)}`];
    });
  } finally {
    await client.close().catch(() => {});
  }
  return report.failed ? 1 : 0;
}

process.exit(await main());
