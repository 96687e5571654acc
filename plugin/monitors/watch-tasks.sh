#!/bin/sh
# The delegate plugin's monitor (monitors.json). Claude Code can scope a monitor only to a
# skill being invoked, and a session may call the task tools without one, so it arms in every
# session; but until this project has a task on the status lines (written with its first task)
# it only sleeps here, with no Node process. Then it becomes `delegate watch`, which prints one
# line per task transition of this project and nothing else.
# This file's real folder: each symlink to it followed (`readlink -f` is not on every system),
# then `cd -P` for the folder's own.
self=$0
while [ -L "$self" ]; do
  link=$(readlink -- "$self") || break
  case $link in
    /*) self=$link ;;
    *) case $self in */*) self=${self%/*}/$link ;; *) self=$link ;; esac ;;
  esac
done
case $self in
  */*) here=${self%/*} ;;
  *) here=. ;;
esac
here=$(CDPATH='' cd -P -- "$here" && pwd -P) || exit 1
home=${DELEGATE_HOME:-${HOME}/.delegate}
project=${CLAUDE_PROJECT_DIR:-$PWD}
cd -P -- "$project" 2>/dev/null && project=$PWD
file=$home/status/lines
tab='	'

has_task() {
  [ -s "$file" ] || return 1
  while IFS= read -r line || [ -n "$line" ]; do
    rest=${line#* }
    [ "${rest%%"$tab"*}" = "$project" ] && return 0
  done <"$file"
  return 1
}

# On Windows (Git Bash) paths here (/c/…) are not the ones Node writes (C:\…): no waiting.
if [ "${OS:-}" != Windows_NT ]; then
  until has_task; do
    sleep "${DELEGATE_MONITOR_IDLE_S_FOR_TEST:-15}"
  done
fi
exec node "$here/../dist/cli.mjs" watch
