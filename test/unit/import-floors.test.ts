import { mkdirSync, mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { dirname, join } from 'node:path';
import { afterEach, describe, expect, it } from 'vitest';

interface ImportEdge {
  from: string;
  to: string;
  typeOnly: boolean;
  dynamic: boolean;
}
interface ImportGraph {
  files: string[];
  edges: ImportEdge[];
}
interface ImportFloors {
  FLOORS: string[][];
  importGraph(root: string): ImportGraph;
  floorProblems(graph: ImportGraph, startUp?: Record<string, string[]>): string[];
}

const CHECKER_URL = new URL('../../scripts/import-floors.mjs', import.meta.url).href;
const floors = (await import(CHECKER_URL)) as ImportFloors;
const SOURCES = new URL('../../server/src', import.meta.url).pathname;

let tree: string | undefined;
afterEach(() => {
  if (tree) rmSync(tree, { recursive: true, force: true });
  tree = undefined;
});

/** A small source tree of `files` (path → text), as the checker reads server/src. */
function sourceTree(files: Record<string, string>): string {
  tree = mkdtempSync(join(tmpdir(), 'delegate-floors-'));
  for (const [path, text] of Object.entries(files)) {
    mkdirSync(dirname(join(tree, path)), { recursive: true });
    writeFileSync(join(tree, path), text);
  }
  return tree;
}

describe('the floor order of server/src', () => {
  it('holds: no climbing or sideways import, no cycle, no services at start-up', () => {
    const graph = floors.importGraph(SOURCES);
    expect(graph.edges.length).toBeGreaterThan(500);
    expect(floors.floorProblems(graph)).toEqual([]);
  });

  it('is explained in docs/architecture.md, which names every folder', () => {
    const page = readFileSync(new URL('../../docs/architecture.md', import.meta.url), 'utf8');
    const folders = floors.FLOORS.flat().filter((folder) => folder !== 'server');
    expect(folders.filter((folder) => !page.includes(`\`${folder}/\``))).toEqual([]);
    expect(page).toContain('`main.ts`');
  });
});

describe('the floor check', () => {
  const base = {
    'util/leaf.ts': 'export const leaf = 1;\n',
    'config/paths.ts': "import { leaf } from '../util/leaf.ts';\nexport const paths = leaf;\n",
    'tools/services.ts': "export { paths } from '../config/paths.ts';\n",
    'main.ts': "export const loadServices = () => import('./tools/services.ts');\n",
  };

  it('passes a tree that imports only downward and loads the services lazily', () => {
    expect(floors.floorProblems(floors.importGraph(sourceTree(base)))).toEqual([]);
  });

  it('lets a task worker load the config schemas through the lazy validation only', () => {
    const files = {
      ...base,
      'tasks/worker-main.ts':
        "import { check } from '../profiles/config-validation.ts';\ncheck();\n",
      'profiles/config-validation.ts':
        "export const check = () => import('../config/schema.ts');\n",
      'config/schema.ts': 'export const configSchema = 1;\n',
    };
    expect(floors.floorProblems(floors.importGraph(sourceTree(files)))).toEqual([]);
  });

  it.each<{ name: string; files: Record<string, string>; problem: string }>([
    {
      name: 'an import that climbs (a type import counts)',
      files: { 'util/leaf.ts': "import type { paths } from '../config/paths.ts';\n" },
      problem: 'util/leaf.ts imports config/paths.ts: up from util/ to config/',
    },
    {
      name: 'a sideways import between folders of one floor',
      files: {
        'tasks/run.ts': "import { plan } from '../delegation/plan.ts';\n",
        'delegation/plan.ts': 'export const plan = 1;\n',
      },
      problem: 'tasks/run.ts imports delegation/plan.ts: sideways from tasks/ to delegation/',
    },
    {
      name: 'a cycle inside one folder, through a type import',
      files: {
        'config/a.ts': "import { b } from './b.ts';\nexport const a = b;\n",
        'config/b.ts': "import type { a } from './a.ts';\nexport const b = 2;\n",
      },
      problem: 'import cycle: config/a.ts → config/b.ts',
    },
    {
      name: 'a static import of the services on the start-up path',
      files: {
        'main.ts': "import { paths } from './tools/registry.ts';\nexport const run = paths;\n",
        'tools/registry.ts': "export { paths } from './services.ts';\n",
      },
      problem: 'main.ts loads tools/services.ts at start-up (import it lazily)',
    },
    {
      name: 'a hook that loads the task engine when it starts',
      files: {
        'hooks/pre-tool-use.ts': "import { run } from '../tasks/run.ts';\nrun();\n",
        'tasks/run.ts': 'export const run = () => 1;\n',
      },
      problem: 'hooks/pre-tool-use.ts loads tasks/run.ts at start-up (import it lazily)',
    },
    {
      name: 'a task worker whose engine loads the config schemas',
      files: {
        'tasks/worker-main.ts': "export const run = () => import('./engine.ts');\n",
        'tasks/engine.ts':
          "import { configSchema } from '../config/schema.ts';\nexport const e = configSchema;\n",
        'config/schema.ts': 'export const configSchema = 1;\n',
      },
      problem:
        'tasks/worker-main.ts loads config/schema.ts as it runs (only profiles/config-validation.ts may, lazily)',
    },
    {
      name: 'a folder on no floor',
      files: { 'misc/thing.ts': 'export const thing = 1;\n' },
      problem: 'folder misc/ is on no floor (add it to FLOORS)',
    },
  ])('fails on $name', ({ files, problem }) => {
    const graph = floors.importGraph(sourceTree({ ...base, ...files }));
    expect(floors.floorProblems(graph)).toContain(problem);
  });
});
