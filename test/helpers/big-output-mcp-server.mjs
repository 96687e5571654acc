// Another MCP server, as users have beside ours: one tool, `dump`, answers with the whole file
// named by BIG_OUTPUT_FILE (what a database, GitHub or log server may return).
import { readFileSync } from 'node:fs';
import { McpServer } from '@modelcontextprotocol/sdk/server/mcp.js';
import { StdioServerTransport } from '@modelcontextprotocol/sdk/server/stdio.js';

const server = new McpServer({ name: 'bigdata', version: '1.0.0' });
server.registerTool('dump', { description: 'Returns the whole data file.' }, () => ({
  content: [{ type: 'text', text: readFileSync(process.env.BIG_OUTPUT_FILE ?? '', 'utf8') }],
}));
await server.connect(new StdioServerTransport());
