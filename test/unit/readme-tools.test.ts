import { readFileSync } from 'node:fs';
import { describe, expect, it } from 'vitest';
import { z } from 'zod';
import { configSchema } from '../../server/src/config/schema.ts';
import { TOOLS } from '../../server/src/tools/registry.ts';

interface ListedTool {
  name: string;
  title?: string;
  description?: string;
  inputSchema: unknown;
  _meta?: unknown;
}
interface Region {
  name: string;
  page: string;
  start: string;
  end: string;
}
interface CliCommandLine {
  usage: string;
  summary: string;
}
interface ReadmeTools {
  START_MARKER: string;
  END_MARKER: string;
  CLI_REGION: Region;
  parseCliHelp(help: string): CliCommandLine[];
  renderCliTable(commands: CliCommandLine[]): Promise<string>;
  replaceRegion(page: string, table: string, region: Region): string;
  configKeys(schema: unknown): string[];
  documentedKeys(page: string): string[];
  configCoverage(page: string, keys: string[]): string | null;
  firstSentence(text: string): string;
  inputFields(schema: unknown): string;
  renderToolsTable(tools: ListedTool[]): Promise<string>;
  replaceToolsRegion(readme: string, table: string): string;
  staleness(page: string, table: string, region?: Region): string | null;
}

const GENERATOR_URL = new URL('../../scripts/readme-tools.mjs', import.meta.url).href;
const generator = (await import(GENERATOR_URL)) as ReadmeTools;

/** The registry as tools/list shows it: JSON Schema inputs. */
function listedTools(): ListedTool[] {
  return TOOLS.map((tool) => ({
    name: tool.name,
    title: tool.title,
    description: tool.description,
    inputSchema: z.toJSONSchema(z.object(tool.inputSchema)),
  }));
}

function readmeAround(table: string): string {
  return `# x\n\n## Tools\n\n${generator.START_MARKER}\n\n${table}\n\n${generator.END_MARKER}\n\n## Next\n`;
}

describe('docs tools table generator', () => {
  it('takes the first sentence, not a cut at "e.g."', () => {
    expect(
      generator.firstSentence(
        'Runs jobs at once, e.g. one per file. Use it to fan out.\nMore text.',
      ),
    ).toBe('Runs jobs at once, e.g. one per file.');
    expect(generator.firstSentence('One sentence only')).toBe('One sentence only');
  });

  it('lists input fields with optional ones marked and nested job fields', () => {
    const schema = z.toJSONSchema(
      z.object({
        task: z.string(),
        files: z.array(z.string()).optional(),
        jobs: z.array(z.object({ id: z.string().optional(), task: z.string() })),
      }),
    );
    expect(generator.inputFields(schema)).toBe('`task`, `files[]?`, `jobs[]` (`id?`, `task`)');
    expect(generator.inputFields({ type: 'object', properties: {} })).toBe('none');
  });

  it('renders one row per registry tool, in registry order, with its title and first sentence', async () => {
    const table = await generator.renderToolsTable(listedTools());
    const rows = table.split('\n').slice(2);
    expect(rows).toHaveLength(TOOLS.length);
    for (const [index, tool] of TOOLS.entries()) {
      expect(rows[index]).toContain(`\`${tool.name}\``);
      expect(rows[index]).toContain(tool.title);
      expect(rows[index]).toContain(generator.firstSentence(tool.description));
    }
  });

  it('leaves out a tool only the client may call (MCP Apps visibility without model)', async () => {
    const hidden = { name: 'hook_answer', description: 'Internal.', inputSchema: {} };
    const rows = (visibility: string[]) =>
      generator
        .renderToolsTable([...listedTools(), { ...hidden, _meta: { ui: { visibility } } }])
        .then((table) => table.split('\n').slice(2));
    expect(await rows(['app'])).toHaveLength(TOOLS.length);
    expect((await rows(['model', 'app'])).at(-1)).toContain('`hook_answer`');
  });

  it('detects a stale table, and the rewrite makes it current', async () => {
    const tools = listedTools();
    const current = readmeAround(await generator.renderToolsTable(tools));
    expect(generator.staleness(current, await generator.renderToolsTable(tools))).toBeNull();

    const changed = tools.map((tool) =>
      tool.name === 'usage' ? { ...tool, description: 'Reports something else entirely.' } : tool,
    );
    const fresh = await generator.renderToolsTable(changed);
    const problem = generator.staleness(current, fresh);
    expect(problem).toMatch(/differs from the tool registry \(first at line \d+\)/);
    expect(problem).toContain('npm run readme');

    const rewritten = generator.replaceToolsRegion(current, fresh);
    expect(rewritten).toContain('Reports something else entirely.');
    expect(rewritten.endsWith(`${generator.END_MARKER}\n\n## Next\n`)).toBe(true);
    expect(generator.staleness(rewritten, fresh)).toBeNull();
  });

  it('refuses a page without the markers', () => {
    expect(() => generator.replaceToolsRegion('# x\n| tool |\n', '| t |')).toThrow(
      /no tools region/,
    );
  });
});

const HELP = `delegate 0.1.0: hand work to other models from Claude Code or a terminal.

Usage:
  delegate tasks [--json]
      list this project's tasks, one line each
  delegate statusline install|uninstall|show
      install delegate's status line in your Claude Code settings (chains yours)

delegate <command> --help shows a command in detail; delegate --version, its version.
`;

describe('docs CLI table generator', () => {
  it('reads each command and its summary from `delegate --help`, in order', () => {
    expect(generator.parseCliHelp(HELP)).toEqual([
      { usage: 'tasks [--json]', summary: "list this project's tasks, one line each" },
      {
        usage: 'statusline install|uninstall|show',
        summary: "install delegate's status line in your Claude Code settings (chains yours)",
      },
    ]);
    expect(() => generator.parseCliHelp('Usage: nothing here\n')).toThrow(/listed no commands/);
  });

  it('renders one row per command, pipes escaped, and a stale page is caught', async () => {
    const commands = generator.parseCliHelp(HELP);
    const table = await generator.renderCliTable(commands);
    const rows = table.split('\n').slice(2);
    expect(rows).toHaveLength(2);
    expect(rows[1]).toContain('`delegate statusline install\\|uninstall\\|show`');
    const region = generator.CLI_REGION;
    const page = `# CLI\n\n${region.start}\n\n${table}\n\n${region.end}\n`;
    expect(generator.staleness(page, table, region)).toBeNull();

    const added = await generator.renderCliTable([
      ...commands,
      { usage: 'uninstall [--dry-run]', summary: 'remove what the plugin made' },
    ]);
    expect(generator.staleness(page, added, region)).toMatch(
      /docs\/cli\.md's CLI commands table differs from `delegate --help`/,
    );
    expect(generator.replaceRegion(page, added, region)).toContain(
      '`delegate uninstall [--dry-run]`',
    );
    expect(() => generator.replaceRegion('# CLI\n', table, region)).toThrow(/has no cli region/);
  });
});

describe('configuration keys check', () => {
  const keys = generator.configKeys(configSchema);

  it('lists profile fields by name and nested settings by path, not $schema or profiles', () => {
    for (const key of ['baseUrl', 'idleTimeoutS', 'allowHosts', 'defaultProfile', 'sandbox']) {
      expect(keys).toContain(key);
    }
    for (const key of ['tasks.fixRounds', 'budget.perTaskUsd', 'largeRead.mode']) {
      expect(keys).toContain(key);
    }
    expect(keys).not.toContain('$schema');
    expect(keys).not.toContain('profiles');
    expect(keys).not.toContain('tasks');
  });

  it.each([
    ['every key documented', keys, null],
    ['a key missing', keys.filter((key) => key !== 'idleTimeoutS'), /not documented: idleTimeoutS/],
    ['a key the schema lacks', [...keys, 'retries'], /documented but not in the schema: retries/],
  ])('%s', (_name, documented, expected) => {
    const page = documented.map((key) => `| \`${key}\` | what it does |`).join('\n');
    expect(generator.documentedKeys(page)).toEqual(documented);
    const problem = generator.configCoverage(page, keys);
    if (expected === null) expect(problem).toBeNull();
    else expect(problem).toMatch(expected);
  });

  it('docs/configuration.md documents exactly the schema', () => {
    const page = readFileSync(new URL('../../docs/configuration.md', import.meta.url), 'utf8');
    expect(generator.configCoverage(page, keys)).toBeNull();
  });
});
