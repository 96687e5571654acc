// usage: node run-i.mjs <tag> <seconds> [KEY=VAL...]; drives interactive claude in a pty via script(1)
import { spawn } from 'node:child_process';
import { mkdirSync, writeFileSync, readFileSync, existsSync, rmSync } from 'node:fs';
import { setTimeout as sleep } from 'node:timers/promises';
const [tag, secs, ...kv] = process.argv.slice(2);
const D = '/tmp/spike19/probe', R = `${D}/run-${tag}`;
rmSync(R, { recursive: true, force: true });
for (const d of ['home', 'tmp', 'proj']) mkdirSync(`${R}/${d}`, { recursive: true });
const KEY = 'sk-ant-fake-supervisor-interactive-0123456789';
writeFileSync(`${R}/home/.claude.json`, JSON.stringify({ hasCompletedOnboarding: true, theme: 'dark', customApiKeyResponses: { approved: [KEY.slice(-20)], rejected: [] }, projects: { [`${R}/proj`]: { hasTrustDialogAccepted: true } } }));
const api = spawn('node', [`${D}/fake-api.mjs`], { env: { ...process.env, API_LOG: `${R}/api.log`, PORT_FILE: `${R}/port` }, stdio: 'inherit' });
while (!existsSync(`${R}/port`)) await sleep(50);
const port = readFileSync(`${R}/port`, 'utf8');
const extra = Object.fromEntries(kv.map((s) => s.split(/=(.*)/s).slice(0, 2)));
const bin = '/work/main/.cache/claude-code-2.1.328/node_modules/@anthropic-ai/claude-code/bin/claude.exe';
const child = spawn('script', ['-qfec', `'${bin}' --plugin-dir '${D}/plugin' --allowedTools mcp__plugin_tprobe_srv__slow`, '/dev/null'], {
  cwd: `${R}/proj`, detached: true, stdio: ['pipe', 'pipe', 'pipe'],
  env: { PATH: process.env.PATH, LANG: 'C.UTF-8', TERM: 'xterm-256color', HOME: `${R}/home`, CLAUDE_CODE_TMPDIR: `${R}/tmp`, TMPDIR: `${R}/tmp`, XDG_RUNTIME_DIR: `${R}/tmp`,
    CLAUDE_CODE_DISABLE_NONESSENTIAL_TRAFFIC: '1', DISABLE_TELEMETRY: '1', DISABLE_AUTOUPDATER: '1', DISABLE_ERROR_REPORTING: '1', CLAUDE_CODE_MAX_RETRIES: '0', ENABLE_TOOL_SEARCH: 'false',
    ANTHROPIC_BASE_URL: `http://127.0.0.1:${port}`, ANTHROPIC_API_KEY: KEY, PROBE_LOG: `${R}/mcp.log`, ...extra } });
let screen = '';
child.stdout.setEncoding('utf8').on('data', (c) => (screen += c));
child.stderr.setEncoding('utf8').on('data', (c) => (screen += c));
await sleep(4000);
child.stdin.write('run the slow job');
await sleep(500);
child.stdin.write('\r');
const actions = process.env.ACTIONS ? JSON.parse(process.env.ACTIONS) : [];
const t0 = Date.now();
for (const a of actions) { await sleep(a.at - (Date.now() - t0)); child.stdin.write(a.keys); }
await sleep(Number(secs) * 1000 - (Date.now() - t0));
writeFileSync(`${R}/screen.txt`, screen);
try { process.kill(-child.pid, 'SIGKILL'); } catch {}
api.kill();
process.exit(0);
