#!/bin/sh
# Starts one of delegate's Node.js entry points (a hook, the MCP server, the CLI) when Node.js 20
# or newer is on PATH; otherwise prints one line saying what to install, instead of a stack trace
# or "command not found". Claude Code's native installer needs no Node, so this happens.
#   sh run-node.sh <hook|session-start|server|cli> <entry file> [arguments…]
# Without a usable Node: `hook` prints the line to stderr (Claude Code's debug log) and exits 0,
# which lets the tool call through; `session-start` prints it to stdout, the session's context,
# so Claude can tell the user; `server` runs needs-node-server.sh, a stand-in MCP server whose
# one tool says what to install (a server that failed to start is cached as failed by Claude
# Code for 15 minutes, a connected one is not); `cli` prints it to stderr and exits 1.
# The version is checked inside the one node process that runs the entry (-e, before the entry
# loads): no second `node --version` on every tool call. The check is kept to syntax old Nodes parse.
mode=$1
entry=$2
shift 2
install='install it from https://nodejs.org or your package manager (e.g. brew install node, or nvm install 20), then restart Claude Code'

if ! command -v node >/dev/null 2>&1; then
  line="delegate needs Node.js 20 or newer on PATH (no node found): $install."
  case $mode in
    hook) printf '%s\n' "$line" >&2; exit 0 ;;
    session-start) printf '%s Until then its tools and hooks are off.\n' "$line"; exit 0 ;;
    server) exec sh "${0%/*}/needs-node-server.sh" "no node found" ;;
    *) printf '%s\n' "$line" >&2; exit 1 ;;
  esac
fi

exec node -e '
var taken = process.argv.splice(1, 2);
var mode = taken[0];
var entry = (process.argv[1] = require("path").resolve(process.argv[1]));
if (Number(process.versions.node.split(".")[0]) < 20) {
  var line = "delegate needs Node.js 20 or newer on PATH (found " + process.version + "): " + taken[1] + ".";
  if (mode === "server") {
    // The entry is dist/server.mjs; the stand-in sits beside this script, in launch/.
    var standIn = require("path").join(entry, "..", "..", "launch", "needs-node-server.sh");
    var run = require("child_process").spawnSync("sh", [standIn, "found " + process.version], { stdio: "inherit" });
    process.exitCode = run.status === null ? 1 : run.status;
  } else {
    if (mode === "session-start") process.stdout.write(line + " Until then its tools and hooks are off.\n");
    else process.stderr.write(line + "\n");
    process.exitCode = mode === "hook" || mode === "session-start" ? 0 : 1;
  }
} else if (/\.cjs$/.test(entry)) {
  require(entry);
} else {
  import(require("url").pathToFileURL(entry).href);
}' "$mode" "$install" "$entry" "$@"
