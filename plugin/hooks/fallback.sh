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
if [ -f "$mark" ] && read -r pid 2>/dev/null <"$mark" && [ -n "$pid" ] && kill -0 "$pid" 2>/dev/null; then
  exit 0
fi
exec "$@"
