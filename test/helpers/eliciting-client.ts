import { Client } from '@modelcontextprotocol/sdk/client/index.js';
import { StdioClientTransport } from '@modelcontextprotocol/sdk/client/stdio.js';
import {
  ElicitRequestSchema,
  type ElicitRequest,
  type ElicitResult,
} from '@modelcontextprotocol/sdk/types.js';
import { SERVER_BUNDLE } from './mcp-server.ts';

export type ElicitAnswer = (params: ElicitRequest['params']) => ElicitResult;

export interface ElicitingServer {
  /** Every form the server asked the user to fill, in order. */
  questions: Array<ElicitRequest['params']>;
  callText(
    name: string,
    args: Record<string, unknown>,
  ): Promise<{ text: string; isError: boolean }>;
  stderr(): string;
  close(): Promise<void>;
}

/**
 * The built server over real stdio with an SDK client that declares form elicitation and
 * answers each form with `answer` (standing in for the user).
 */
export async function startElicitingServer(
  env: Record<string, string>,
  answer: ElicitAnswer,
): Promise<ElicitingServer> {
  const transport = new StdioClientTransport({
    command: process.execPath,
    args: [SERVER_BUNDLE],
    env,
    stderr: 'pipe',
  });
  let stderr = '';
  transport.stderr?.on('data', (chunk: Buffer) => (stderr += chunk.toString()));
  const client = new Client(
    { name: 'delegate-test-eliciting', version: '1.0.0' },
    { capabilities: { elicitation: { form: {} } } },
  );
  const questions: Array<ElicitRequest['params']> = [];
  client.setRequestHandler(ElicitRequestSchema, (request) => {
    questions.push(request.params);
    return answer(request.params);
  });
  await client.connect(transport);
  return {
    questions,
    stderr: () => stderr,
    callText: async (name, args) => {
      const result = await client.callTool({ name, arguments: args });
      const content = result.content as Array<{ type: string; text?: string }>;
      return { text: content[0]?.text ?? '', isError: result.isError === true };
    },
    close: () => client.close(),
  };
}
