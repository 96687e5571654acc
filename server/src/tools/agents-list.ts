import { realpathSync } from 'node:fs';
import { relative } from 'node:path';
import { z } from 'zod';
import type { AgentRoots, ListedAgent } from '../agent/agents.ts';
import { READS_LOCAL_FILES } from './annotations.ts';
import { defineTool } from './define-tool.ts';

const DESCRIPTION_LIMIT = 120;

export const agentsListTool = defineTool({
  name: 'agents_list',
  title: 'List agent definitions',
  description:
    'Lists the agent definitions a task can run: name, description, tier and file, profile, tools, ' +
    "turn limit. First found wins: the project's .claude/agents/ and .claude/skills/, ~/.claude/agents/, " +
    "the plugin's workers/.",
  inputSchema: () => ({
    workdir: z
      .string()
      .min(1)
      .optional()
      .describe('Directory under the project (default: its root).'),
  }),
  annotations: READS_LOCAL_FILES,
  handler: (input, { context, services }) => {
    const { agentRootsFor, confineWorkdir, listAgents } = services;
    // Confined like a task's workdir: the lookup reads agent files, so only the project's.
    const projectDir = confineWorkdir(realpathSync(context.projectDir), input.workdir ?? '.');
    const roots = agentRootsFor(projectDir, context.env, context.pluginRoot);
    return describeAgents(listAgents(roots), roots);
  },
});

function describeAgents(agents: ListedAgent[], roots: AgentRoots): string {
  const header =
    `Agents for ${roots.projectDir} (first found wins: .claude/agents/<name>.md → ` +
    '.claude/skills/<name>/SKILL.md → ~/.claude/agents/<name>.md → plugin workers/<name>.md; ' +
    `plugin: ${roots.pluginRoot}).`;
  if (agents.length === 0) return `${header}\nNo agents found.`;
  return [header, ...agents.map((agent) => agentLine(agent, roots))].join('\n');
}

/** `name — description [tier: path] (profile: x, tools: a,b, max turns: n, shadows: …)` */
function agentLine(agent: ListedAgent, roots: AgentRoots): string {
  const where = `[${agent.tier}: ${displayPath(agent, roots)}]`;
  if (agent.error) return `${agent.name} — INVALID: ${agent.error} ${where}`;
  const details = [
    agent.profile ? `profile: ${agent.profile}` : '',
    agent.tools ? `tools: ${agent.tools.join(',') || 'none'}` : '',
    agent.maxTurns ? `max turns: ${agent.maxTurns}` : '',
    agent.shadows ? `shadows: ${agent.shadows.join(',')}` : '',
  ].filter(Boolean);
  const description = shorten(agent.description ?? '(no description)');
  return `${agent.name} — ${description} ${where}${details.length ? ` (${details.join(', ')})` : ''}`;
}

function displayPath(agent: ListedAgent, roots: AgentRoots): string {
  if (agent.tier === 'user-agent') return `~/${relative(roots.home, agent.path)}`;
  if (agent.tier === 'plugin-worker') return relative(roots.pluginRoot, agent.path);
  return relative(roots.projectDir, agent.path);
}

/** Claude Code descriptions often carry whole example dialogues: one short line is enough. */
function shorten(text: string): string {
  const line = text.replace(/(?:\\n|\s)+/g, ' ').trim();
  return line.length <= DESCRIPTION_LIMIT
    ? line
    : `${line.slice(0, DESCRIPTION_LIMIT - 1).trimEnd()}…`;
}
