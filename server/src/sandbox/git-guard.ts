import { chmodSync, mkdirSync, realpathSync, renameSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { shellQuote } from '../util/shell-quote.ts';

/**
 * The `git` a task worker runs (POSIX sh). The task works on its own branch and the
 * supervisor merges it, so commands that reach remotes, leave or rewrite branches and refs,
 * or change configuration beyond the repository are refused; everything else runs with
 * repository hooks off. A guard against mistakes, not a sandbox: bash can reach the real git.
 */
const SCRIPT = `#!/bin/sh
# Installed by delegate (git guard for task workers).
guard_dir=__GUARD_DIR__

refuse() {
  printf 'git guard: the task worker may not run "git %s": %s The supervisor merges the task branch; commit your work on the current branch instead.\\n' "$subcommand" "$1" >&2
  exit 1
}

find_real_git() {
  IFS=:
  set -f
  for dir in $PATH; do
    [ -n "$dir" ] || dir=.
    [ "$dir" != "$guard_dir" ] || continue
    if [ -f "$dir/git" ] && [ -x "$dir/git" ]; then
      [ "$(cd "$dir" 2>/dev/null && pwd -P)" != "$guard_dir" ] || continue
      printf '%s\\n' "$dir/git"
      return 0
    fi
  done
  return 1
}

# Runs the real git where the user's git would run (-C, --git-dir, --work-tree applied).
in_repo() (
  cd "$cd_path" 2>/dev/null || exit 1
  if [ -n "$git_dir" ]; then GIT_DIR=$git_dir; export GIT_DIR; fi
  if [ -n "$work_tree" ]; then GIT_WORK_TREE=$work_tree; export GIT_WORK_TREE; fi
  exec "$real_git" "$@"
)

check_config() {
  positional=0
  for arg in "$@"; do
    case $arg in
      --global|--system|--file|--file=*|-f|--blob|--blob=*) refuse "it changes configuration outside this repository." ;;
      --unset|--unset-all|--add|--replace-all|--rename-section|--remove-section|-e|--edit)
        refuse "it changes the repository configuration, which the main checkout shares." ;;
      -*) ;;
      *)
        if [ "$positional" -eq 0 ]; then
          case $arg in get|list) return 0 ;; set|unset|edit|rename-section|remove-section)
            refuse "it changes the repository configuration, which the main checkout shares." ;; esac
        fi
        positional=$((positional + 1)) ;;
    esac
  done
  # "git config key" reads; "git config key value" writes the shared configuration.
  [ "$positional" -le 1 ] || refuse "it changes the repository configuration, which the main checkout shares."
}

check_branch() {
  for arg in "$@"; do
    case $arg in
      --) return 0 ;;
      --force|--delete|--move) refuse "it moves, renames or deletes branches." ;;
      --*) ;;
      -*[fdDmMC]*) refuse "it moves, renames or deletes branches." ;;
    esac
  done
}

# Restoring files (git checkout [<tree-ish>] [--] <path>...) is fine; leaving the branch is not.
check_checkout() {
  target=
  operands=0
  for arg in "$@"; do
    case $arg in
      --) return 0 ;;
      -b|-B|-b?*|-B?*|--orphan|--orphan=*|--detach|-t|--track|--track=*|-) refuse "it switches or creates branches." ;;
      -*) ;;
      *) operands=$((operands + 1)); [ -n "$target" ] || target=$arg ;;
    esac
  done
  [ "$operands" -eq 1 ] || return 0
  [ "$target" != "$(in_repo symbolic-ref --short -q HEAD)" ] || return 0
  if in_repo show-ref --verify --quiet "refs/heads/$target"; then refuse "it switches branches."; fi
  [ ! -e "$cd_path/$target" ] || return 0
  if in_repo rev-parse --verify --quiet "$target^{commit}" >/dev/null ||
    [ -n "$(in_repo for-each-ref --count=1 "refs/remotes/*/$target")" ]; then
    refuse "it leaves the task branch."
  fi
}

guard() {
  while [ $# -gt 0 ]; do
    case $1 in
      -C)
        [ $# -ge 2 ] || return 0
        case $2 in '') ;; /*) cd_path=$2 ;; *) cd_path=$cd_path/$2 ;; esac
        shift 2 ;;
      --git-dir|--work-tree|-c|--namespace|--super-prefix|--config-env|--attr-source)
        [ $# -ge 2 ] || return 0
        case $1 in --git-dir) git_dir=$2 ;; --work-tree) work_tree=$2 ;; esac
        shift 2 ;;
      --git-dir=*) git_dir=\${1#--git-dir=}; shift ;;
      --work-tree=*) work_tree=\${1#--work-tree=}; shift ;;
      -*) shift ;;
      *) break ;;
    esac
  done
  [ $# -gt 0 ] || return 0
  subcommand=$1
  shift
  case $subcommand in
    push|pull|fetch|remote) refuse "it reaches other repositories." ;;
    merge|rebase|switch|worktree) refuse "it works across branches." ;;
    update-ref|symbolic-ref|replace|filter-branch) refuse "it rewrites refs or history." ;;
    tag) [ $# -eq 0 ] || case $1 in -l|--list) ;; *) refuse "it creates or deletes tags." ;; esac ;;
    config) check_config "$@" ;;
    branch) check_branch "$@" ;;
    checkout) check_checkout "$@" ;;
    gc) for arg in "$@"; do case $arg in --prune|--prune=*) refuse "it prunes objects." ;; esac; done ;;
  esac
}

cd_path=.
git_dir=
work_tree=
subcommand=
if ! real_git=$(find_real_git); then
  printf 'git guard: no git found on PATH besides the guard in %s.\\n' "$guard_dir" >&2
  exit 127
fi
guard "$@"
exec "$real_git" -c core.hooksPath=/dev/null "$@"
`;

/**
 * Installs the git guard as `<binDir>/git` and returns binDir, to be put first on the PATH
 * of run_bash. Written to a temp file and renamed, so workers sharing binDir never run a
 * half-written script.
 */
export function installGitGuard(binDir: string): string {
  mkdirSync(binDir, { recursive: true });
  const script = SCRIPT.replace('__GUARD_DIR__', () => shellQuote(realpathSync(binDir)));
  const path = join(binDir, 'git');
  const temp = `${path}.${process.pid}.${Date.now()}.tmp`;
  writeFileSync(temp, script, { mode: 0o755 });
  chmodSync(temp, 0o755);
  renameSync(temp, path);
  return binDir;
}
