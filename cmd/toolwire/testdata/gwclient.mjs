// gwclient.mjs drives toolwire serve --servers (the gateway) with the
// official TypeScript SDK's client (v2, @modelcontextprotocol/client) and
// prints what it saw as one JSON object on stdout.
//
//   node gwclient.mjs ERA ELICIT stdio <command> [args...]
//   node gwclient.mjs ERA ELICIT http  <Streamable HTTP endpoint URL>
//
// ERA is 2026-07-28 (pinned: the modern era) or 2025-11-25 (the legacy
// initialize handshake). ELICIT is how the client answers elicitation:
// accept, decline, or none (no elicitation capability). Each call in
// CALLS (a JSON list of [name, arguments] in the environment) is made in
// turn; an argument "$HANDLE" is replaced by the last result handle
// (res_…) an earlier call's text showed. The Go test in ../gateway_interop_test.go asserts on the output;
// it places a copy beside a node_modules link to the pinned packages.
import { Client, StreamableHTTPClientTransport } from '@modelcontextprotocol/client';
import { StdioClientTransport } from '@modelcontextprotocol/client/stdio';

const [era, elicit, mode, target, ...rest] = process.argv.slice(2);
const calls = JSON.parse(process.env.CALLS ?? '[]');

const transport = mode === 'stdio'
  ? new StdioClientTransport({ command: target, args: rest, stderr: 'inherit' })
  : new StreamableHTTPClientTransport(new URL(target));
const capabilities = elicit === 'none' ? {} : { elicitation: { form: {} } };
const client = new Client({ name: 'gwclient', version: '1' }, {
  capabilities,
  versionNegotiation: { mode: era === '2026-07-28' ? { pin: era } : 'legacy' },
});
const out = { era, elicit, transport: mode, asked: [] };
if (elicit !== 'none') {
  client.setRequestHandler('elicitation/create', async (req) => {
    out.asked.push(req.params.message);
    return elicit === 'accept' ? { action: 'accept', content: {} } : { action: 'decline' };
  });
}
try {
  await client.connect(transport);
  out.protocolVersion = client.getNegotiatedProtocolVersion?.() ?? null;
  const { tools } = await client.listTools();
  out.tools = tools.map((t) => ({ name: t.name, inputSchema: t.inputSchema }));
  out.calls = [];
  let handle = null;
  for (const [name, rawArgs] of calls) {
    const args = Object.fromEntries(Object.entries(rawArgs).map(([k, v]) => [k, v === '$HANDLE' ? handle : v]));
    try {
      const r = await client.callTool({ name, arguments: args });
      const text = (r.content ?? []).map((c) => c.text ?? '').join('\n');
      handle = text.match(/res_[A-Za-z0-9_-]{22}/)?.[0] ?? handle;
      out.calls.push({ name, isError: r.isError === true, text });
    } catch (err) {
      out.calls.push({ name, threw: String(err?.message ?? err) });
    }
  }
} catch (err) {
  out.error = String(err?.stack ?? err);
} finally {
  await client.close().catch(() => {});
}
process.stdout.write(JSON.stringify(out) + '\n');
