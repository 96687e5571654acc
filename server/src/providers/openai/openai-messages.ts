import type { GenerateRequest, Message, ToolSpec } from '../../wire/spec.ts';

interface WireToolCall {
  id: string;
  type: 'function';
  function: { name: string; arguments: string };
}
export interface WireMessage {
  role: 'system' | 'user' | 'assistant' | 'tool';
  content: string | null;
  tool_calls?: WireToolCall[];
  tool_call_id?: string;
  reasoning_content?: string;
}

/** The internal conversation in Chat Completions shape; tool results become `tool` messages. */
export function toWireMessages(
  request: GenerateRequest,
  replayReasoning: (producedBy: string | undefined) => boolean,
): WireMessage[] {
  const messages: WireMessage[] = request.system
    ? [{ role: 'system', content: request.system }]
    : [];
  for (const message of request.messages) {
    messages.push(
      ...(message.role === 'assistant'
        ? [assistantMessage(message, replayReasoning)]
        : userMessages(message)),
    );
  }
  return messages;
}

export function toWireTools(tools: readonly ToolSpec[]): unknown[] {
  return tools.map((tool) => ({
    type: 'function',
    function: { name: tool.name, description: tool.description, parameters: tool.inputSchema },
  }));
}

function assistantMessage(
  message: Message,
  replayReasoning: (producedBy: string | undefined) => boolean,
): WireMessage {
  let text = '';
  let reasoning = '';
  const calls: WireToolCall[] = [];
  for (const block of message.content) {
    if (block.type === 'text') text += block.text;
    if (block.type === 'thinking' && replayReasoning(block.model)) reasoning += block.thinking;
    if (block.type === 'tool_use') {
      calls.push({
        id: block.id,
        type: 'function',
        function: { name: block.name, arguments: JSON.stringify(block.input ?? {}) },
      });
    }
  }
  return {
    role: 'assistant',
    content: text || (calls.length ? null : ''),
    ...(calls.length ? { tool_calls: calls } : {}),
    ...(reasoning ? { reasoning_content: reasoning } : {}),
  };
}

function userMessages(message: Message): WireMessage[] {
  const results: WireMessage[] = [];
  let text = '';
  for (const block of message.content) {
    if (block.type === 'tool_result') {
      results.push({
        role: 'tool',
        tool_call_id: block.toolUseId,
        content: block.isError ? `ERROR: ${block.content}` : block.content,
      });
    }
    if (block.type === 'text') text += block.text;
  }
  // Tool results must directly follow the assistant message that called the tools.
  return text ? [...results, { role: 'user', content: text }] : results;
}
