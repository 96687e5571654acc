// `npm run bench`: runs every bench and rewrites BENCHMARKS.md with the medians and ratios.
import { cpus } from 'node:os';
import { readFileSync, writeFileSync } from 'node:fs';
import { dirname, join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { benchAttempts } from './attempts.mjs';
import { benchContextSize } from './context-size.mjs';
import { benchExplore } from './explore.mjs';
import { benchHookTime } from './hook-time.mjs';
import { benchHooksInClaudeCode } from './hooks-in-claude-code.mjs';
import { benchProviderEngine } from './provider-engine.mjs';
import { benchRouting } from './routing.mjs';
import { benchRunners } from './runners.mjs';
import { benchServerStart } from './server-start.mjs';
import { benchStatusLine } from './statusline.mjs';
import { benchTasks } from './tasks.mjs';
import { benchWorkerMemory } from './worker-memory.mjs';

const root = join(dirname(fileURLToPath(import.meta.url)), '..');
const BENCHES = [
  benchServerStart,
  benchHookTime,
  benchHooksInClaudeCode,
  benchProviderEngine,
  benchTasks,
  benchWorkerMemory,
  benchAttempts,
  benchContextSize,
  benchStatusLine,
  benchExplore,
  benchRunners,
  benchRouting,
];

// `npm run bench -- routing explore`: only the benches whose names hold one of the words; their
// sections replace the same sections of the BENCHMARKS.md there is, the others stay.
const only = process.argv.slice(2).map((word) => word.toLowerCase());
const chosen = only.length
  ? BENCHES.filter((bench) => only.some((word) => bench.name.toLowerCase().includes(word)))
  : BENCHES;

const sections = [];
for (const bench of chosen) {
  const section = await bench(root);
  sections.push(section);
  console.log(`\n${section.title}`);
  for (const [figure, value, bar] of section.rows)
    console.log(`  ${figure}: ${value}${bar ? ` (${bar})` : ''}`);
}

const machine = `Node ${process.version}, ${cpus().length} × ${cpus()[0]?.model ?? 'unknown CPU'}, ${process.platform}/${process.arch}`;
const render = (section) =>
  [
    `## ${section.title}`,
    '',
    section.note,
    '',
    '| figure | measured | bar |',
    '|---|---|---|',
    ...section.rows.map((row) => `| ${row.join(' | ')} |`),
  ].join('\n');
const file = join(root, 'BENCHMARKS.md');
const stamp = `on ${new Date().toISOString().slice(0, 10)}: ${machine}`;
let text;
if (only.length) {
  // The file as it is, each section measured now replacing its old one (new ones at the end),
  // and a line in the head naming what was measured again, when and where.
  const parts = readFileSync(file, 'utf8').split(/\n(?=## )/);
  const kept = parts.slice(1).map((part) => {
    const title = part.slice(3, part.indexOf('\n'));
    const fresh = sections.find((section) => section.title === title);
    return fresh ? render(fresh) : part.trimEnd();
  });
  const added = sections.filter(
    (section) => !kept.some((part) => part.startsWith(`## ${section.title}\n`)),
  );
  // An earlier "Measured again" line keeps only the sections it still stands for: those not
  // measured now; with none left, it goes.
  const remeasured = new Set(sections.map((section) => section.title));
  const standing = (line) => {
    if (!line.startsWith('Measured again')) return line;
    // `… (command) on <date>: <machine>: <titles>.` (a title may hold ': ', the rest do not)
    const at = line.indexOf(') on ');
    const fields = line.slice(at).split(': ');
    const titles = fields.slice(2).join(': ').replace(/\.$/, '').split('; ');
    const left = titles.filter((title) => !remeasured.has(title));
    if (left.length === 0) return undefined;
    return `${line.slice(0, at)}${fields.slice(0, 2).join(': ')}: ${left.join('; ')}.`;
  };
  const head = parts[0]
    .trimEnd()
    .split('\n')
    .map(standing)
    .filter((line) => line !== undefined);
  const again = `Measured again alone (\`npm run bench -- ${only.join(' ')}\`) ${stamp}: ${sections.map((section) => section.title).join('; ')}.`;
  text = `${[...head, again].join('\n')}\n\n${[...kept, ...added.map(render)].join('\n\n')}\n`;
} else {
  text =
    `# Benchmarks\n\nWritten by \`npm run bench\` (scripts in \`bench/\`) ${stamp}.\n` +
    'Medians of repeated runs, each beside a baseline measured in the same run; never asserted in tests.\n\n' +
    `${sections.map(render).join('\n\n')}\n`;
}
writeFileSync(file, text);
console.log('\nWrote BENCHMARKS.md');
