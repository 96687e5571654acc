#!/bin/sh
# The command path of a hook, taken only when this session's delegate server cannot answer it.
# While the server runs, hooks.json's `mcp_tool` hook asks it in-process (no process per call);
# Claude Code runs both hooks of an event side by side, and this one then ends at once. The
# server marks itself in <data home>/hook-servers/<pid of the Claude Code process it serves>
# (also this script's parent), holding its own pid; when that file is missing or its process is
# dead (server not started yet, crashed, or not Node 20), the command runs, and decides the same.
#   sh fallback.sh <command> [arguments…]
home=${DELEGATE_HOME:-${HOME:-}/.delegate}
mark=$home/hook-servers/${PPID:-none}

# Whether process $1 runs: a server that died is a zombie until Claude Code reaps it, and
# `kill -0` still finds a zombie, so its state is read where /proc has it (no process).
running() {
  kill -0 "$1" 2>/dev/null || return 1
  [ -r "/proc/$1/stat" ] || return 0
  read -r stat 2>/dev/null <"/proc/$1/stat" || return 1
  case ${stat##*) } in
    Z* | X*) return 1 ;;
  esac
  return 0
}

if [ -f "$mark" ] && read -r pid 2>/dev/null <"$mark" && [ -n "$pid" ] && running "$pid"; then
  exit 0
fi
exec "$@"
