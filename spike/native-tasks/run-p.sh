#!/bin/bash
# usage: run-p.sh <tag> [extra env...]
set -u
D=/tmp/spike19/probe; TAG=$1; shift
R=$D/run-$TAG; rm -rf $R; mkdir -p $R/home $R/tmp $R/proj
API_LOG=$R/api.log node $D/fake-api.mjs & API=$!
for i in $(seq 50); do [ -s $D/port ] && break; sleep 0.1; done
PORT=$(cat $D/port); rm -f $D/port
[ -n "${SEED:-}" ] && printf "%s" "$SEED" > $R/home/.claude.json
cd $R/proj
env -i PATH=$PATH HOME=$R/home LANG=C.UTF-8 ANTHROPIC_BASE_URL=http://127.0.0.1:$PORT ANTHROPIC_API_KEY=sk-ant-fake-0123456789 \
  CLAUDE_CODE_DISABLE_NONESSENTIAL_TRAFFIC=1 DISABLE_TELEMETRY=1 DISABLE_AUTOUPDATER=1 CLAUDE_CODE_MAX_RETRIES=0 ENABLE_TOOL_SEARCH=false \
  CLAUDE_CODE_TMPDIR=$R/tmp TMPDIR=$R/tmp XDG_RUNTIME_DIR=$R/tmp PROBE_LOG=$R/mcp.log "$@" \
  timeout 60 /work/main/.cache/claude-code-2.1.328/node_modules/@anthropic-ai/claude-code/bin/claude.exe -p "run the slow job" --plugin-dir $D/plugin \
  --output-format stream-json --verbose --allowedTools "mcp__plugin_tprobe_srv__slow" > $R/out.jsonl 2> $R/err.txt
echo "rc=$?" > $R/rc
kill $API 2>/dev/null
