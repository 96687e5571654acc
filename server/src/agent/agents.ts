import { homedir } from 'node:os';
import { readdirSync, statSync } from 'node:fs';
import { basename, dirname, join } from 'node:path';
import matter from 'gray-matter';
import type { Environment } from '../config/paths.ts';
import { readRegularFileSync } from '../util/regular-file.ts';
import { errorMessage, UserError } from '../util/user-error.ts';

export type AgentTier = 'project-agent' | 'project-skill' | 'user-agent' | 'plugin-worker';

/** An agent definition: YAML front matter plus a markdown body, found by the lookup. */
export interface AgentDefinition {
  /** The name it was looked up by: the file name (or skill folder) without extension. */
  name: string;
  description?: string;
  /** The markdown body: the worker's system prompt. */
  body: string;
  tier: AgentTier;
  path: string;
  /** Front matter `delegate-profile`. */
  profile?: string;
  /** Front matter `tools` (comma string or YAML list) — worker tool names to allow. */
  tools?: string[];
  /** Front matter `max-turns`. */
  maxTurns?: number;
}

export interface AgentRoots {
  projectDir: string;
  home: string;
  pluginRoot: string;
}

/**
 * Where agents of `projectDir` are looked up: the project, the user's HOME, the plugin (its
 * root comes from the entry: `AppContext.pluginRoot`).
 */
export function agentRootsFor(
  projectDir: string,
  env: Environment,
  pluginRoot: string,
): AgentRoots {
  return { projectDir, home: env.HOME?.trim() || homedir(), pluginRoot };
}

/** One entry of `listAgents`: the winning definition, the tiers it hides, or why it failed. */
export type ListedAgent = AgentDefinition & { shadows?: AgentTier[]; error?: string };

/** The lookup order: the first tier holding a file for a name wins. */
export const AGENT_TIERS: readonly AgentTier[] = [
  'project-agent',
  'project-skill',
  'user-agent',
  'plugin-worker',
];

const NAME_PATTERN = /^[A-Za-z0-9][A-Za-z0-9_-]{0,99}$/;

const WORKER_TOOLS = new Set([
  'read_file',
  'write_file',
  'edit_file',
  'list_files',
  'grep',
  'run_bash',
  'report_progress',
  'ask_supervisor',
]);

/** Claude Code tool names (lower-cased) that have an obvious worker equivalent. */
const CLAUDE_TOOLS: Readonly<Record<string, string>> = {
  read: 'read_file',
  write: 'write_file',
  edit: 'edit_file',
  multiedit: 'edit_file',
  glob: 'list_files',
  ls: 'list_files',
  grep: 'grep',
  bash: 'run_bash',
};

/** gray-matter evaluates `---js` front matter; a cloned repository must not run code here. */
function refuseScript(): object {
  throw new Error('JavaScript front matter is not allowed (it would run code); use YAML');
}
// Passing options also keeps gray-matter from caching every file it parses in a global.
const MATTER_OPTIONS = { engines: { js: refuseScript, javascript: refuseScript } };

/**
 * The lookup: <project>/.claude/agents/<n>.md → <project>/.claude/skills/<n>/SKILL.md →
 * ~/.claude/agents/<n>.md → <plugin>/workers/<n>.md; first found wins. Throws a `UserError`
 * for an invalid name and for a file whose front matter is bad (naming the file).
 */
export function findAgent(name: string, roots: AgentRoots): AgentDefinition | undefined {
  assertAgentName(name);
  for (const tier of AGENT_TIERS) {
    const path = agentPath(tier, name, roots);
    if (isFile(path)) return readAgent(name, tier, path);
  }
  return undefined;
}

/** The same lookup, for a name that must be found: a `UserError` that says where to look. */
export function requireAgent(name: string, roots: AgentRoots): AgentDefinition {
  const agent = findAgent(name, roots);
  if (!agent)
    throw new UserError(`No agent "${name}". Call agents_list to see the agents of every tier.`);
  return agent;
}

/**
 * Every agent of every tier. A name found in several tiers is listed once, at the winning
 * tier, with `shadows` naming the lower ones; a file that fails to parse is listed with `error`.
 */
export function listAgents(roots: AgentRoots): ListedAgent[] {
  const winners = new Map<string, ListedAgent>();
  for (const tier of AGENT_TIERS) {
    for (const name of namesInTier(tier, roots)) {
      const winner = winners.get(name);
      if (winner) winner.shadows = [...(winner.shadows ?? []), tier];
      else winners.set(name, readForListing(name, tier, agentPath(tier, name, roots)));
    }
  }
  return [...winners.values()];
}

export function assertAgentName(name: string): void {
  if (!NAME_PATTERN.test(name)) {
    throw new UserError(
      `"${name}" is not a valid agent name: use letters, digits, "-" and "_" only ` +
        '(no slashes, dots or ".."), at most 100 characters. Call agents_list to see the agents.',
    );
  }
}

function agentPath(tier: AgentTier, name: string, roots: AgentRoots): string {
  switch (tier) {
    case 'project-agent':
      return join(roots.projectDir, '.claude', 'agents', `${name}.md`);
    case 'project-skill':
      return join(roots.projectDir, '.claude', 'skills', name, 'SKILL.md');
    case 'user-agent':
      return join(roots.home, '.claude', 'agents', `${name}.md`);
    case 'plugin-worker':
      return join(roots.pluginRoot, 'workers', `${name}.md`);
  }
}

/** Names that `findAgent` would resolve in this tier, sorted. */
function namesInTier(tier: AgentTier, roots: AgentRoots): string[] {
  const isSkill = tier === 'project-skill';
  const folder = isSkill
    ? dirname(dirname(agentPath(tier, 'x', roots)))
    : dirname(agentPath(tier, 'x', roots));
  const entries = safeReaddir(folder);
  const names = isSkill
    ? entries
    : entries.filter((entry) => entry.endsWith('.md')).map((entry) => basename(entry, '.md'));
  return names
    .filter((name) => NAME_PATTERN.test(name) && isFile(agentPath(tier, name, roots)))
    .sort();
}

function readForListing(name: string, tier: AgentTier, path: string): ListedAgent {
  try {
    return readAgent(name, tier, path);
  } catch (error) {
    return { name, tier, path, body: '', error: errorMessage(error) };
  }
}

function readAgent(name: string, tier: AgentTier, path: string): AgentDefinition {
  const { data, content } = parseFrontMatter(readAgentText(path), path);
  const description = optionalString(data, 'description', path);
  const profile = optionalString(data, 'delegate-profile', path);
  const tools = toolList(data.tools ?? data['allowed-tools'], path);
  const maxTurns = positiveInteger(data['max-turns'], path);
  return {
    name,
    ...(description !== undefined ? { description } : {}),
    body: content.trim(),
    tier,
    path,
    ...(profile !== undefined ? { profile } : {}),
    ...(tools !== undefined ? { tools } : {}),
    ...(maxTurns !== undefined ? { maxTurns } : {}),
  };
}

/** Only a regular file is read: a FIFO named like an agent would block the server. */
function readAgentText(path: string): string {
  const label = `Agent file ${path}`;
  try {
    return readRegularFileSync(path, label, 'agent definitions are regular files.').toString();
  } catch (error) {
    if (error instanceof UserError) throw error;
    throw new UserError(`${label} cannot be read (${errorMessage(error)}); fix or remove it.`);
  }
}

function parseFrontMatter(
  text: string,
  path: string,
): { data: Record<string, unknown>; content: string } {
  try {
    return asMapping(matter(text, MATTER_OPTIONS), path);
  } catch (error) {
    if (error instanceof UserError) throw error;
    const repaired = quotePlainValues(text);
    if (repaired !== text) {
      try {
        return asMapping(matter(repaired, MATTER_OPTIONS), path);
      } catch {
        // Report the error of the file as written.
      }
    }
    const reason = errorMessage(error).split('\n')[0]!.replace(/:$/, '');
    throw new UserError(
      `Agent file ${path} has invalid front matter: ${reason}. Fix the YAML between the ` +
        '"---" lines (quote values that contain ": ").',
    );
  }
}

/**
 * Claude Code accepts agent files whose `description:` is an unquoted line full of ": "
 * (example dialogues), which strict YAML rejects; quote such one-line values and try again.
 */
function quotePlainValues(text: string): string {
  const end = text.indexOf('\n---', 3);
  if (!text.startsWith('---') || end < 0) return text;
  const head = text
    .slice(0, end)
    .replace(
      /^([A-Za-z_][\w-]*):[ \t]+([^'"[{|>&*!#\s][^\r\n]*?)[ \t]*(?=\r?$)/gm,
      (_line, key: string, value: string) => `${key}: '${value.replace(/'/g, "''")}'`,
    );
  return head + text.slice(end);
}

function asMapping(
  file: { data: unknown; content: string },
  path: string,
): { data: Record<string, unknown>; content: string } {
  const { data } = file;
  if (typeof data !== 'object' || data === null || Array.isArray(data)) {
    throw new UserError(
      `Agent file ${path} has invalid front matter: it must be a YAML mapping of fields ` +
        '(name, description, tools, delegate-profile, max-turns).',
    );
  }
  return { data: data as Record<string, unknown>, content: file.content };
}

function optionalString(
  data: Record<string, unknown>,
  field: string,
  path: string,
): string | undefined {
  const value = data[field];
  if (value === undefined || value === null) return undefined;
  if (typeof value === 'string' && value.trim()) return value.trim();
  throw new UserError(`Agent file ${path}: front matter "${field}" must be a non-empty string.`);
}

/** Worker tool names from a comma string or a YAML list; Claude Code names are mapped. */
function toolList(value: unknown, path: string): string[] | undefined {
  if (value === undefined || value === null) return undefined;
  const entries = typeof value === 'string' ? value.split(',') : value;
  if (!Array.isArray(entries) || entries.some((entry) => typeof entry !== 'string')) {
    throw new UserError(
      `Agent file ${path}: front matter "tools" must be a comma-separated string or a list of ` +
        'tool names, e.g. "read_file, grep" or "Read, Grep".',
    );
  }
  const tools = (entries as string[]).map(workerToolName).filter((tool) => tool !== undefined);
  return [...new Set(tools)];
}

/** `Read` → `read_file`; `Bash(git diff:*)` → `run_bash`; unknown names → undefined. */
function workerToolName(entry: string): string | undefined {
  const bare = entry
    .trim()
    .replace(/\(.*\)$/s, '')
    .trim();
  if (WORKER_TOOLS.has(bare)) return bare;
  return CLAUDE_TOOLS[bare.toLowerCase()];
}

function positiveInteger(value: unknown, path: string): number | undefined {
  if (value === undefined || value === null) return undefined;
  if (typeof value === 'number' && Number.isInteger(value) && value > 0) return value;
  throw new UserError(`Agent file ${path}: front matter "max-turns" must be a positive integer.`);
}

function isFile(path: string): boolean {
  try {
    return statSync(path).isFile();
  } catch {
    return false;
  }
}

function safeReaddir(folder: string): string[] {
  try {
    return readdirSync(folder);
  } catch {
    return [];
  }
}
