#!/usr/bin/env node
// Writes the README's tools table from what the built server answers to tools/list (the
// registry in server/src/tools/registry.ts, as the model sees it), between two markers.
//   node scripts/readme-tools.mjs          rewrite the table (after `npm run build`)
//   node scripts/readme-tools.mjs --check  exit 1 when the table differs from the registry
import { Client } from '@modelcontextprotocol/sdk/client/index.js';
import { StdioClientTransport } from '@modelcontextprotocol/sdk/client/stdio.js';
import { existsSync, mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { dirname, join } from 'node:path';
import { fileURLToPath, pathToFileURL } from 'node:url';
import * as prettier from 'prettier';

const ROOT = join(dirname(fileURLToPath(import.meta.url)), '..');
export const README = join(ROOT, 'README.md');
const SERVER = join(ROOT, 'dist', 'server.mjs');
export const START_MARKER =
  '<!-- tools:start — generated from the tool registry by `npm run readme`; do not edit -->';
export const END_MARKER = '<!-- tools:end -->';

/** The first sentence of a description: up to the first `.`, `!` or `?` followed by a capital. */
export function firstSentence(text) {
  const match = /^(.+?[.!?])\s+(?=[A-Z])/s.exec(text.trim());
  return (match ? match[1] : text.trim()).replace(/\s+/g, ' ');
}

/** `a`, `b?`, `jobs[]` (`id?`, `task`, …): a JSON Schema object's fields, optional ones marked. */
export function inputFields(schema) {
  const required = new Set(schema?.required ?? []);
  const fields = Object.entries(schema?.properties ?? {}).map(([name, property]) => {
    const mark = required.has(name) ? '' : '?';
    const items = property?.type === 'array' ? property.items : undefined;
    if (items?.type === 'object') return `\`${name}[]\`${mark} (${inputFields(items)})`;
    return `\`${name}${items ? '[]' : ''}${mark}\``;
  });
  return fields.length ? fields.join(', ') : 'none';
}

const cell = (text) => text.replace(/\|/g, '\\|');

/** The table for tools as tools/list returns them, formatted the way Prettier keeps it. */
export async function renderToolsTable(tools) {
  const rows = tools.map((tool) =>
    [
      `\`${tool.name}\``,
      cell(tool.title ?? tool.annotations?.title ?? ''),
      cell(firstSentence(tool.description ?? '')),
      cell(inputFields(tool.inputSchema)),
    ].join(' | '),
  );
  const table = [
    '| tool | title | what it does | inputs |',
    '| --- | --- | --- | --- |',
    ...rows.map((row) => `| ${row} |`),
  ].join('\n');
  const options = (await prettier.resolveConfig(README)) ?? {};
  return (await prettier.format(table, { ...options, parser: 'markdown' })).trimEnd();
}

/** The README with the region between the markers replaced by `table`. */
export function replaceToolsRegion(readme, table) {
  const start = readme.indexOf(START_MARKER);
  const end = readme.indexOf(END_MARKER);
  if (start < 0 || end < start) {
    throw new Error(
      `README.md has no tools region: put the lines\n${START_MARKER}\n${END_MARKER}\nwhere the table goes.`,
    );
  }
  return `${readme.slice(0, start + START_MARKER.length)}\n\n${table}\n\n${readme.slice(end)}`;
}

/** Null when the README's table matches `table`; else what to do about it. */
export function staleness(readme, table) {
  const expected = replaceToolsRegion(readme, table);
  if (expected === readme) return null;
  const actualLines = readme.split('\n');
  const line = expected.split('\n').findIndex((text, index) => text !== actualLines[index]);
  return (
    `README.md's tools table differs from the tool registry (first at line ${line + 1}).\n` +
    'Run `npm run build && npm run readme` and commit README.md.'
  );
}

/** tools/list of the built server, started with an empty private home. */
export async function listTools(serverPath = SERVER) {
  if (!existsSync(serverPath)) throw new Error(`${serverPath} is missing: run \`npm run build\`.`);
  const home = mkdtempSync(join(tmpdir(), 'delegate-readme-'));
  const transport = new StdioClientTransport({
    command: process.execPath,
    args: [serverPath],
    env: { PATH: process.env.PATH ?? '', HOME: home, DELEGATE_HOME: join(home, 'data') },
    cwd: home,
    stderr: 'ignore',
  });
  const client = new Client({ name: 'readme-tools', version: '1.0.0' });
  try {
    await client.connect(transport);
    return (await client.listTools()).tools;
  } finally {
    await client.close();
    rmSync(home, { recursive: true, force: true });
  }
}

async function main(args) {
  const table = await renderToolsTable(await listTools());
  const readme = readFileSync(README, 'utf8');
  if (args.includes('--check')) {
    const problem = staleness(readme, table);
    if (problem) {
      process.stderr.write(`${problem}\n`);
      return 1;
    }
    process.stdout.write('README.md tools table matches the registry.\n');
    return 0;
  }
  const updated = replaceToolsRegion(readme, table);
  if (updated !== readme) writeFileSync(README, updated);
  process.stdout.write(
    `README.md tools table ${updated === readme ? 'unchanged' : 'rewritten'}.\n`,
  );
  return 0;
}

if (process.argv[1] && import.meta.url === pathToFileURL(process.argv[1]).href) {
  main(process.argv.slice(2)).then(
    (code) => (process.exitCode = code),
    (error) => {
      process.stderr.write(`readme-tools: ${error.message}\n`);
      process.exitCode = 1;
    },
  );
}
