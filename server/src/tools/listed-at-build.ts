import { readFileSync } from 'node:fs';
import type { ListToolsResult } from '@modelcontextprotocol/sdk/types.js';

/**
 * The `tools/list` result the build wrote beside the bundle (`scripts/build.mjs` asks the freshly
 * built server and keeps its answer): the tools never change while a server runs, and turning 17
 * zod schemas into JSON Schema at every start was the largest part of what the server added to a
 * minimal SDK server's start-up. Undefined when there is no such file (the sources run directly,
 * or the build asking its own server) or it cannot be read as a list, and the SDK answers as
 * before: a damaged copy of the plugin must not cost the user the tools.
 */
export function listedAtBuild(file: URL): ListToolsResult | undefined {
  try {
    const result = JSON.parse(readFileSync(file, 'utf8')) as ListToolsResult;
    return Array.isArray(result.tools) ? result : undefined;
  } catch {
    return undefined;
  }
}
