import { describe, expect, it } from 'vitest';
import { mayReadBigFile } from '../../server/src/guard/bash-prefilter.ts';
import { classifyBash, type StatFile } from '../../server/src/guard/classify-bash.ts';

const SIZES = new Map([
  ['/proj/big.log', 200_000],
  ['/proj/big file.log', 200_000],
  ['/proj/big.json', 120_000],
  ['/proj/small.txt', 100],
  ['/proj/sub/huge.json', 5_000_000],
  ['/var/log/syslog', 300_000],
]);
const statFile: StatFile = (absolutePath) => SIZES.get(absolutePath);
const options = { cwd: '/proj', thresholdBytes: 51_200, statFile };

type Row = [command: string, expected: 'allow' | 'deny', note?: string];

/** Add a row for every new case; the note says which rule it pins when the command does not. */
const ROWS: Row[] = [
  // Unbounded readers of big and small files
  ['cat big.log', 'deny'],
  ['cat small.txt', 'allow'],
  ['cat missing.log', 'allow', 'missing file'],
  ['cat sub', 'allow', 'a directory is not a regular file'],
  ['cat', 'allow', 'no file argument'],
  ['cat /dev/stdin', 'allow'],
  ['cat -n big.log', 'deny'],
  ['/bin/cat big.log', 'deny'],
  ['cat small.txt big.log', 'deny', 'any one big file'],
  ['tac big.log', 'deny'],
  ['nl -ba big.log', 'deny'],
  ['less big.log', 'deny'],
  ['more big.log', 'deny'],
  ['bat big.log', 'deny'],
  ['batcat --style=plain big.log', 'deny'],
  ['bat -r 1:40 big.log', 'allow', 'bat with a line range'],
  ['strings big.log', 'allow', 'strings is not treated as a reader'],
  ['grep ERROR big.log', 'allow', 'grep filters'],
  ['rg -n TODO big.log', 'allow'],
  ['wc -l big.log', 'allow'],
  ['xxd big.log', 'deny', 'hex dumps are bigger than the file'],
  ['xxd -l 256 big.log', 'allow'],
  ['od -c big.log', 'deny'],
  ['hexdump -C big.log', 'deny'],
  ['base64 big.log', 'deny'],
  ['jq . big.json', 'deny', 'pretty-prints everything'],
  ['jq -r .name big.json', 'allow', 'a jq filter selects'],
  ['jq . small.txt', 'allow'],
  ['python3 -m json.tool big.json', 'deny'],
  ['python -m json.tool big.json out.json', 'allow', 'writes to a file'],
  ['python3 script.py big.log', 'allow', 'unknown program'],
  // sed and awk print everything only in some forms
  ['sed -n p big.log', 'deny'],
  ["sed -n '1,$p' big.log", 'deny'],
  ["sed '' big.log", 'deny'],
  ["sed 's/foo/bar/g' big.log", 'deny', 'substitution still prints every line'],
  ["sed -n '1,50p' big.log", 'allow'],
  ["sed -n '/ERROR/p' big.log", 'allow'],
  ["sed -i 's/a/b/' big.log", 'allow', 'writes in place'],
  ["sed '/x/d' big.log", 'allow', 'deletes lines: not sure it prints all'],
  ["sed 's/a/b/;10q' big.log", 'allow', 'quits after 10 lines'],
  ["sed -e 's/;/,/' -e p big.log", 'deny', 'a ; inside the substitution'],
  ["sed -ne '1,$p' big.log", 'deny'],
  ["awk '{print}' big.log", 'deny'],
  ["awk '{ print $0 }' big.log", 'deny'],
  ['awk 1 big.log', 'deny'],
  ["awk '/ERROR/' big.log", 'allow'],
  ["awk 'NR<=50' big.log", 'allow'],
  ["awk -F, '{print $1}' big.log", 'allow', 'a column is not the whole line'],
  // head and tail
  ['head big.log', 'allow'],
  ['head -n 100 big.log', 'allow'],
  ['head -n 5000 big.log', 'allow', 'lines are not bytes: measured after the call'],
  ['head -5000 big.log', 'allow', 'lines are not bytes'],
  ['head --lines=3000 big.log', 'allow', 'lines are not bytes'],
  ['head -c +100000 big.log', 'deny', 'a signed byte count over the threshold'],
  ['head -c -10 big.log', 'allow', 'all but the last 10 bytes: not provably big'],
  ['tail -c 100000 big.log', 'deny', 'bytes over the threshold'],
  ['head -c 1000 big.log', 'allow'],
  ['head -c 100000 big.log', 'deny', 'bytes over the threshold'],
  ['head -c 1M big.log', 'deny'],
  ['head -n -10 big.log', 'allow', 'all but the last 10 lines: not provable from the command'],
  ['tail -n 50 big.log', 'allow'],
  ['tail -n +1 big.log', 'allow', 'from line 1 to the end: lines, measured after the call'],
  ['tail -f big.log', 'allow'],
  ['tail -100f big.log', 'allow'],
  ['tail -F -n 100 /var/log/syslog', 'allow'],
  ['tail -n 20000 /var/log/syslog', 'allow', 'lines are not bytes'],
  ['head -n $N big.log', 'allow', 'unknown count'],
  // Quoting and escapes
  ['cat "big file.log"', 'deny'],
  ["cat 'big.log'", 'deny'],
  ['cat big\\ file.log', 'deny'],
  ["cat $'big file.log'", 'deny'],
  ['cat "big"\'.log\'', 'deny', 'concatenated quotes'],
  ['cat b"i"g.log', 'deny'],
  ['cat "big.log', 'allow', 'unterminated quote: syntax error'],
  ['cat big.log |', 'allow', 'syntax error'],
  ['cat big.log )', 'allow', 'syntax error'],
  ['', 'allow'],
  // Unknowable paths
  ['cat $LOG', 'allow'],
  ['cat "$PWD/big.log"', 'allow'],
  ['cat *.log', 'allow'],
  ['cat big.{log,txt}', 'allow'],
  ['cat $(ls big.log)', 'allow'],
  ['cat ~/big.log', 'allow', 'no ~ expansion'],
  // Paths and directories
  ['cat /var/log/syslog', 'deny'],
  ['cat /proj/sub/../big.log', 'deny'],
  ['cat sub/huge.json', 'deny'],
  ['cd sub && cat huge.json', 'deny'],
  ['cd sub; cat ../big.log', 'deny'],
  ['cd /var/log && less syslog', 'deny'],
  ['cd sub && cat big.log', 'allow', 'relative to the new directory'],
  ['(cd sub && cat huge.json)', 'deny'],
  ['(cd sub); cat huge.json', 'allow', 'the subshell cd does not leak'],
  ['cd "$DIR" && cat big.log', 'allow', 'unknown directory'],
  ['cd "$DIR" && cat /var/log/syslog', 'deny', 'absolute path still known'],
  // Lists, subshells, groups, control flow
  ['ls && cat big.log', 'deny'],
  ['cat small.txt; cat big.log', 'deny'],
  ['cat big.log || true', 'deny'],
  ['make || cat /var/log/syslog', 'deny'],
  ['(cat big.log)', 'deny'],
  ['{ cat big.log; }', 'deny'],
  ['{ cat big.log; } > /tmp/out', 'allow'],
  ['(cat big.log) | head', 'allow'],
  ['if true; then cat big.log; fi', 'deny'],
  ['for i in 1 2; do cat big.log; done', 'deny'],
  ['for f in *.log; do cat "$f"; done', 'allow'],
  ['cat big.log &', 'deny'],
  ['f() { cat big.log; }', 'allow', 'a definition runs nothing'],
  // Wrappers
  ['sudo cat /var/log/syslog', 'deny'],
  ['sudo -u root tail -c 500000 /var/log/syslog', 'deny'],
  ['env LC_ALL=C cat big.log', 'deny'],
  ['LC_ALL=C cat big.log', 'deny'],
  ['command cat big.log', 'deny'],
  ['command -v cat', 'allow'],
  ['time cat big.log', 'deny'],
  ['nice -n 10 cat big.log', 'deny'],
  ['timeout 5 cat big.log', 'deny'],
  ['! cat big.log', 'deny'],
  // sh -c, one level deep
  ['sh -c "cat big.log"', 'deny'],
  ['bash -c \'cat "big file.log"\'', 'deny'],
  ["bash -lc 'cd sub && cat huge.json'", 'deny'],
  ["zsh -c 'head -n 20 big.log'", 'allow'],
  ["bash -c 'cat big.log' > /dev/null", 'allow'],
  ["bash -c 'cat big.log' | head -n 5", 'allow'],
  ['bash -c "sh -c \'cat big.log\'"', 'allow', 'only one level deep'],
  ['bash script.sh big.log', 'allow'],
  ["sh -c 'cat big.log |'", 'allow', 'inner syntax error'],
  // xargs
  ['find . -name "*.log" | xargs cat', 'allow', 'files come from stdin'],
  ['ls | xargs cat big.log', 'deny', 'a literal big path is an argument'],
  ['cat big.log | xargs echo', 'allow'],
  ['xargs -I {} cat {} < list.txt', 'allow'],
  ['xargs -0 cat big.log < list.txt', 'deny'],
  // Redirections and heredocs
  ['cat big.log > /tmp/copy.log', 'allow'],
  ['cat big.log >> out.log', 'allow'],
  ['cat big.log > /dev/null', 'allow'],
  ['cat big.log &> /dev/null', 'allow'],
  ['cat big.log > out.log 2>&1', 'allow'],
  ['cat big.log 2> /dev/null', 'deny', 'only stderr is redirected'],
  ['cat big.log 2>&1', 'deny'],
  ['cat big.log >&2', 'deny', 'stderr is shown too'],
  ['cat big.log > /dev/stdout', 'deny'],
  ['cat big.log 2> /dev/null 1>&2', 'allow', 'stdout follows stderr into /dev/null'],
  ['cat big.log 1>&2 2> /dev/null', 'deny', 'stdout took the old stderr'],
  ['cat < big.log', 'deny', 'stdin from the big file'],
  ['sort < big.log', 'deny'],
  ['wc -l < big.log', 'allow'],
  ['python3 -m json.tool < big.json', 'deny'],
  ["cat <<'EOF'\ncat big.log\nEOF", 'allow', 'heredoc text is not a command'],
  ['cat > notes.txt <<EOF\nhello\nEOF', 'allow'],
  ['cat <<< "big.log"', 'allow'],
  ['cat small.txt # cat big.log', 'allow', 'comment'],
  ['echo "cat big.log"', 'allow'],
  // Downstream bounds
  ['cat big.log | head', 'allow'],
  ['cat big.log | head -n 2000', 'allow'],
  ['cat big.log | head -n 5000', 'allow', 'bounded by lines: measured after the call'],
  ['cat big.log | head -c 90000', 'deny', 'bounded by bytes over the threshold'],
  ['cat big.log | head -c 100000', 'deny'],
  ['cat big.log | tail -n 30', 'allow'],
  ['cat big.log | grep ERROR', 'allow'],
  ['cat big.log | rg -i warn', 'allow'],
  ['cat big.log | ag warn', 'allow'],
  ['cat big.log | head -n 10 | cat', 'allow'],
  ['cat big.log | sort -o sorted.log', 'allow', 'sort writes a file'],
  ["cat big.log | awk '/ERROR/'", 'allow'],
  ["cat big.log | awk '{print}'", 'deny'],
  ["cat big.log | sed -n '1,20p'", 'allow'],
  ["cat big.log | sed 's/a/b/'", 'deny'],
  ['cat big.log | wc -l', 'allow'],
  ['cat big.log | sort', 'deny', 'sort passes everything'],
  ['cat big.log | sort | head', 'allow'],
  ['cat big.log | sort | uniq -c | sort -rn | head', 'allow'],
  ['cat big.log | less', 'deny', 'a pager shows all'],
  ['cat big.log | more', 'deny'],
  ['cat big.log | tee copy.log', 'deny', 'tee still prints'],
  ['cat big.log | tee copy.log > /dev/null', 'allow'],
  ['cat big.log | gzip > big.log.gz', 'allow'],
  ['cat big.log | gzip', 'allow'],
  ['cat big.log | md5sum', 'allow'],
  ['cat big.log | sha256sum', 'allow'],
  ['cat big.log | cut -c1-80', 'allow', 'cut prints part of each line: not provably big'],
  ['sort -u -k1,1 big.log', 'allow', 'unique lines only: not provably big'],
  ['sort -k2 big.log', 'deny', 'sort keeps every line'],
  ['uniq big.log', 'allow', 'drops repeats: not provably big'],
  ["tr -d '\\n' < big.log", 'allow', 'deletes characters'],
  ['tr a-z A-Z < big.log', 'deny', 'maps characters one to one'],
  ['cat big.log | tr a-z A-Z', 'deny'],
  ['cat big.log | cat', 'deny'],
  ['cat big.log | cat > out.txt', 'allow'],
  ['cat big.log | python3 parse.py', 'allow', 'unknown consumer'],
  ['cat big.log | cat small.txt', 'allow', 'the consumer ignores stdin'],
  ['cat big.log | jq .', 'deny'],
  ['cat big.log | while read line; do echo "$line"; done', 'allow'],
  ['cat big.log |& head', 'allow'],
  // PowerShell and cmd.exe forms
  ['Get-Content big.log', 'deny'],
  ['Get-Content -Path big.log', 'deny'],
  ['Get-Content -Path:big.log -Raw', 'deny'],
  ['gc big.log', 'deny'],
  ['type big.log', 'deny'],
  ['cat -Path big.log', 'deny'],
  ['Get-Content big.log -TotalCount 50', 'allow'],
  ['Get-Content big.log -Head 20', 'allow'],
  ['Get-Content -Path big.log -First:10', 'allow'],
  ['Get-Content big.log -Tail 100', 'allow'],
  ['Get-Content big.log -Tail 5000', 'allow', 'lines are not bytes'],
  ['Get-Content big.log | Select-Object -First 20', 'allow'],
  ['Get-Content big.log | Select -Last 10', 'allow'],
  ['Get-Content big.log | Select-String ERROR', 'allow'],
  ['Get-Content small.txt', 'allow'],
  ['pwsh -Command Get-Content big.log', 'deny'],
  ['powershell -NoProfile -Command "Get-Content big.log | Select-Object -First 5"', 'allow'],
];

describe('classifyBash', () => {
  it.each(ROWS.map(([command, expected, note = '']) => [command, expected, note]))(
    '%j → %s %s',
    (command, expected) => {
      expect(classifyBash(command, options).decision).toBe(expected);
    },
  );

  it('names the file, its size and the reader', () => {
    expect(classifyBash('cd sub && cat huge.json', options)).toEqual({
      decision: 'deny',
      path: '/proj/sub/huge.json',
      bytes: 5_000_000,
      reader: 'cat',
    });
    expect(classifyBash('sed -n p "big file.log"', options)).toMatchObject({
      path: '/proj/big file.log',
      bytes: 200_000,
      reader: 'sed -n p',
    });
    expect(classifyBash('Get-Content -Path /var/log/syslog', options)).toMatchObject({
      path: '/var/log/syslog',
      reader: 'Get-Content',
    });
    expect(classifyBash('tail -c 100000 big.log | cat', options)).toMatchObject({
      reader: 'tail -c 100000',
    });
    expect(classifyBash('sort < big.log', options)).toMatchObject({ reader: 'sort' });
  });

  it('reports the biggest of several big files', () => {
    expect(classifyBash('cat big.log /var/log/syslog sub/huge.json small.txt', options)).toEqual({
      decision: 'deny',
      path: '/proj/sub/huge.json',
      bytes: 5_000_000,
      reader: 'cat',
    });
  });

  it('allows rather than throws when stat fails', () => {
    const failing: StatFile = () => {
      throw new Error('EACCES');
    };
    expect(classifyBash('cat big.log', { ...options, statFile: failing })).toEqual({
      decision: 'allow',
    });
  });
});

describe('mayReadBigFile (the prefilter that spares the parser)', () => {
  // It may send harmless commands to the parser, but never skip one the parser would deny.
  it.each(ROWS.filter(([, expected]) => expected === 'deny').map(([command]) => [command]))(
    'passes %j to the parser',
    (command) => {
      expect(mayReadBigFile(command, options.cwd, options.thresholdBytes, statFile)).toBe(true);
    },
  );

  it('skips the parser for commands that name no big file', () => {
    for (const command of [
      'git status --short',
      'npm test',
      'ls -la sub',
      'cat small.txt',
      'wc -l small.txt',
    ]) {
      expect(mayReadBigFile(command, options.cwd, options.thresholdBytes, statFile)).toBe(false);
    }
  });
});
