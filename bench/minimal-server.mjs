// Baseline for the start-up bench: the smallest useful MCP SDK server (one tool), bundled
// the same way as ours, so the ratio shows what our own code adds.
import { McpServer } from '@modelcontextprotocol/sdk/server/mcp.js';
import { StdioServerTransport } from '@modelcontextprotocol/sdk/server/stdio.js';
import { z } from 'zod';

const server = new McpServer({ name: 'minimal', version: '1.0.0' });
server.registerTool(
  'echo',
  { description: 'Echoes', inputSchema: { text: z.string() } },
  ({ text }) => ({
    content: [{ type: 'text', text }],
  }),
);
await server.connect(new StdioServerTransport());
