// `npm run bench`: runs every bench and rewrites BENCHMARKS.md with the medians and ratios.
import { cpus } from 'node:os';
import { writeFileSync } from 'node:fs';
import { dirname, join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { benchAttempts } from './attempts.mjs';
import { benchContextSize } from './context-size.mjs';
import { benchExplore } from './explore.mjs';
import { benchHookTime } from './hook-time.mjs';
import { benchProviderEngine } from './provider-engine.mjs';
import { benchRunners } from './runners.mjs';
import { benchServerStart } from './server-start.mjs';
import { benchStatusLine } from './statusline.mjs';
import { benchTasks } from './tasks.mjs';

const root = join(dirname(fileURLToPath(import.meta.url)), '..');
const BENCHES = [
  benchServerStart,
  benchHookTime,
  benchProviderEngine,
  benchTasks,
  benchAttempts,
  benchContextSize,
  benchStatusLine,
  benchExplore,
  benchRunners,
];

const sections = [];
for (const bench of BENCHES) {
  const section = await bench(root);
  sections.push(section);
  console.log(`\n${section.title}`);
  for (const [figure, value, bar] of section.rows)
    console.log(`  ${figure}: ${value}${bar ? ` (${bar})` : ''}`);
}

const machine = `Node ${process.version}, ${cpus().length} × ${cpus()[0]?.model ?? 'unknown CPU'}, ${process.platform}/${process.arch}`;
const body = sections
  .map((section) =>
    [
      `## ${section.title}`,
      '',
      section.note,
      '',
      '| figure | measured | bar |',
      '|---|---|---|',
      ...section.rows.map((row) => `| ${row.join(' | ')} |`),
    ].join('\n'),
  )
  .join('\n\n');
writeFileSync(
  join(root, 'BENCHMARKS.md'),
  `# Benchmarks\n\nWritten by \`npm run bench\` (scripts in \`bench/\`) on ${new Date().toISOString().slice(0, 10)}: ${machine}.\n` +
    'Medians of repeated runs, each beside a baseline measured in the same run; never asserted in tests.\n\n' +
    `${body}\n`,
);
console.log('\nWrote BENCHMARKS.md');
