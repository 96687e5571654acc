import { describe, expect, it } from 'vitest';
import { z } from 'zod';
import { TOOLS } from '../../server/src/tools/registry.ts';

interface ListedTool {
  name: string;
  title?: string;
  description?: string;
  inputSchema: unknown;
}
interface ReadmeTools {
  START_MARKER: string;
  END_MARKER: string;
  firstSentence(text: string): string;
  inputFields(schema: unknown): string;
  renderToolsTable(tools: ListedTool[]): Promise<string>;
  replaceToolsRegion(readme: string, table: string): string;
  staleness(readme: string, table: string): string | null;
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

describe('README tools table generator', () => {
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

  it('refuses a README without the markers', () => {
    expect(() => generator.replaceToolsRegion('# x\n| tool |\n', '| t |')).toThrow(
      /no tools region/,
    );
  });
});
