#!/usr/bin/env node
// Writes the generated reference tables of the docs, each between two markers:
// - docs/tools.md: the tools, from what the built server answers to tools/list (the registry in
//   server/src/tools/registry.ts, as the model sees it);
// - docs/cli.md: the CLI commands, from what the built CLI prints for `delegate --help`.
// And it checks that docs/configuration.md's tables name every key of the config schema
// (server/src/config/schema.ts), and no key the schema lacks.
//   node scripts/readme-tools.mjs          rewrite the tables (after `npm run build`)
//   node scripts/readme-tools.mjs --check  exit 1 when a table differs from the code
import { execFileSync } from 'node:child_process';
import { existsSync, mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { dirname, join } from 'node:path';
import { fileURLToPath, pathToFileURL } from 'node:url';
import * as esbuild from 'esbuild';
import * as prettier from 'prettier';
import { toolsListOf } from './built-server.mjs';

const ROOT = join(dirname(fileURLToPath(import.meta.url)), '..');
export const TOOLS_PAGE = join(ROOT, 'docs', 'tools.md');
export const CLI_PAGE = join(ROOT, 'docs', 'cli.md');
export const CONFIG_PAGE = join(ROOT, 'docs', 'configuration.md');
const CONFIG_SCHEMA = join(ROOT, 'server', 'src', 'config', 'schema.ts');
const SERVER = join(ROOT, 'plugin', 'dist', 'server.mjs');
const CLI = join(ROOT, 'plugin', 'dist', 'cli.mjs');
export const START_MARKER =
  '<!-- tools:start — generated from the tool registry by `npm run readme`; do not edit -->';
export const END_MARKER = '<!-- tools:end -->';
export const CLI_START_MARKER =
  '<!-- cli:start — generated from `delegate --help` by `npm run readme`; do not edit -->';
export const CLI_END_MARKER = '<!-- cli:end -->';

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

/** A tool MCP Apps visibility keeps from the model (`_meta.ui.visibility` without `model`). */
const hiddenFromModel = (tool) => {
  const visibility = tool._meta?.ui?.visibility;
  return Array.isArray(visibility) && !visibility.includes('model');
};

/**
 * The table for tools as the model sees them in tools/list (a tool only the client calls, such as
 * the hooks' `hook_answer`, is left out), formatted the way Prettier keeps it.
 */
export async function renderToolsTable(tools) {
  const rows = tools
    .filter((tool) => !hiddenFromModel(tool))
    .map((tool) =>
      [
        `\`${tool.name}\``,
        cell(tool.title ?? tool.annotations?.title ?? ''),
        cell(firstSentence(tool.description ?? '')),
        cell(inputFields(tool.inputSchema)),
      ].join(' | '),
    );
  return formatTable(['tool', 'title', 'what it does', 'inputs'], rows);
}

/** A markdown table formatted the way Prettier keeps it. */
async function formatTable(headers, rows) {
  const table = [
    `| ${headers.join(' | ')} |`,
    `| ${headers.map(() => '---').join(' | ')} |`,
    ...rows.map((row) => `| ${row} |`),
  ].join('\n');
  const options = (await prettier.resolveConfig(TOOLS_PAGE)) ?? {};
  return (await prettier.format(table, { ...options, parser: 'markdown' })).trimEnd();
}

/**
 * The commands `delegate --help` lists: each is `  delegate <usage>` followed by an indented
 * summary line.
 */
export function parseCliHelp(help) {
  const commands = [];
  const lines = help.split('\n');
  for (const [index, line] of lines.entries()) {
    const usage = /^ {2}delegate (\S.*)$/.exec(line);
    const summary = lines[index + 1]?.match(/^ {6}(\S.*)$/);
    if (usage && summary) commands.push({ usage: usage[1].trim(), summary: summary[1].trim() });
  }
  if (commands.length === 0) throw new Error('`delegate --help` listed no commands.');
  return commands;
}

/** The CLI table: one row per command, in the order `delegate --help` lists them. */
export async function renderCliTable(commands) {
  const rows = commands.map(({ usage, summary }) =>
    [`\`delegate ${cell(usage)}\``, cell(summary)].join(' | '),
  );
  return formatTable(['command', 'what it does'], rows);
}

/** One generated region: which page, its markers, and what the table is generated from. */
export const TOOLS_REGION = {
  name: 'tools',
  page: 'docs/tools.md',
  what: 'tools table',
  source: 'the tool registry',
  start: START_MARKER,
  end: END_MARKER,
};
export const CLI_REGION = {
  name: 'cli',
  page: 'docs/cli.md',
  what: 'CLI commands table',
  source: '`delegate --help`',
  start: CLI_START_MARKER,
  end: CLI_END_MARKER,
};

/** The page with the region between the region's markers replaced by `table`. */
export function replaceRegion(text, table, region = TOOLS_REGION) {
  const start = text.indexOf(region.start);
  const end = text.indexOf(region.end);
  if (start < 0 || end < start) {
    throw new Error(
      `${region.page} has no ${region.name} region: put the lines\n${region.start}\n${region.end}\nwhere the table goes.`,
    );
  }
  return `${text.slice(0, start + region.start.length)}\n\n${table}\n\n${text.slice(end)}`;
}
/** The tools region of `page` replaced by `table`. */
export const replaceToolsRegion = (page, table) => replaceRegion(page, table, TOOLS_REGION);

/** Null when the page's table matches `table`; else what to do about it. */
export function staleness(text, table, region = TOOLS_REGION) {
  const expected = replaceRegion(text, table, region);
  if (expected === text) return null;
  const actualLines = text.split('\n');
  const line = expected.split('\n').findIndex((current, index) => current !== actualLines[index]);
  return (
    `${region.page}'s ${region.what} differs from ${region.source} (first at line ${line + 1}).\n` +
    `Run \`npm run build && npm run readme\` and commit ${region.page}.`
  );
}

/** The tools of the built server's tools/list, started with an empty private home. */
export async function listTools(serverPath = SERVER) {
  return (await toolsListOf(serverPath)).tools;
}

/** What the built CLI prints for `delegate --help`. */
export function cliHelp(cliPath = CLI) {
  if (!existsSync(cliPath)) throw new Error(`${cliPath} is missing: run \`npm run build\`.`);
  const home = mkdtempSync(join(tmpdir(), 'delegate-readme-'));
  try {
    return execFileSync(process.execPath, [cliPath, '--help'], {
      env: { PATH: process.env.PATH ?? '', HOME: home, DELEGATE_HOME: join(home, 'data') },
      cwd: home,
      encoding: 'utf8',
    });
  } finally {
    rmSync(home, { recursive: true, force: true });
  }
}

const shapeOf = (schema) => schema?._zod?.def?.shape ?? schema?.shape;
const unwrapped = (schema) =>
  schema?._zod?.def?.type === 'optional' ? schema._zod.def.innerType : schema;

/**
 * The keys a config file may hold, as the docs name them: each profile field by its name
 * (`baseUrl`), each top-level setting by its path (`tasks.fixRounds`, `runners.<name>.host`); `$schema` and the
 * `profiles` map itself are left out.
 */
export function configKeys(configSchema) {
  const keys = [];
  for (const [name, field] of Object.entries(shapeOf(configSchema))) {
    const inner = unwrapped(field);
    if (name === '$schema') continue;
    if (name === 'profiles') {
      keys.push(...Object.keys(shapeOf(inner._zod.def.valueType)));
    } else if (inner._zod.def.type === 'record') {
      // A map of named entries other than profiles (runners): each field as `runners.<name>.host`;
      // a map of lists (projectApprovals) by its name.
      const entry = shapeOf(inner._zod.def.valueType);
      keys.push(...(entry ? Object.keys(entry).map((child) => `${name}.<name>.${child}`) : [name]));
    } else if (inner._zod.def.type === 'object') {
      keys.push(...Object.keys(shapeOf(inner)).map((child) => `${name}.${child}`));
    } else {
      keys.push(name);
    }
  }
  return keys;
}

/** The first cells of the page's table rows that are one code span: the keys it documents. */
export function documentedKeys(page) {
  return [...page.matchAll(/^\| `([^`|]+)` +\|/gm)].map((match) => match[1]);
}

/** Null when the page documents exactly the schema's keys; else what is missing or extra. */
export function configCoverage(page, keys) {
  const documented = new Set(documentedKeys(page));
  const known = new Set(keys);
  const missing = keys.filter((key) => !documented.has(key));
  const extra = [...documented].filter((key) => !known.has(key));
  if (missing.length === 0 && extra.length === 0) return null;
  return (
    'docs/configuration.md does not match the config schema (server/src/config/schema.ts):' +
    (missing.length ? `\n  not documented: ${missing.join(', ')}` : '') +
    (extra.length ? `\n  documented but not in the schema: ${extra.join(', ')}` : '') +
    '\nAdd or remove the rows in its tables and commit it.'
  );
}

/** The config schema, bundled from its TypeScript source (with zod) and imported. */
export async function loadConfigSchema(path = CONFIG_SCHEMA) {
  const built = await esbuild.build({
    entryPoints: [path],
    bundle: true,
    format: 'esm',
    platform: 'node',
    write: false,
    logLevel: 'silent',
  });
  const code = Buffer.from(built.outputFiles[0].text).toString('base64');
  return (await import(`data:text/javascript;base64,${code}`)).configSchema;
}

/** Checks or rewrites one region; returns whether it was current. */
function syncRegion(path, region, table, shouldCheck) {
  const text = readFileSync(path, 'utf8');
  if (shouldCheck) {
    const problem = staleness(text, table, region);
    if (problem) process.stderr.write(`${problem}\n`);
    else process.stdout.write(`${region.page} ${region.what} matches ${region.source}.\n`);
    return problem === null;
  }
  const updated = replaceRegion(text, table, region);
  if (updated !== text) writeFileSync(path, updated);
  process.stdout.write(
    `${region.page} ${region.what} ${updated === text ? 'unchanged' : 'rewritten'}.\n`,
  );
  return true;
}

async function main(args) {
  const shouldCheck = args.includes('--check');
  const toolsTable = await renderToolsTable(await listTools());
  const cliTable = await renderCliTable(parseCliHelp(cliHelp()));
  const results = [
    syncRegion(TOOLS_PAGE, TOOLS_REGION, toolsTable, shouldCheck),
    syncRegion(CLI_PAGE, CLI_REGION, cliTable, shouldCheck),
  ];
  // Descriptions are written by hand, so this one is only checked, in both modes.
  const coverage = configCoverage(
    readFileSync(CONFIG_PAGE, 'utf8'),
    configKeys(await loadConfigSchema()),
  );
  if (coverage) process.stderr.write(`${coverage}\n`);
  else process.stdout.write('docs/configuration.md names every key of the config schema.\n');
  return results.every(Boolean) && !coverage ? 0 : 1;
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
