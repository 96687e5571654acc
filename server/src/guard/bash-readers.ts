/** One command word: its value when literal, undefined when it holds an expansion, glob or `~`. */
export type Arg = string | undefined;

/** A command that prints all of its input: its file operands, or stdin when it has none. */
export interface Reader {
  /** How the verdict names it, e.g. "cat", "sed -n p", "head -n 5000". */
  label: string;
  /** File operands in order; undefined where a word is not literal. */
  files: readonly Arg[];
}

/** One command as written: its name (basename), its words after the name, the size limit. */
interface Call {
  name: string;
  args: readonly Arg[];
  thresholdBytes: number;
}

type ReaderRule = (call: Call) => Reader | undefined;

interface PlainOptions {
  /** Options that take a separate value, so the value is not a file. */
  valued?: readonly string[];
  /** Options that cap the output (or send it elsewhere): their presence makes it no reader. */
  bounding?: readonly string[];
  /** The operands are not input files (tr's sets, tee's outputs): it reads stdin only. */
  isStdinOnly?: boolean;
}

/**
 * The command `name args…` when it prints all of its input; undefined when it filters, bounds,
 * writes elsewhere or is not known (the guard never blocks what it does not understand).
 */
export function findReader(
  name: string,
  args: readonly Arg[],
  thresholdBytes: number,
): Reader | undefined {
  return READER_RULES.get(name.toLowerCase())?.({ name, args, thresholdBytes });
}

function plain(options: PlainOptions = {}): ReaderRule {
  return ({ name, args }) => {
    const bounding = options.bounding ?? [];
    if (args.some((arg) => arg !== undefined && bounding.some((flag) => isFlag(arg, flag)))) {
      return undefined;
    }
    if (options.isStdinOnly) return { label: name, files: [] };
    const files = operands(args, options.valued ?? []);
    return { label: name, files };
  };
}

/** A literal `-x`/`--x` word; anything else is an operand (a file, a script, `-` for stdin). */
function isOption(arg: Arg): arg is string {
  return arg !== undefined && arg !== '-' && arg.startsWith('-');
}

function isFlag(arg: string, flag: string): boolean {
  if (arg === flag || arg.startsWith(`${flag}=`)) return true;
  return flag.length === 2 && arg.startsWith(flag);
}

/** Non-option words, skipping the values of `valued` options; everything after `--`. */
function operands(args: readonly Arg[], valued: readonly string[]): Arg[] {
  const files: Arg[] = [];
  let isAfterDashes = false;
  for (let index = 0; index < args.length; index++) {
    const arg = args[index];
    if (isAfterDashes || !isOption(arg)) files.push(arg);
    else if (arg === '--') isAfterDashes = true;
    else if (valued.includes(arg)) index++;
  }
  return files;
}

/**
 * A GNU count such as `200`, `+1`, `-5`, `1M` or `2kB`, as a number (sign dropped):
 * b is 512, K/M/G (and KiB…) powers of 1024, kB/KB/MB/GB powers of 1000.
 */
function parseCount(text: string): number | undefined {
  const match = /^[-+]?(\d+)(b|[kKMG](?:i?B)?)?$/.exec(text);
  if (!match) return undefined;
  const [, digits = '', unit = ''] = match;
  if (unit === 'b') return Number(digits) * 512;
  const power = ' KMG'.indexOf(unit.charAt(0).toUpperCase());
  const base = /[^i]B$/.test(unit) ? 1000 : 1024;
  return Number(digits) * base ** Math.max(power, 0);
}

interface Count {
  isBytes: boolean;
  text: Arg;
}

/**
 * `head`/`tail` are readers only with a byte count over the threshold (`-c 100000`): that many
 * bytes of a bigger file provably reach the output. Line counts (`-n 50`, `-n -5`, `-n +2`) say
 * nothing about bytes; what they print is measured after the call (the PostToolUse guard).
 */
function headOrTail({ name, args, thresholdBytes }: Call): Reader | undefined {
  const isTail = name.toLowerCase() === 'tail';
  let count: Count = { isBytes: false, text: '10' };
  const files: Arg[] = [];
  for (let index = 0; index < args.length; index++) {
    const arg = args[index];
    if (!isOption(arg)) files.push(arg);
    else if (isTail && /^-\d*[fF]$|^--follow/.test(arg)) return undefined;
    else if (/^-\d+$/.test(arg)) count = { isBytes: false, text: arg.slice(1) };
    else {
      const match = /^-([nc])(.*)$/.exec(arg) ?? /^--(lines|bytes)(?:=(.*))?$/.exec(arg);
      if (!match) continue;
      const attached = match[2] === '' ? undefined : match[2];
      count = { isBytes: /^[cb]/.test(match[1] ?? ''), text: attached ?? args[++index] };
    }
  }
  const text = count.text;
  if (!count.isBytes || text === undefined) return undefined;
  // `head -c -N` and `tail -c +N` print all but a part: not provably big either.
  if (text.startsWith(isTail ? '+' : '-')) return undefined;
  const amount = parseCount(text);
  if (amount === undefined || amount <= thresholdBytes) return undefined;
  return { label: `${name} -c ${text}`, files };
}

const SUBSTITUTION = /^s([^\s\\])(?:\\[\s\S]|(?!\1)[^\\])*\1(?:\\[\s\S]|(?!\1)[^\\])*\1[gpiImM\d]*/;

/** True for a sed script that prints every input line: `p`, `1,$p` under -n; substitutions, `p`, `=` or nothing otherwise. */
function printsEveryLine(script: string, isQuiet: boolean): boolean {
  if (isQuiet) return /^\s*(?:1\s*,\s*\$\s*)?p[\s;]*$/.test(script);
  let rest = script.trim();
  while (rest !== '') {
    const match = SUBSTITUTION.exec(rest) ?? /^[p=]/.exec(rest);
    if (!match) return false;
    rest = rest.slice(match[0].length).replace(/^[\s;]+/, '');
  }
  return true;
}

function sed({ name, args }: Call): Reader | undefined {
  const scripts: string[] = [];
  const positionals: Arg[] = [];
  let isQuiet = false;
  for (let index = 0; index < args.length; index++) {
    const arg = args[index];
    if (!isOption(arg)) positionals.push(arg);
    else if (/^-[a-zA-Z]*[if]|^--(in-place|file)/.test(arg)) return undefined;
    else if (/^--(quiet|silent)$/.test(arg)) isQuiet = true;
    else if (arg.startsWith('--expression=')) scripts.push(arg.slice('--expression='.length));
    else if (/^-[a-zA-Z]+$/.test(arg)) {
      isQuiet ||= arg.includes('n');
      const value = /[el]$/.test(arg) ? args[++index] : '';
      if (value === undefined) return undefined;
      if (arg.endsWith('e')) scripts.push(value);
    }
  }
  if (scripts.length === 0) {
    const script = positionals.shift();
    if (script === undefined) return undefined;
    scripts.push(script);
  }
  if (!printsEveryLine(scripts.join('\n'), isQuiet)) return undefined;
  const label = [name, ...(isQuiet ? ['-n'] : []), quoteIfNeeded(scripts.join('; '))].join(' ');
  return { label, files: positionals };
}

/** A script as a shell would need it written, for the verdict label. */
function quoteIfNeeded(text: string): string {
  return /^[\w.,:/=+-]+$/.test(text) ? text : `'${text}'`;
}

/** Programs (whitespace removed) that print each line whole. */
const AWK_PRINT_ALL = new Set(['1', '{print}', '{print;}', '{print$0}', '{print$0;}', '1{print}']);

function awk({ name, args }: Call): Reader | undefined {
  const positionals: Arg[] = [];
  for (let index = 0; index < args.length; index++) {
    const arg = args[index];
    if (!isOption(arg)) positionals.push(arg);
    else if (/^-f|^--file/.test(arg)) return undefined;
    else if (arg === '-F' || arg === '-v') index++;
  }
  const [program, ...operandWords] = positionals;
  if (program === undefined || !AWK_PRINT_ALL.has(program.replace(/\s+/g, ''))) return undefined;
  const files = operandWords.filter((word) => word === undefined || !/^\w+=/.test(word));
  return { label: `${name} ${quoteIfNeeded(program)}`, files };
}

/** `jq .` pretty-prints the whole document; any other filter selects. */
function jq({ name, args }: Call): Reader | undefined {
  const positionals: Arg[] = [];
  for (let index = 0; index < args.length; index++) {
    const arg = args[index];
    if (!isOption(arg)) positionals.push(arg);
    else if (/^-[a-zA-Z]*[nf]|^--(null-input|from-file|args|jsonargs)$/.test(arg)) return undefined;
    else if (/^--(arg|argjson|slurpfile|rawfile)$/.test(arg)) index += 2;
    else if (arg === '--indent') index++;
  }
  const [program, ...files] = positionals;
  return program?.trim() === '.' ? { label: `${name} .`, files } : undefined;
}

/** `python -m json.tool [in]` pretty-prints to stdout; with an output operand it writes a file. */
function python({ name, args }: Call): Reader | undefined {
  const moduleIndex = args.indexOf('-m');
  if (moduleIndex < 0 || args[moduleIndex + 1] !== 'json.tool') return undefined;
  if (args.slice(0, moduleIndex).some((arg) => arg === undefined || !arg.startsWith('-'))) {
    return undefined;
  }
  const files = operands(args.slice(moduleIndex + 2), ['--indent']);
  return files.length > 1 ? undefined : { label: `${name} -m json.tool`, files };
}

const POWERSHELL_PATH = ['-path', '-literalpath', '-pspath', '-lp'];
const POWERSHELL_COUNT = ['-totalcount', '-head', '-first', '-tail', '-last'];
const POWERSHELL_VALUED = [
  ...POWERSHELL_PATH,
  ...POWERSHELL_COUNT,
  ...['-encoding', '-delimiter', '-readcount', '-filter', '-include', '-exclude', '-stream'],
];

/** PowerShell `Get-Content` (aliases gc, cat, type): bounded by a small -TotalCount/-Head/-Tail. */
function getContent({ name, args }: Call): Reader | undefined {
  const files: Arg[] = [];
  for (let index = 0; index < args.length; index++) {
    const arg = args[index];
    if (arg === undefined || !arg.startsWith('-')) {
      files.push(...splitPowerShellList(arg));
      continue;
    }
    const [written = '', attached] = arg.split(/:(.*)/s);
    const parameter = written.toLowerCase();
    const value = attached ?? args[index + 1];
    if (attached === undefined && POWERSHELL_VALUED.includes(parameter)) index++;
    if (POWERSHELL_PATH.includes(parameter)) files.push(...splitPowerShellList(value));
    // A count of lines says nothing about bytes: measured after the call instead.
    if (POWERSHELL_COUNT.includes(parameter)) return undefined;
  }
  return { label: name, files };
}

function splitPowerShellList(value: Arg): Arg[] {
  return value === undefined ? [undefined] : value.split(',').filter((part) => part !== '');
}

/** `cat`/`type` written PowerShell style (`-Path`, `-TotalCount 10`) follow Get-Content. */
function catOrGetContent(call: Call): Reader | undefined {
  const isPowerShell = call.args.some(
    (arg) => arg !== undefined && /^-[a-zA-Z]{3,}(:|$)/.test(arg),
  );
  return isPowerShell ? getContent(call) : plain()(call);
}

const BAT = plain({ valued: ['-l', '-H', '-m'], bounding: ['-r', '--line-range'] });

const READER_RULES = new Map<string, ReaderRule>([
  ...['tac', 'less', 'more', 'zcat', 'rev'].map((name) => [name, plain()] as const),
  ...['cat', 'type'].map((name) => [name, catOrGetContent] as const),
  ...['get-content', 'gc'].map((name) => [name, getContent] as const),
  ...['bat', 'batcat'].map((name) => [name, BAT] as const),
  ...['head', 'tail'].map((name) => [name, headOrTail] as const),
  ...['awk', 'gawk', 'mawk'].map((name) => [name, awk] as const),
  ...['python', 'python3'].map((name) => [name, python] as const),
  ['sed', sed],
  ['jq', jq],
  ['nl', plain({ valued: ['-b', '-d', '-f', '-h', '-i', '-l', '-n', '-s', '-v', '-w'] })],
  ['xxd', plain({ valued: ['-c', '-g', '-o', '-s', '-cols'], bounding: ['-l', '-len'] })],
  ['od', plain({ valued: ['-A', '-t', '-j', '-w'], bounding: ['-N', '--read-bytes'] })],
  ['hexdump', plain({ valued: ['-e', '-f', '-s'], bounding: ['-n', '--length'] })],
  ['base64', plain({ valued: ['-w'] })],
  // Only commands whose output is provably the whole input: sort keeps every line (not with
  // -u); uniq and cut drop an unknown part, so they are measured after the call instead.
  [
    'sort',
    plain({ valued: ['-k', '-t', '-S', '-T'], bounding: ['-o', '--output', '-u', '--unique'] }),
  ],
  ['fold', plain({ valued: ['-w'] })],
  ['expand', plain({ valued: ['-t'] })],
  ['column', plain({ valued: ['-s', '-c'] })],
  ['tr', plain({ isStdinOnly: true, bounding: ['-d', '--delete', '-s', '--squeeze-repeats'] })],
  ['tee', plain({ isStdinOnly: true })],
]);
