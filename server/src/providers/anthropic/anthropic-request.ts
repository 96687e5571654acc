import type { Block, Endpoint, GenerateRequest } from '../../wire/spec.ts';

const EPHEMERAL = { type: 'ephemeral' } as const;

/**
 * The Messages request. With prompt caching on, breakpoints go on the system prompt, the last
 * tool and the last block of the latest turn — on fresh objects, never on the caller's.
 */
export function toRequestBody(
  endpoint: Endpoint,
  request: GenerateRequest,
): Record<string, unknown> {
  const cache = endpoint.promptCache ?? true;
  const messages = request.messages.map((message) => ({
    role: message.role,
    content: message.content.flatMap((block) => toWireBlock(block)),
  }));
  const last = messages.at(-1);
  if (cache && last && last.content.length > 0) {
    const blocks = [...last.content];
    blocks[blocks.length - 1] = { ...blocks[blocks.length - 1], cache_control: EPHEMERAL };
    messages[messages.length - 1] = { ...last, content: blocks };
  }
  const tools = request.tools?.map((tool, index, all) => ({
    name: tool.name,
    description: tool.description,
    input_schema: tool.inputSchema,
    ...(cache && index === all.length - 1 ? { cache_control: EPHEMERAL } : {}),
  }));
  return {
    model: endpoint.model,
    ...(request.system
      ? {
          system: cache
            ? [{ type: 'text', text: request.system, cache_control: EPHEMERAL }]
            : request.system,
        }
      : {}),
    messages,
    ...(tools?.length ? { tools } : {}),
    max_tokens: request.maxOutputTokens,
    stream: true,
  };
}

function toWireBlock(block: Block): Array<Record<string, unknown>> {
  switch (block.type) {
    case 'text':
      return block.text ? [{ type: 'text', text: block.text }] : [];
    // Thinking without a signature came from another kind of endpoint: the API would reject it.
    case 'thinking':
      return block.signature
        ? [{ type: 'thinking', thinking: block.thinking, signature: block.signature }]
        : [];
    case 'tool_use':
      return [{ type: 'tool_use', id: block.id, name: block.name, input: block.input ?? {} }];
    case 'tool_result':
      return [
        {
          type: 'tool_result',
          tool_use_id: block.toolUseId,
          content: block.content,
          ...(block.isError ? { is_error: true } : {}),
        },
      ];
    // `redacted_thinking` and the like must go back exactly as they came.
    case 'opaque':
      return block.format === 'anthropic' ? [{ ...block.block }] : [];
  }
}
