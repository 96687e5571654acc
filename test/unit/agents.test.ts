import {
  mkdirSync,
  mkdtempSync,
  readdirSync,
  readFileSync,
  realpathSync,
  rmSync,
  writeFileSync,
} from 'node:fs';
import { tmpdir } from 'node:os';
import { basename, dirname, join } from 'node:path';
import matter from 'gray-matter';
import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import { findAgent, listAgents, type AgentRoots } from '../../server/src/agent/agents.ts';

const REPO_ROOT = join(import.meta.dirname, '..', '..');
const PLUGIN_ROOT = join(REPO_ROOT, 'plugin');

let root: string;
let roots: AgentRoots;

beforeEach(() => {
  root = realpathSync(mkdtempSync(join(tmpdir(), 'delegate-agents-')));
  roots = {
    projectDir: join(root, 'project'),
    home: join(root, 'home'),
    pluginRoot: join(root, 'plugin'),
  };
});
afterEach(() => rmSync(root, { recursive: true, force: true }));

function write(path: string, content: string): string {
  mkdirSync(dirname(path), { recursive: true });
  writeFileSync(path, content);
  return path;
}
const projectAgent = (name: string, text: string) =>
  write(join(roots.projectDir, '.claude', 'agents', `${name}.md`), text);
const projectSkill = (name: string, text: string) =>
  write(join(roots.projectDir, '.claude', 'skills', name, 'SKILL.md'), text);
const userAgent = (name: string, text: string) =>
  write(join(roots.home, '.claude', 'agents', `${name}.md`), text);
const pluginWorker = (name: string, text: string) =>
  write(join(roots.pluginRoot, 'workers', `${name}.md`), text);
const agentFile = (description: string, body = 'Do the work.') =>
  `---\ndescription: ${description}\n---\n${body}\n`;

describe('findAgent', () => {
  it('takes the first tier that has the name: project agent, project skill, user agent, plugin worker', () => {
    pluginWorker('shared', agentFile('from the plugin'));
    expect(findAgent('shared', roots)).toMatchObject({
      tier: 'plugin-worker',
      description: 'from the plugin',
    });
    userAgent('shared', agentFile('from home'));
    expect(findAgent('shared', roots)?.tier).toBe('user-agent');
    const skill = projectSkill('shared', agentFile('from a skill', 'Skill instructions.'));
    expect(findAgent('shared', roots)).toMatchObject({
      tier: 'project-skill',
      path: skill,
      body: 'Skill instructions.',
    });
    const agent = projectAgent('shared', agentFile('from the project'));
    expect(findAgent('shared', roots)).toEqual({
      name: 'shared',
      description: 'from the project',
      body: 'Do the work.',
      tier: 'project-agent',
      path: agent,
    });
  });

  it('returns undefined when no tier has the name', () => {
    pluginWorker('other', agentFile('x'));
    expect(findAgent('missing', roots)).toBeUndefined();
  });

  it('reads delegate-profile and max-turns, and maps Claude Code tool names to worker tools', () => {
    projectAgent(
      'security-engineer',
      [
        '---',
        'name: security-engineer',
        'description: Finds vulnerabilities',
        'tools: Read, Grep, Glob, Bash(git diff:*), WebFetch, MultiEdit, Edit, Write, LS, mcp__x__y',
        'model: opus',
        'delegate-profile: local',
        'max-turns: 12',
        '---',
        'You are a security engineer.',
      ].join('\n'),
    );
    const agent = findAgent('security-engineer', roots);
    expect(agent).toMatchObject({
      profile: 'local',
      maxTurns: 12,
      body: 'You are a security engineer.',
    });
    expect(agent?.tools).toEqual([
      'read_file',
      'grep',
      'list_files',
      'run_bash',
      'edit_file',
      'write_file',
    ]);
    expect(agent).not.toHaveProperty('model');
  });

  it('accepts a YAML list of tools, worker tool names as they are, and allowed-tools in skills', () => {
    userAgent(
      'lister',
      '---\ntools:\n  - read_file\n  - Grep\n  - report_progress\n  - Unknown\n---\nBody',
    );
    expect(findAgent('lister', roots)?.tools).toEqual(['read_file', 'grep', 'report_progress']);
    projectSkill('skill', '---\nallowed-tools: Read, Bash\n---\nBody');
    expect(findAgent('skill', roots)?.tools).toEqual(['read_file', 'run_bash']);
  });

  it('takes a file without front matter as a body only', () => {
    pluginWorker('plain', '# Plain\n\nJust instructions.\n');
    expect(findAgent('plain', roots)).toEqual({
      name: 'plain',
      body: '# Plain\n\nJust instructions.',
      tier: 'plugin-worker',
      path: join(roots.pluginRoot, 'workers', 'plain.md'),
    });
  });

  it('reads the unquoted "key: value: value" descriptions Claude Code agents often carry', () => {
    projectAgent(
      'chatty',
      '---\nname: chatty\ndescription: Use it when asked. Examples: <example>user: "hi" assistant: "hello"</example>\ntools: Read\n---\nBody',
    );
    expect(findAgent('chatty', roots)).toMatchObject({
      description: 'Use it when asked. Examples: <example>user: "hi" assistant: "hello"</example>',
      tools: ['read_file'],
    });
  });

  it('rejects bad front matter with an error naming the file', () => {
    const bad = projectAgent('bad', '---\ndescription: ok\ntools: [Read, Grep\n---\nBody');
    expect(() => findAgent('bad', roots)).toThrow(`Agent file ${bad} has invalid front matter`);
    const turns = userAgent('turns', '---\nmax-turns: many\n---\nBody');
    expect(() => findAgent('turns', roots)).toThrow(
      `Agent file ${turns}: front matter "max-turns"`,
    );
    const list = userAgent('list', '---\n- a\n- b\n---\nBody');
    expect(() => findAgent('list', roots)).toThrow(`Agent file ${list} has invalid front matter`);
    const tools = userAgent('tools', '---\ntools: { read: true }\n---\nBody');
    expect(() => findAgent('tools', roots)).toThrow(`Agent file ${tools}: front matter "tools"`);
  });

  it('never evaluates JavaScript front matter', () => {
    const script = projectAgent(
      'script',
      "---js\n{ description: (globalThis.agentPwned = 'yes') }\n---\nBody",
    );
    expect(() => findAgent('script', roots)).toThrow(
      `Agent file ${script} has invalid front matter`,
    );
    expect((globalThis as Record<string, unknown>).agentPwned).toBeUndefined();
  });

  it.each([
    '../etc/passwd',
    'a/b',
    'a\\b',
    '..',
    '.hidden',
    'a..b',
    '',
    'name.md',
    'x'.repeat(101),
  ])('rejects the name %j', (name) => {
    expect(() => findAgent(name, roots)).toThrow('is not a valid agent name');
  });

  it('accepts kebab, snake and alphanumeric names', () => {
    for (const name of ['kebab-case', 'snake_case', 'Alnum42']) pluginWorker(name, agentFile(name));
    for (const name of ['kebab-case', 'snake_case', 'Alnum42'])
      expect(findAgent(name, roots)?.name).toBe(name);
  });
});

describe('listAgents', () => {
  it('lists each name once at its winning tier, with the tiers it shadows', () => {
    pluginWorker('shared', agentFile('plugin'));
    pluginWorker('plugin-only', agentFile('plugin only'));
    userAgent('shared', agentFile('home'));
    userAgent('user-only', agentFile('home only'));
    projectSkill('shared', agentFile('skill'));
    projectSkill('skill-only', agentFile('skill only'));
    projectAgent('shared', agentFile('project'));
    projectAgent('project-only', agentFile('project only'));
    write(join(roots.projectDir, '.claude', 'agents', 'notes.txt'), 'not an agent');
    write(join(roots.projectDir, '.claude', 'skills', 'empty', 'README.md'), 'no SKILL.md');
    write(join(roots.pluginRoot, 'workers', 'bad name.md'), agentFile('unreachable'));

    const summary = listAgents(roots).map(({ name, tier, description, shadows }) => ({
      name,
      tier,
      description,
      shadows,
    }));
    expect(summary).toEqual([
      {
        name: 'project-only',
        tier: 'project-agent',
        description: 'project only',
        shadows: undefined,
      },
      {
        name: 'shared',
        tier: 'project-agent',
        description: 'project',
        shadows: ['project-skill', 'user-agent', 'plugin-worker'],
      },
      { name: 'skill-only', tier: 'project-skill', description: 'skill only', shadows: undefined },
      { name: 'user-only', tier: 'user-agent', description: 'home only', shadows: undefined },
      {
        name: 'plugin-only',
        tier: 'plugin-worker',
        description: 'plugin only',
        shadows: undefined,
      },
    ]);
  });

  it('lists a broken file with its error instead of failing the whole list', () => {
    const bad = userAgent('broken', '---\ntools: [Read\n---\nBody');
    pluginWorker('broken', agentFile('fine'));
    pluginWorker('fine', agentFile('fine'));
    const agents = listAgents(roots);
    expect(agents.map((agent) => agent.name)).toEqual(['broken', 'fine']);
    expect(agents[0]).toMatchObject({ tier: 'user-agent', path: bad, shadows: ['plugin-worker'] });
    expect(agents[0]?.error).toContain(`Agent file ${bad} has invalid front matter`);
  });

  it('returns nothing when no folder exists', () => {
    expect(listAgents(roots)).toEqual([]);
  });
});

describe('the shipped workers', () => {
  const shipped = readdirSync(join(PLUGIN_ROOT, 'workers')).filter((file) => file.endsWith('.md'));
  const repoRoots = () => ({ projectDir: root, home: root, pluginRoot: PLUGIN_ROOT });

  it('include the five roles, outside agents/ so Claude Code does not load them as subagents', () => {
    expect(shipped.sort()).toEqual([
      'implementer.md',
      'reviewer.md',
      'security-reviewer.md',
      'summarizer.md',
      'tester.md',
    ]);
    for (const file of shipped) {
      expect(() => readFileSync(join(PLUGIN_ROOT, 'agents', file))).toThrow(/ENOENT/);
    }
  });

  it.each(shipped)('%s parses with a name, a description, tools and a turn limit', (file) => {
    const name = basename(file, '.md');
    const agent = findAgent(name, repoRoots());
    expect(agent?.tier).toBe('plugin-worker');
    expect(agent?.description?.length).toBeGreaterThan(20);
    expect(agent?.tools?.length).toBeGreaterThan(2);
    expect(agent?.tools).toContain('read_file');
    expect(agent?.maxTurns).toBeGreaterThan(0);
    expect(matter(readFileSync(agent!.path, 'utf8')).data.name).toBe(name);
    const lines = agent!.body.split('\n').length;
    expect(lines).toBeGreaterThanOrEqual(20);
    expect(lines).toBeLessThanOrEqual(50);
  });

  it('give the reviewer its verdict line', () => {
    expect(findAgent('reviewer', repoRoots())?.body).toMatch(/^VERDICT: pass$/m);
  });
});
