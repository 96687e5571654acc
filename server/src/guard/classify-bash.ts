import { isAbsolute, resolve } from 'node:path';
import { forEachChild, parse } from 'unbash';
import type * as Bash from 'unbash';
import { findReader, type Arg, type Reader } from './bash-readers.ts';

/** Size in bytes of an existing regular file at an absolute path, else undefined (missing, directory, unreadable). */
export type StatFile = (absolutePath: string) => number | undefined;

export interface BashVerdict {
  decision: 'allow' | 'deny';
  /** For deny: the absolute path of the big file, its size, and the reader that would dump it (e.g. "cat", "sed -n p", "Get-Content"). */
  path?: string;
  bytes?: number;
  reader?: string;
}

type Dump = Required<Omit<BashVerdict, 'decision'>>;

/** One classification: its limits and the dumps found so far. */
interface Scan {
  thresholdBytes: number;
  statFile: StatFile;
  dumps: Dump[];
}

/** Where a node runs: its directory (undefined once unknowable) and whether its stdout is shown. */
interface Place {
  cwd: string | undefined;
  isShown: boolean;
  /** 0 for the command itself, 1 inside `sh -c '…'`; deeper nesting is not looked into. */
  depth: number;
}

type Role =
  | { kind: 'reader'; reader: Reader }
  | { kind: 'shell'; script: string }
  | { kind: 'cd'; directory: Arg }
  | { kind: 'other' };

const ALLOW: BashVerdict = { decision: 'allow' };
const OTHER: Role = { kind: 'other' };
const MAX_SHELL_DEPTH = 1;

/**
 * Decides whether a Bash tool command would print more than `thresholdBytes` of one file into
 * the tool output (deny), reporting the biggest such file. Whatever it cannot know for sure —
 * variables, globs, unknown commands, syntax errors, its own failures — it allows.
 */
export function classifyBash(
  command: string,
  options: { cwd: string; thresholdBytes: number; statFile: StatFile },
): BashVerdict {
  try {
    const scan: Scan = { ...options, dumps: [] };
    walkScript(command, { cwd: options.cwd, isShown: true, depth: 0 }, scan);
    const biggest = scan.dumps.sort((a, b) => b.bytes - a.bytes)[0];
    return biggest ? { decision: 'deny', ...biggest } : ALLOW;
  } catch {
    return ALLOW;
  }
}

function walkScript(source: string, place: Place, scan: Scan): void {
  if (place.depth > MAX_SHELL_DEPTH) return;
  const script = parse(source);
  if (script.errors?.length) return;
  walkStatements(script.commands, place, scan);
}

/** Walks a list in order; a `cd` moves the directory for what follows. Returns the final one. */
function walkStatements(statements: readonly Bash.Statement[], place: Place, scan: Scan) {
  let cwd = place.cwd;
  for (const statement of statements) cwd = walkNode(statement.command, { ...place, cwd }, scan);
  return cwd;
}

function walkNode(
  node: Bash.PipelineNode | Bash.AndOr,
  place: Place,
  scan: Scan,
): string | undefined {
  switch (node.type) {
    case 'AndOr': {
      let cwd = place.cwd;
      for (const child of node.commands) cwd = walkNode(child, { ...place, cwd }, scan);
      return cwd;
    }
    case 'Pipeline':
      return walkPipeline(node.commands, place, scan);
    case 'Command':
      return walkCommand(node, place, scan);
    case 'BraceGroup':
      return walkStatements(node.body.commands, place, scan);
    case 'Redirected':
      return walkNode(node.command, placeAfter(node.redirects, place), scan);
    case 'Function':
    case 'Coproc':
      return place.cwd;
    default:
      walkCompound(node, place, scan);
      return place.cwd;
  }
}

/** Subshells, if, loops, case: every body may run and prints where the node prints. */
function walkCompound(node: Bash.SyntaxNode, place: Place, scan: Scan): void {
  forEachChild(node, (child) => {
    if (child.type === 'CompoundList') walkStatements(child.commands, place, scan);
    else if (child.type === 'Elif' || child.type === 'CaseItem') walkCompound(child, place, scan);
  });
}

/** A stage is shown when every later stage passes its stdin to an unredirected stdout. */
function walkPipeline(stages: readonly Bash.PipelineNode[], place: Place, scan: Scan) {
  const [only] = stages;
  if (stages.length === 1 && only) return walkNode(only, place, scan);
  const passes = stages.map((stage) => passesStdinThrough(stage, scan.thresholdBytes));
  stages.forEach((stage, index) => {
    const isShown = place.isShown && passes.slice(index + 1).every(Boolean);
    walkNode(stage, { ...place, isShown }, scan);
  });
  return place.cwd;
}

function passesStdinThrough(stage: Bash.PipelineNode, thresholdBytes: number): boolean {
  if (stage.type !== 'Command') return false;
  const role = describeCommand(commandArgs(stage), thresholdBytes);
  if (role.kind !== 'reader' || !readsStdin(role.reader)) return false;
  return stdinRedirect(stage.redirects) === undefined && !hidesStdout(stage.redirects);
}

function walkCommand(command: Bash.Command, place: Place, scan: Scan): string | undefined {
  const role = describeCommand(commandArgs(command), scan.thresholdBytes);
  if (role.kind === 'cd') {
    return role.directory === '-' ? undefined : resolveFrom(place.cwd, role.directory);
  }
  if (!placeAfter(command.redirects, place).isShown) return place.cwd;
  if (role.kind === 'shell') walkScript(role.script, { ...place, depth: place.depth + 1 }, scan);
  if (role.kind === 'reader') {
    const redirect = readsStdin(role.reader) ? stdinRedirect(command.redirects) : undefined;
    const redirected = redirect?.type === 'Redirect' ? [literalTarget(redirect)] : [];
    for (const file of [...role.reader.files, ...redirected]) {
      recordIfBig(file, role.reader.label, place.cwd, scan);
    }
  }
  return place.cwd;
}

function recordIfBig(file: Arg, reader: string, cwd: string | undefined, scan: Scan): void {
  if (file === '-' || file?.startsWith('/dev/')) return;
  const path = resolveFrom(cwd, file);
  const bytes = path === undefined ? undefined : scan.statFile(path);
  if (path && bytes !== undefined && bytes > scan.thresholdBytes) {
    scan.dumps.push({ path, bytes, reader });
  }
}

/** The absolute path, or undefined when it is not literal or relative to an unknown directory. */
function resolveFrom(cwd: string | undefined, path: Arg): string | undefined {
  if (path === undefined) return undefined;
  if (isAbsolute(path)) return resolve(path);
  return cwd === undefined ? undefined : resolve(cwd, path);
}

interface WrapperOptions {
  /** Options whose value is the next word. */
  valued?: readonly string[];
  /** Options that mean the rest is not run as a command (`command -v cat`). */
  stops?: readonly string[];
  /** Operands before the command (`timeout 10 cat …`). */
  operands?: number;
}

/** Commands that run the rest of their words as a command. */
const WRAPPERS = new Map<string, WrapperOptions>([
  ['env', { valued: ['-u', '--unset', '-C', '--chdir'], stops: ['-S', '--split-string'] }],
  ['sudo', { valued: ['-u', '-g', '-h', '-p', '-C', '-D', '-r', '-t'], stops: ['-e', '-l'] }],
  ['command', { stops: ['-v', '-V'] }],
  ['nice', { valued: ['-n', '--adjustment'] }],
  ['nohup', {}],
  ['time', { valued: ['-f', '--format', '-o', '--output'] }],
  ['timeout', { valued: ['-s', '--signal', '-k', '--kill-after'], operands: 1 }],
  ['stdbuf', { valued: ['-i', '-o', '-e'] }],
  ['exec', { valued: ['-a'] }],
  ['xargs', { valued: ['-I', '-L', '-n', '-P', '-d', '-E', '-s', '-a'] }],
]);
const SHELLS = new Set(['sh', 'bash', 'zsh', 'dash', 'ksh', 'ash']);
const POWERSHELLS = new Set(['powershell', 'powershell.exe', 'pwsh', 'pwsh.exe']);

function describeCommand(args: readonly Arg[], thresholdBytes: number): Role {
  const [written, ...rest] = args;
  if (written === undefined) return OTHER;
  const name = written.slice(written.search(/[^/\\]*$/));
  const lowerName = name.toLowerCase();
  const wrapper = WRAPPERS.get(lowerName);
  if (wrapper) {
    const inner = unwrap(rest, wrapper);
    const role = inner ? describeCommand(inner, thresholdBytes) : OTHER;
    if (role.kind !== 'reader' || lowerName !== 'xargs') return role;
    // xargs appends the words it reads from stdin: more files, unknown ones.
    return { kind: 'reader', reader: { ...role.reader, files: [...role.reader.files, undefined] } };
  }
  if (lowerName === 'cd' || lowerName === 'pushd') {
    return { kind: 'cd', directory: rest.find((arg) => arg === undefined || !/^-./.test(arg)) };
  }
  const script = nestedScript(lowerName, rest);
  if (script !== undefined) return { kind: 'shell', script };
  const reader = findReader(name, rest, thresholdBytes);
  return reader ? { kind: 'reader', reader } : OTHER;
}

function readsStdin(reader: Reader): boolean {
  return reader.files.length === 0 || reader.files.includes('-');
}

/** The wrapped command's words, or undefined when the wrapper does not run one. */
function unwrap(args: readonly Arg[], options: WrapperOptions): Arg[] | undefined {
  let index = 0;
  for (; index < args.length; index++) {
    const arg = args[index];
    if (arg === undefined || arg === '-' || !/^-|^\w+=/.test(arg)) break;
    if (arg === '--') return args.slice(index + 1 + (options.operands ?? 0));
    if (options.stops?.includes(arg)) return undefined;
    if (options.valued?.includes(arg)) index++;
  }
  const inner = args.slice(index + (options.operands ?? 0));
  return inner.length > 0 ? inner : undefined;
}

/** The script of `bash -c '…'` (also `-lc`, after `-o opt`) or `pwsh -Command …`; not a script file. */
function nestedScript(name: string, args: readonly Arg[]): string | undefined {
  if (POWERSHELLS.has(name)) return powerShellScript(args);
  if (!SHELLS.has(name)) return undefined;
  for (let index = 0; index < args.length; index++) {
    const arg = args[index];
    if (arg === undefined || !/^[-+]./.test(arg) || arg === '--') return undefined;
    if (/^[-+][oO]$/.test(arg)) index++;
    else if (/^-[a-zA-Z]*c[a-zA-Z]*$/.test(arg)) return args[index + 1];
  }
  return undefined;
}

/** The command of `pwsh -Command …`: every word after it. */
function powerShellScript(args: readonly Arg[]): string | undefined {
  const index = args.findIndex((arg) => arg !== undefined && /^-c(ommand)?$/i.test(arg));
  const words = args.slice(index + 1);
  if (index < 0 || words.some((word) => word === undefined)) return undefined;
  return words.join(' ');
}

function commandArgs(command: Bash.Command): Arg[] {
  if (!command.name) return [];
  return [command.name, ...command.args].map((word) =>
    word.type === 'Word' ? literalValue(word) : word.text,
  );
}

/** The word's value when nothing in it expands: quotes and escapes only, no `~`. */
function literalValue(word: Bash.Word): Arg {
  if (word.text.startsWith('~')) return undefined;
  const isLiteral = (word.parts ?? []).every(
    (part) =>
      part.type === 'Literal' ||
      part.type === 'SingleQuoted' ||
      part.type === 'AnsiCQuoted' ||
      (part.type === 'DoubleQuoted' && part.parts.every((inner) => inner.type === 'Literal')),
  );
  return isLiteral ? word.value : undefined;
}

/** The place after redirections: hidden once stdout goes to a file. */
function placeAfter(redirects: readonly Bash.Redirection[], place: Place): Place {
  return { ...place, isShown: place.isShown && !hidesStdout(redirects) };
}

const SHOWN_TARGETS = new Set(['/dev/stdout', '/dev/stderr', '/dev/tty', '/dev/fd/1', '/dev/fd/2']);

/** Follows the redirections in order: does stdout end in a file (or /dev/null)? stderr is shown too. */
function hidesStdout(redirects: readonly Bash.Redirection[]): boolean {
  const isHidden = new Map<number, boolean>([
    [1, false],
    [2, false],
  ]);
  for (const redirect of redirects) {
    if (redirect.type !== 'Redirect' || redirect.descriptor?.type === 'FileDescriptorVariable') {
      continue;
    }
    const target = literalTarget(redirect);
    const toFile = target === undefined || !SHOWN_TARGETS.has(target);
    const descriptor = redirect.descriptor?.value;
    if (['>', '>>', '>|'].includes(redirect.operator)) isHidden.set(descriptor ?? 1, toFile);
    if (redirect.operator === '&>' || redirect.operator === '&>>') {
      isHidden.set(1, toFile).set(2, toFile);
    }
    if (redirect.operator === '>&') {
      const duplicated = target !== undefined && /^\d+$/.test(target);
      const hidden = duplicated ? (isHidden.get(Number(target)) ?? false) : toFile;
      if (descriptor === undefined && !duplicated) isHidden.set(2, hidden);
      isHidden.set(descriptor ?? 1, hidden);
    }
  }
  return isHidden.get(1) ?? false;
}

/** The last redirection that replaces stdin: `< file`, a heredoc or a here-string. */
function stdinRedirect(redirects: readonly Bash.Redirection[]): Bash.Redirection | undefined {
  return redirects.findLast((redirect) => {
    const descriptor =
      redirect.descriptor?.type === 'FileDescriptor' ? redirect.descriptor.value : 0;
    const isInput = redirect.type !== 'Redirect' || ['<', '<>'].includes(redirect.operator);
    return isInput && descriptor === 0;
  });
}

function literalTarget(redirect: Bash.Redirect): Arg {
  return redirect.target ? literalValue(redirect.target) : undefined;
}
