import type { Environment } from '../config/paths.ts';
import type { AgentDefinition } from './agents.ts';

/**
 * `findAgent` over a task's roots with the lookup loaded on demand: its YAML parser stays off the
 * way to a task worker's first model request, and is loaded only by a task that names an agent or
 * reaches its review.
 */
export async function findAgentLazily(
  name: string,
  context: { projectDir: string; env: Environment; pluginRoot: string },
): Promise<AgentDefinition | undefined> {
  const { agentRootsFor, findAgent } = await import('./agents.ts');
  return findAgent(name, agentRootsFor(context.projectDir, context.env, context.pluginRoot));
}
