import { mkdirSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import { REPO_ROOT, startServer, type ServerHandle } from '../helpers/mcp-server.ts';
import { createTempEnv, type TempEnv } from '../helpers/temp-env.ts';

let world: TempEnv;
let server: ServerHandle | undefined;

beforeEach(() => {
  world = createTempEnv();
});
afterEach(async () => {
  await server?.close();
  server = undefined;
  world.cleanup();
});

describe('agents_list', () => {
  it("lists the plugin's shipped workers and the project's agents, the project winning", async () => {
    world.writeProjectFile(
      '.claude/agents/security-reviewer.md',
      '---\nname: security-reviewer\ndescription: Our own audit\ntools: Read, Grep\nmodel: opus\n---\nAudit.',
    );
    world.writeProjectFile(
      '.claude/agents/migrations.md',
      '---\ndescription: Writes database migrations\ndelegate-profile: code\nmax-turns: 8\n---\nMigrate.',
    );
    server = await startServer(world.env, world.project);
    const { text, isError } = await server.callText('agents_list', {});
    expect(isError).toBe(false);
    const [header, ...lines] = text.split('\n');
    expect(header).toBe(
      `Agents for ${world.project} (first found wins: .claude/agents/<name>.md → ` +
        '.claude/skills/<name>/SKILL.md → ~/.claude/agents/<name>.md → plugin workers/<name>.md; ' +
        `plugin: ${REPO_ROOT}).`,
    );
    expect(lines).toContain(
      'migrations — Writes database migrations [project-agent: .claude/agents/migrations.md] ' +
        '(profile: code, max turns: 8)',
    );
    expect(lines).toContain(
      'security-reviewer — Our own audit [project-agent: .claude/agents/security-reviewer.md] ' +
        '(tools: read_file,grep, shadows: plugin-worker)',
    );
    for (const worker of ['implementer', 'tester', 'reviewer', 'summarizer']) {
      expect(lines.find((line) => line.startsWith(`${worker} — `))).toMatch(
        new RegExp(
          `\\[plugin-worker: workers/${worker}\\.md\\] \\(tools: read_file,.*max turns: \\d+\\)$`,
        ),
      );
    }
    expect(lines).toHaveLength(6);
  });

  it('takes the plugin root from $CLAUDE_PLUGIN_ROOT and a sub-project from workdir', async () => {
    const plugin = join(world.root, 'plugin');
    mkdirSync(join(plugin, 'workers'), { recursive: true });
    writeFileSync(
      join(plugin, 'workers', 'only.md'),
      '---\ndescription: The only worker\n---\nWork.',
    );
    const other = join(world.project, 'packages', 'other');
    mkdirSync(join(other, '.claude', 'skills', 'docs'), { recursive: true });
    writeFileSync(
      join(other, '.claude', 'skills', 'docs', 'SKILL.md'),
      '---\ndescription: Writes docs\n---\nDocs.',
    );
    world.writeProjectFile('.claude/agents/hidden.md', 'Not listed for another workdir.');
    server = await startServer({ ...world.env, CLAUDE_PLUGIN_ROOT: plugin });
    const { text } = await server.callText('agents_list', { workdir: 'packages/other' });
    expect(text.split('\n').slice(1)).toEqual([
      'docs — Writes docs [project-skill: .claude/skills/docs/SKILL.md]',
      'only — The only worker [plugin-worker: workers/only.md]',
    ]);
  });

  it('reports a broken file and a missing workdir as readable text', async () => {
    world.writeProjectFile('.claude/agents/broken.md', '---\ntools: [Read\n---\nBody');
    server = await startServer(world.env);
    const listed = await server.callText('agents_list', {});
    expect(listed.text).toContain(
      `broken — INVALID: Agent file ${join(world.project, '.claude', 'agents', 'broken.md')} has invalid front matter`,
    );
    const missing = await server.callText('agents_list', { workdir: 'nope' });
    expect(missing).toEqual({
      isError: true,
      text: `workdir "nope" does not exist under the project (${world.project}). Name an existing directory, or omit workdir.`,
    });
  });
});
