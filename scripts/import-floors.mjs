// The floor order of server/src, checked: every import goes down a floor or stays in its folder,
// no file imports itself back through others (type imports count), and no entry loads the tool
// services at start-up. `node scripts/import-floors.mjs` prints the problems; the unit test
// test/unit/import-floors.test.ts runs the same check in `npm run verify`.
import { readFileSync, readdirSync, statSync } from 'node:fs';
import { dirname, join, relative, resolve } from 'node:path';
import { fileURLToPath } from 'node:url';

/** Bottom to top; folders on one line share a floor and may not import each other. */
export const FLOORS = [
  ['util'],
  ['config'],
  ['guard'],
  ['wire'],
  ['profiles'],
  ['store'],
  ['git'],
  ['runners'],
  ['providers'],
  ['calls'],
  ['sandbox'],
  ['agent'],
  ['tasks', 'delegation'],
  ['tools'],
  ['server', 'cli', 'hooks'],
];

/**
 * What the start-up of each entry must not load statically: the MCP server answers
 * `initialize` and `tools/list`, and a hook answers its call, before the services, the
 * engines and the provider clients come in (with the first tool call, by dynamic import).
 * The config's zod schemas, built as their module loads, come in with them (a few ms a start).
 */
const HEAVY = [
  'config/schema.ts',
  'tools/services.ts',
  'providers/',
  'calls/',
  'sandbox/',
  'agent/',
  'tasks/',
  'delegation/',
];
export const START_UP = {
  'main.ts': HEAVY,
  'hooks/pre-tool-use.ts': HEAVY,
  'hooks/post-tool-use.ts': HEAVY,
  'hooks/session-start.ts': HEAVY,
  'cli/main.ts': HEAVY,
};

/**
 * What a task worker never loads while it runs, through static imports or the dynamic ones its
 * engines come in by: the config's zod schemas (about 3 MB of every waiting worker) and the
 * server's tools, except through the one module that loads the schemas when a config file
 * changed since the server validated it (profiles/config-validation.ts).
 */
export const WORKER = {
  entry: 'tasks/worker-main.ts',
  never: ['config/schema.ts', 'profiles/load-config.ts', 'tools/'],
  lazyFrom: 'profiles/config-validation.ts',
};

const IMPORT =
  /(?:^|\n)\s*(import|export)\s+(type\s+)?(?:[^'";]*?\sfrom\s+)?['"](\.{1,2}\/[^'"]+)['"]|import\(\s*['"](\.{1,2}\/[^'"]+)['"]\s*\)/g;

/** Every relative import of the .ts files under `root`: {from, to, typeOnly, dynamic}. */
export function importGraph(root) {
  const files = [];
  (function walk(dir) {
    for (const name of readdirSync(dir)) {
      const path = join(dir, name);
      if (statSync(path).isDirectory()) walk(path);
      else if (path.endsWith('.ts')) files.push(relative(root, path));
    }
  })(root);
  const edges = [];
  for (const file of files) {
    const text = readFileSync(join(root, file), 'utf8');
    for (const match of text.matchAll(IMPORT)) {
      const spec = match[3] ?? match[4];
      const to = relative(root, resolve(root, dirname(file), spec));
      edges.push({ from: file, to, typeOnly: Boolean(match[2]), dynamic: Boolean(match[4]) });
    }
  }
  return { files, edges };
}

/** The folder a file belongs to; files at the root are the server entry (`server`). */
export function folderOf(file) {
  return file.includes('/') ? file.split('/')[0] : 'server';
}

function floorOf(folder) {
  return FLOORS.findIndex((floor) => floor.includes(folder));
}

/** Strongly connected groups of more than one file (Tarjan), over every import kind. */
function cycles(files, edges) {
  const next = new Map(files.map((file) => [file, []]));
  for (const edge of edges) next.get(edge.from)?.push(edge.to);
  const index = new Map();
  const low = new Map();
  const stack = [];
  const onStack = new Set();
  const groups = [];
  let counter = 0;
  const visit = (file) => {
    index.set(file, counter);
    low.set(file, counter);
    counter += 1;
    stack.push(file);
    onStack.add(file);
    for (const target of next.get(file) ?? []) {
      if (!index.has(target)) {
        visit(target);
        low.set(file, Math.min(low.get(file), low.get(target)));
      } else if (onStack.has(target)) {
        low.set(file, Math.min(low.get(file), index.get(target)));
      }
    }
    if (low.get(file) !== index.get(file)) return;
    const group = [];
    let member;
    do {
      member = stack.pop();
      onStack.delete(member);
      group.push(member);
    } while (member !== file);
    if (group.length > 1) groups.push(group.sort());
  };
  for (const file of files) if (!index.has(file)) visit(file);
  return groups;
}

/** The files `entry` loads at run time through the edges `follows` accepts (never type imports). */
function closure(entry, edges, follows) {
  const seen = new Set([entry]);
  const queue = [entry];
  while (queue.length > 0) {
    const file = queue.shift();
    for (const edge of edges) {
      if (edge.from !== file || edge.typeOnly || !follows(edge) || seen.has(edge.to)) continue;
      seen.add(edge.to);
      queue.push(edge.to);
    }
  }
  return seen;
}

const isIn = (file, paths) =>
  paths.some((path) => file === path || (path.endsWith('/') && file.startsWith(path)));

/** One line per broken rule; empty when the floors hold. */
export function floorProblems({ files, edges }, startUp = START_UP, worker = WORKER) {
  const problems = [];
  for (const folder of new Set(files.map(folderOf))) {
    if (floorOf(folder) < 0) problems.push(`folder ${folder}/ is on no floor (add it to FLOORS)`);
  }
  for (const edge of edges) {
    const [from, to] = [folderOf(edge.from), folderOf(edge.to)];
    if (from === to) continue;
    const [fromFloor, toFloor] = [floorOf(from), floorOf(to)];
    if (fromFloor < 0 || toFloor < 0) continue;
    if (toFloor >= fromFloor) {
      const how = toFloor === fromFloor ? 'sideways' : 'up';
      problems.push(`${edge.from} imports ${edge.to}: ${how} from ${from}/ to ${to}/`);
    }
  }
  for (const group of cycles(files, edges)) problems.push(`import cycle: ${group.join(' → ')}`);
  for (const [entry, forbidden] of Object.entries(startUp)) {
    if (!files.includes(entry)) continue;
    for (const file of [...closure(entry, edges, (edge) => !edge.dynamic)].sort()) {
      if (isIn(file, forbidden))
        problems.push(`${entry} loads ${file} at start-up (import it lazily)`);
    }
  }
  if (files.includes(worker.entry)) {
    const runs = closure(
      worker.entry,
      edges,
      (edge) => !edge.dynamic || edge.from !== worker.lazyFrom,
    );
    for (const file of [...runs].sort()) {
      if (isIn(file, worker.never)) {
        problems.push(
          `${worker.entry} loads ${file} as it runs (only ${worker.lazyFrom} may, lazily)`,
        );
      }
    }
  }
  return problems;
}

if (process.argv[1] === fileURLToPath(import.meta.url)) {
  const root = resolve(dirname(fileURLToPath(import.meta.url)), '..', 'server', 'src');
  const problems = floorProblems(importGraph(root));
  for (const problem of problems) console.log(problem);
  console.log(problems.length === 0 ? 'floors hold' : `${problems.length} problems`);
  process.exitCode = problems.length === 0 ? 0 : 1;
}
