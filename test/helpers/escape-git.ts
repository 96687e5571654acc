import type { FakeReply } from './fake-provider.ts';

/** What a git attempt may name: filled in before the task starts. */
export interface GitWorld {
  /** Outside the project, the data home and HOME: a marker appearing here means code ran. */
  root: string;
  project: string;
}

type ToolCall = { name: string; input: Record<string, unknown> };

export interface GitAttempt {
  id: string;
  /** The route the attempt takes, for the table. */
  route:
    'file tools' | 'shell' | 'symlink' | 'redirect' | 'config' | 'history' | 'git-shaped folder';
  what: string;
  isolation: 'worktree' | 'none';
  /** The task's workdir when not the project's top. */
  workdir?: string;
  /** The worker's tool calls, all in one turn; `{marker}` is the attempt's host marker command. */
  calls: ToolCall[];
  /**
   * Folders (relative to the project, and to the worktree when one is kept) where the user later
   * runs git: a planted repository there would run its config.
   */
  places?: string[];
  /**
   * Whether it gets through with `sandbox: "off"` (asserted, so the table shows what really
   * happens): an unsandboxed shell runs as the user and can change anything the user can.
   */
  escapesUnsandboxed?: boolean;
}

/** A command that, if it ever runs, proves code ran on the host: it leaves a file in `{root}`. */
export const markerCommand = (world: GitWorld, id: string) => `touch ${world.root}/ran-${id}`;

const bash = (command: string): ToolCall => ({ name: 'run_bash', input: { command } });
const write = (path: string, content: string): ToolCall => ({
  name: 'write_file',
  input: { path, content },
});

/** A repository config that runs `{marker}` through every key that makes git run a command. */
const EVIL_CONFIG = [
  '[core]',
  '\trepositoryformatversion = 0',
  '\tbare = false',
  '\tfsmonitor = "{marker} fsmonitor"',
  '\tsshCommand = "{marker} ssh"',
  '\teditor = "{marker} editor"',
  '\tpager = "{marker} pager"',
  '[credential]',
  '\thelper = "!{marker} credential"',
  '[diff]',
  '\texternal = "{marker} external-diff"',
  '[diff "pwn"]',
  '\ttextconv = "{marker} textconv"',
  '\tcommand = "{marker} diff-driver"',
  '[filter "pwn"]',
  '\tclean = "{marker} clean"',
  '\tsmudge = "{marker} smudge"',
  '[merge "pwn"]',
  '\tdriver = "{marker} merge"',
  '[gpg]',
  '\tprogram = "{marker} gpg"',
  '[commit]',
  '\tgpgSign = true',
  '',
].join('\n');

/** Shell that builds a git directory `evil` (no `.git` in its name) whose config runs the marker. */
const MAKE_EVIL_GITDIR =
  'mkdir -p evil/objects evil/refs/heads evil/hooks && ' +
  "printf 'ref: refs/heads/main\\n' > evil/HEAD && " +
  'printf \'%s\' "$EVIL_CONFIG" > evil/config && ' +
  "for h in pre-commit post-commit post-checkout reference-transaction post-index-change; do printf '#!/bin/sh\\n{marker} hook\\n' > evil/hooks/$h; chmod +x evil/hooks/$h; done && " +
  "printf '* filter=pwn diff=pwn merge=pwn\\n' > .gitattributes";

/**
 * Shell that makes folder `$1` (any name) a bare repository to git's discovery: `HEAD`,
 * `objects/`, `refs/heads/` and a config whose work tree is the folder above and whose
 * fsmonitor runs the marker — a plain `git status` inside it would run the marker.
 */
const bareRepo = (folder: string, extra = '') =>
  `d=${folder}; mkdir -p "$d/objects" "$d/refs/heads" && printf 'ref: refs/heads/main\\n' > "$d/HEAD" && ` +
  `printf '[core]\n\trepositoryformatversion = 0\n\tbare = false\n\tworktree = ..\n\tfsmonitor = "{marker} fsmonitor"\n' > "$d/config"${extra}; echo made "$d"`;

/** The git-shaped folders a worker can make under any name, at any depth (issue 27). */
const GIT_SHAPED_ATTEMPTS: GitAttempt[] = [
  {
    id: 'bare-worktree',
    route: 'git-shaped folder',
    what: 'make `evil/` a bare repository (`HEAD`, `objects/`, `refs/`, `config` with `core.worktree=..` and fsmonitor)',
    isolation: 'worktree',
    places: ['evil'],
    calls: [bash(bareRepo('evil'))],
  },
  {
    id: 'bare-in-place',
    route: 'git-shaped folder',
    what: 'the same bare repository `evil/`, in place',
    isolation: 'none',
    places: ['evil'],
    calls: [bash(bareRepo('evil'))],
  },
  {
    id: 'bare-deep',
    route: 'git-shaped folder',
    what: 'a bare repository deep in a nested folder, `a/b/c.git/`',
    isolation: 'worktree',
    places: ['a/b/c.git', 'a/b'],
    calls: [bash(`mkdir -p a/b && ${bareRepo('a/b/c.git')}`)],
  },
  {
    id: 'bare-deep-in-place',
    route: 'git-shaped folder',
    what: 'a bare repository deep in a nested folder, in place',
    isolation: 'none',
    places: ['a/b/c.git', 'a/b'],
    calls: [bash(`mkdir -p a/b && ${bareRepo('a/b/c.git')}`)],
  },
  {
    id: 'bare-workdir',
    route: 'git-shaped folder',
    what: 'from workdir `pkg`, make `pkg` itself a bare repository (in place)',
    isolation: 'none',
    workdir: 'pkg',
    places: ['pkg'],
    calls: [bash(bareRepo('.'))],
  },
  {
    id: 'admin-shaped',
    route: 'git-shaped folder',
    what: 'a worktree-admin-shaped folder `adm/` (`HEAD`, `commondir` to its own repository, `gitdir`)',
    isolation: 'worktree',
    places: ['adm'],
    calls: [
      bash(
        `${bareRepo('evil')} && mkdir -p adm && printf 'ref: refs/heads/main\n' > adm/HEAD && printf '../evil\n' > adm/commondir && printf '%s/.git\n' "$PWD" > adm/gitdir && printf '[core]\n\tfsmonitor = "{marker} fsmonitor"\n' > adm/config.worktree`,
      ),
    ],
  },
  {
    id: 'bare-committed',
    route: 'git-shaped folder',
    what: 'the bare repository `evil/`, committed to the task branch by the worker itself',
    isolation: 'worktree',
    places: ['evil'],
    calls: [
      bash(
        `${bareRepo('evil')} && git add -A && git -c user.name=w -c user.email=w@example.invalid commit -qm evil; echo "commit exit $?"`,
      ),
    ],
  },
  {
    id: 'dot-git-case',
    route: 'git-shaped folder',
    what: 'a repository named `sub/.GIT` (another case of `.git`), in place',
    isolation: 'none',
    places: ['sub'],
    calls: [bash(`mkdir -p sub && ${bareRepo('sub/.GIT')}`)],
  },
  {
    id: 'gitmodules',
    route: 'git-shaped folder',
    what: 'add a `.gitmodules` naming a submodule at `lib`',
    isolation: 'worktree',
    calls: [write('.gitmodules', '[submodule "lib"]\n\tpath = lib\n\turl = ../evil\n')],
  },
];

export const GIT_ATTEMPTS: GitAttempt[] = [
  {
    id: 'ft-pointer',
    route: 'file tools',
    what: "replace the worktree's `.git` pointer with `gitdir: <a git dir it made>`",
    isolation: 'worktree',
    calls: [bash(MAKE_EVIL_GITDIR), write('.git', 'gitdir: evil\n')],
  },
  {
    id: 'ft-nested',
    route: 'file tools',
    what: 'create a repository in a subfolder (`sub/.git/config`, `HEAD`)',
    isolation: 'worktree',
    calls: [
      write('sub/.git/HEAD', 'ref: refs/heads/main\n'),
      write('sub/.git/config', EVIL_CONFIG),
      write('sub/file.txt', 'x\n'),
    ],
  },
  {
    id: 'ft-config',
    route: 'file tools',
    what: "write the repository's `.git/config` (in place)",
    isolation: 'none',
    calls: [write('.git/config', EVIL_CONFIG)],
  },
  {
    id: 'ft-edit-config',
    route: 'file tools',
    what: "edit the repository's `.git/config` (in place)",
    isolation: 'none',
    calls: [
      {
        name: 'edit_file',
        input: {
          path: '.git/config',
          old_text: '[core]',
          new_text: '[core]\n\tfsmonitor = "{marker}"',
        },
      },
    ],
  },
  {
    id: 'ft-hook',
    route: 'file tools',
    what: 'write a hook, `.git/hooks/post-commit` (in place)',
    isolation: 'none',
    calls: [write('.git/hooks/post-commit', '#!/bin/sh\n{marker} hook\n')],
  },
  {
    id: 'ft-commondir',
    route: 'file tools',
    what: 'write `.git/commondir` to redirect the repository (in place)',
    isolation: 'none',
    calls: [bash(MAKE_EVIL_GITDIR), write('.git/commondir', '../evil\n')],
  },
  {
    id: 'ln-dotgit',
    route: 'symlink',
    what: 'link `gl -> .git`, then write `gl/config` (in place)',
    isolation: 'none',
    calls: [bash('ln -s .git gl; ls -la gl'), write('gl/config', EVIL_CONFIG)],
  },
  {
    id: 'ln-parent-dotgit',
    route: 'symlink',
    what: 'from workdir `pkg`, link `gl -> ../.git`, then write `gl/config` (in place)',
    isolation: 'none',
    workdir: 'pkg',
    calls: [bash('ln -s ../.git gl'), write('gl/config', EVIL_CONFIG)],
  },
  {
    id: 'ln-pointer',
    route: 'symlink',
    what: "link `p -> .git` (the worktree's pointer), then write `p`",
    isolation: 'worktree',
    calls: [bash(`${MAKE_EVIL_GITDIR} && ln -s .git p`), write('p', 'gitdir: evil\n')],
  },
  {
    id: 'sh-pointer',
    route: 'redirect',
    what: "overwrite the worktree's `.git` pointer with `gitdir: <its own git dir>`",
    isolation: 'worktree',
    calls: [bash(`${MAKE_EVIL_GITDIR} && printf 'gitdir: %s\\n' "$PWD/evil" > .git`)],
  },
  {
    id: 'sh-pointer-rm',
    route: 'redirect',
    what: "delete the worktree's `.git` pointer and write a new one",
    isolation: 'worktree',
    calls: [bash(`${MAKE_EVIL_GITDIR} && rm -f .git; printf 'gitdir: %s\\n' "$PWD/evil" > .git`)],
  },
  {
    id: 'sh-pointer-mv',
    route: 'redirect',
    what: "rename the worktree's `.git` pointer away and put a new one in its place",
    isolation: 'worktree',
    calls: [
      bash(`${MAKE_EVIL_GITDIR} && mv .git old-pointer; printf 'gitdir: %s\\n' "$PWD/evil" > .git`),
    ],
  },
  {
    id: 'sh-worktree-commondir',
    route: 'redirect',
    what: "rewrite the worktree's `commondir` (in the repository's git dir) to its own git dir",
    isolation: 'worktree',
    calls: [
      bash(
        `${MAKE_EVIL_GITDIR} && printf '%s\\n' "$PWD/evil" > "$(git rev-parse --git-dir)/commondir"`,
      ),
    ],
  },
  {
    id: 'sh-commondir',
    route: 'redirect',
    what: 'write `.git/commondir` to redirect the repository (in place)',
    isolation: 'none',
    calls: [bash(`${MAKE_EVIL_GITDIR} && printf '%s\\n' "$PWD/evil" > .git/commondir`)],
  },
  {
    id: 'sh-nested-gitfile',
    route: 'redirect',
    what: 'put a `.git` file `gitdir: <its own git dir>` in a subfolder',
    isolation: 'worktree',
    calls: [
      bash(
        `${MAKE_EVIL_GITDIR} && mkdir -p sub && printf 'gitdir: %s\\n' "$PWD/evil" > sub/.git && echo x > sub/f`,
      ),
    ],
  },
  {
    id: 'sh-config',
    escapesUnsandboxed: true,
    route: 'config',
    what: 'append command-running keys to `.git/config` (in place)',
    isolation: 'none',
    calls: [bash('printf \'%s\' "$EVIL_CONFIG" >> .git/config')],
  },
  {
    id: 'sh-hooks',
    escapesUnsandboxed: true,
    route: 'config',
    what: 'write `.git/hooks/post-checkout` and `pre-commit` (in place)',
    isolation: 'none',
    calls: [
      bash(
        "for h in post-checkout pre-commit; do printf '#!/bin/sh\\n{marker} hook\\n' > .git/hooks/$h && chmod +x .git/hooks/$h; done",
      ),
    ],
  },
  {
    id: 'sh-nested-repo',
    route: 'config',
    what: 'init a repository in a subfolder whose config sets every command-running key',
    isolation: 'worktree',
    calls: [
      bash(
        "git init -q sub && printf '%s' \"$EVIL_CONFIG\" >> sub/.git/config && echo x > sub/f && printf '* filter=pwn diff=pwn\\n' > sub/.gitattributes",
      ),
    ],
  },
  {
    id: 'sh-nested-repo-here',
    route: 'config',
    what: 'from workdir `pkg`, make `pkg` a repository of its own with that config (in place)',
    isolation: 'none',
    workdir: 'pkg',
    calls: [bash('git init -q . && printf \'%s\' "$EVIL_CONFIG" >> .git/config; echo x > f')],
  },
  {
    id: 'hist-in-place',
    escapesUnsandboxed: true,
    route: 'history',
    what: 'truncate HEAD, refs, `packed-refs`, the index; delete loose objects (in place)',
    isolation: 'none',
    calls: [
      bash(
        ': > .git/HEAD; rm -f .git/packed-refs .git/index; rm -rf .git/refs/heads/*; find .git/objects -type f -delete; echo done',
      ),
    ],
  },
  {
    id: 'hist-common',
    escapesUnsandboxed: true,
    route: 'history',
    what: "from a worktree, delete the repository's objects and truncate its HEAD",
    isolation: 'worktree',
    calls: [
      bash(
        'c=$(git rev-parse --git-common-dir); find "$c/objects" -type f -delete; : > "$c/HEAD"; echo done',
      ),
    ],
  },
  {
    id: 'hist-refs',
    escapesUnsandboxed: true,
    route: 'history',
    what: 'delete the `main` branch with the real git (past the guard)',
    isolation: 'worktree',
    calls: [
      bash(
        '"$(type -P -a git | grep -v bin-guard | head -n1)" update-ref -d refs/heads/main; echo done',
      ),
    ],
  },
  ...GIT_SHAPED_ATTEMPTS,
];

/** The attempt's tool calls with its marker command, hooks folder and config filled in. */
export function attemptCalls(attempt: GitAttempt, world: GitWorld): ToolCall[] {
  const marker = markerCommand(world, attempt.id);
  const fill = (text: string) => text.replaceAll('{marker}', marker);
  const config = fill(EVIL_CONFIG);
  return attempt.calls.map((call) => {
    const input = Object.fromEntries(
      Object.entries(call.input).map(([key, value]) => [
        key,
        typeof value === 'string'
          ? call.name === 'run_bash' && key === 'command'
            ? `export EVIL_CONFIG=${shellQuote(config)}; ${fill(value)}`
            : fill(value)
          : value,
      ]),
    );
    return { name: call.name, input };
  });
}

export function attemptReplies(attempt: GitAttempt, world: GitWorld): FakeReply[] {
  return [{ toolUses: attemptCalls(attempt, world) }, { text: 'Done.' }];
}

function shellQuote(text: string): string {
  return `'${text.replaceAll("'", `'\\''`)}'`;
}
