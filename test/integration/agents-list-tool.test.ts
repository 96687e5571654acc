import { mkdirSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { describe, expect } from 'vitest';
import { PLUGIN_ROOT } from '../helpers/mcp-server.ts';
import { taskTest as it } from '../helpers/task-world.ts';

it.override('repository', null);

describe('agents_list', () => {
  it("lists the plugin's shipped workers and the project's agents, the project winning", async ({
    world,
    server: servers,
  }) => {
    world.writeProjectFile(
      '.claude/agents/security-reviewer.md',
      '---\nname: security-reviewer\ndescription: Our own audit\ntools: Read, Grep\nmodel: opus\n---\nAudit.',
    );
    world.writeProjectFile(
      '.claude/agents/migrations.md',
      '---\ndescription: Writes database migrations\ndelegate-profile: code\nmax-turns: 8\n---\nMigrate.',
    );
    const server = await servers.start(world.env, world.project);
    const { text, isError } = await server.callText('agents_list', {});
    expect(isError).toBe(false);
    const [header, ...lines] = text.split('\n');
    expect(header).toBe(
      `Agents for ${world.project} (first found wins: .claude/agents/<name>.md → ` +
        '.claude/skills/<name>/SKILL.md → ~/.claude/agents/<name>.md → plugin workers/<name>.md; ' +
        `plugin: ${PLUGIN_ROOT}).`,
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

  it('takes the plugin root from $CLAUDE_PLUGIN_ROOT and a sub-project from workdir', async ({
    world,
    server: servers,
  }) => {
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
    const server = await servers.start({ ...world.env, CLAUDE_PLUGIN_ROOT: plugin });
    const { text } = await server.callText('agents_list', { workdir: 'packages/other' });
    expect(text.split('\n').slice(1)).toEqual([
      'docs — Writes docs [project-skill: .claude/skills/docs/SKILL.md]',
      'only — The only worker [plugin-worker: workers/only.md]',
    ]);
  });

  it('reports a broken file and a missing workdir as readable text', async ({
    world,
    server: servers,
  }) => {
    world.writeProjectFile('.claude/agents/broken.md', '---\ntools: [Read\n---\nBody');
    const server = await servers.start(world.env);
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
