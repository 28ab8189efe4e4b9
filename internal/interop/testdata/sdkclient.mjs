// sdkclient.mjs drives a toolwire MCP server with the official TypeScript
// SDK's client and prints what it saw as one JSON object on stdout.
//
//   node sdkclient.mjs stdio <server command> [args...]
//   node sdkclient.mjs http  <Streamable HTTP endpoint URL>
//   node sdkclient.mjs sse   <HTTP+SSE endpoint URL>
//
// The Go test in ../interop_test.go runs it and asserts on the output; it
// places a copy beside a node_modules link to the pinned packages, since ES
// modules resolve bare imports from the script's own directory.
import { Client } from '@modelcontextprotocol/sdk/client/index.js';
import { StdioClientTransport } from '@modelcontextprotocol/sdk/client/stdio.js';
import { StreamableHTTPClientTransport } from '@modelcontextprotocol/sdk/client/streamableHttp.js';
import { SSEClientTransport } from '@modelcontextprotocol/sdk/client/sse.js';
import { LATEST_PROTOCOL_VERSION, SUPPORTED_PROTOCOL_VERSIONS } from '@modelcontextprotocol/sdk/types.js';

const [mode, target, ...rest] = process.argv.slice(2);
if (!mode || !target) {
  console.error('usage: node sdkclient.mjs stdio|http|sse <command or URL> [args...]');
  process.exit(2);
}

function makeTransport() {
  switch (mode) {
    case 'stdio':
      return new StdioClientTransport({ command: target, args: rest, stderr: 'inherit' });
    case 'http':
      return new StreamableHTTPClientTransport(new URL(target));
    case 'sse':
      return new SSEClientTransport(new URL(target));
    default:
      throw new Error(`unknown transport ${mode}`);
  }
}

// watchInitialize records the protocol version the client asks for and the
// one the server answers with, by wrapping the transport's send and the
// message handler the client installs on it.
function watchInitialize(transport, seen) {
  const send = transport.send.bind(transport);
  transport.send = (message, options) => {
    if (message.method === 'initialize') {
      seen.requested = message.params.protocolVersion;
      seen.initializeId = message.id;
    }
    return send(message, options);
  };
  let handler;
  Object.defineProperty(transport, 'onmessage', {
    configurable: true,
    get: () => handler,
    set: (h) => {
      handler = h && ((message, extra) => {
        if (message.id !== undefined && message.id === seen.initializeId && message.result) {
          seen.negotiated = message.result.protocolVersion;
        }
        return h(message, extra);
      });
    },
  });
}

// call calls a tool and returns its result, or the error it was refused with.
async function call(client, name, args) {
  try {
    const r = await client.callTool({ name, arguments: args });
    return { isError: r.isError === true, content: r.content, structuredContent: r.structuredContent };
  } catch (err) {
    return { threw: String(err?.message ?? err), code: err?.code };
  }
}

const out = {
  transport: mode,
  sdkLatestProtocolVersion: LATEST_PROTOCOL_VERSION,
  sdkSupportedProtocolVersions: SUPPORTED_PROTOCOL_VERSIONS,
};
const seen = {};
const transport = makeTransport();
watchInitialize(transport, seen);
const client = new Client({ name: 'toolwire-interop', version: '1.0.0' });
try {
  await client.connect(transport);
  out.requestedProtocolVersion = seen.requested;
  out.protocolVersion = seen.negotiated;
  if ('protocolVersion' in transport) {
    out.transportProtocolVersion = transport.protocolVersion; // sent as Mcp-Protocol-Version
  }
  if (mode === 'http') {
    out.sessionId = transport.sessionId;
  }
  out.serverInfo = client.getServerVersion();
  out.capabilities = client.getServerCapabilities();
  const list = await client.listTools();
  out.tools = list.tools.map((t) => t.name);
  out.calculate = await call(client, 'calculate', { expression: 'pow(2, 10) + 1' });
  out.badArguments = await call(client, 'calculate', { expression: 5 });
  if (mode === 'http') {
    await transport.terminateSession(); // DELETE ends the session
    out.sessionTerminated = transport.sessionId === undefined;
  }
} catch (err) {
  out.error = String(err?.stack ?? err);
} finally {
  await client.close().catch((err) => {
    out.closeError = String(err?.message ?? err);
  });
}
process.stdout.write(JSON.stringify(out) + '\n');
process.exit(out.error ? 1 : 0);
