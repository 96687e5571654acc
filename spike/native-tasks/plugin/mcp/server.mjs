// Raw JSON-RPC stdio server that logs every message; serves both eras; answers tools/call with a task.
import { appendFileSync } from 'node:fs';
import { createInterface } from 'node:readline';
const LOG = process.env.PROBE_LOG;
const ASK = process.env.PROBE_ASK === '1';
const WORK_MS = Number(process.env.PROBE_WORK_MS || 4000);
const log = (dir, obj) => appendFileSync(LOG, `${new Date().toISOString()} ${dir} ${JSON.stringify(obj)}\n`);
const send = (obj) => { log('OUT', obj); process.stdout.write(JSON.stringify(obj) + '\n'); };
const tasks = new Map();
const pending = new Map();
const now = () => new Date().toISOString();
const TOOL = { name: 'slow', description: 'Runs a slow job. Use it when asked to run the slow job.', inputSchema: { type: 'object', properties: { what: { type: 'string' } } } };
function taskView(t) {
  const base = { taskId: t.id, status: t.status, createdAt: t.createdAt, lastUpdatedAt: t.updatedAt, ttlMs: 3600000, pollIntervalMs: 1000 };
  if (t.status === 'working' && ASK && !t.answered && Date.now() - t.start > 1500) { t.status = 'input_required'; t.updatedAt = now(); base.status = t.status; }
  if (t.status === 'working' && (!ASK || t.answered) && Date.now() - t.start > WORK_MS) { t.status = 'completed'; t.updatedAt = now(); base.status = t.status; }
  if (base.status === 'input_required') base.inputRequests = { q1: { method: 'elicitation/create', params: { mode: 'form', message: 'Which colour should the worker use?', requestedSchema: { type: 'object', properties: { answer: { type: 'string', description: 'Your answer' } }, required: ['answer'] } } } };
  if (base.status === 'completed') base.result = { content: [{ type: 'text', text: `slow job done (answer=${JSON.stringify(t.answer ?? null)})` }], isError: false };
  if (base.status === 'cancelled') base.statusMessage = 'cancelled by client';
  return base;
}
createInterface({ input: process.stdin }).on('line', (line) => {
  let msg; try { msg = JSON.parse(line); } catch { log('BAD', line); return; }
  log('IN', msg);
  if (msg.method === undefined && msg.id !== undefined && pending.has(msg.id)) { const f = pending.get(msg.id); pending.delete(msg.id); f(msg); return; }
  if (msg.id === undefined) return; // notification
  const p = msg.params ?? {};
  const meta = p._meta ?? {};
  const ok = (result) => send({ jsonrpc: '2.0', id: msg.id, result });
  const err = (code, message, data) => send({ jsonrpc: '2.0', id: msg.id, error: { code, message, ...(data && { data }) } });
  const modern = meta['io.modelcontextprotocol/protocolVersion'] !== undefined;
  const serverInfo = { 'io.modelcontextprotocol/serverInfo': { name: 'tprobe', version: '0.1.0' } };
  switch (msg.method) {
    case 'server/discover':
      if (process.env.PROBE_LEGACY === '1') return err(-32601, 'Method not found');
      return ok({ resultType: 'complete', supportedVersions: ['2026-07-28', '2025-11-25'], capabilities: { tools: {}, extensions: { 'io.modelcontextprotocol/tasks': {} } }, _meta: serverInfo, ttlMs: 0, cacheScope: 'private' });
    case 'initialize':
      return ok({ protocolVersion: p.protocolVersion, capabilities: { tools: {} }, serverInfo: { name: 'tprobe', version: '0.1.0' } });
    case 'tools/list':
      return ok({ ...(modern && process.env.PROBE_BARE !== '1' && { resultType: 'complete', ttlMs: 0, cacheScope: 'private', _meta: serverInfo }), tools: [TOOL] });
    case 'tools/call': {
      const caps = meta['io.modelcontextprotocol/clientCapabilities'] ?? {};
      if (process.env.PROBE_ELICIT === '1') {
        pending.set('e1', (reply) => ok({ resultType: 'complete', content: [{ type: 'text', text: 'elicit reply: ' + JSON.stringify(reply) }] }));
        setTimeout(() => { if (pending.has('e1')) { pending.delete('e1'); ok({ resultType: 'complete', content: [{ type: 'text', text: 'elicit: no reply in 8s' }] }); } }, 8000);
        return send({ jsonrpc: '2.0', id: 'e1', method: 'elicitation/create', params: { mode: 'form', message: 'Server-initiated question?', requestedSchema: { type: 'object', properties: { v: { type: 'string' } }, required: ['v'] } } });
      }
      if (modern && caps.extensions && caps.extensions['io.modelcontextprotocol/tasks']) {
        const t = { id: 't-' + Math.random().toString(36).slice(2), status: 'working', createdAt: now(), updatedAt: now(), start: Date.now() };
        tasks.set(t.id, t);
        return ok({ resultType: 'task', ...taskView(t), statusMessage: 'started', ...(process.env.PROBE_NOTE && { _meta: { 'com.anthropic/agent-task': { modelImmediateResponse: process.env.PROBE_NOTE } } }) });
      }
      return ok({ ...(modern && process.env.PROBE_BARE !== '1' && { resultType: 'complete' }), content: [{ type: 'text', text: 'plain result (no task)' }] });
    }
    case 'tasks/get': { const t = tasks.get(p.taskId); if (!t) return err(-32602, 'Task not found'); return ok({ resultType: 'complete', ...taskView(t) }); }
    case 'tasks/update': { const t = tasks.get(p.taskId); if (!t) return err(-32602, 'Task not found'); t.answered = true; t.answer = p.inputResponses; t.status = 'working'; t.start = Date.now() - WORK_MS + 1500; t.updatedAt = now(); return ok({ resultType: 'complete' }); }
    case 'tasks/cancel': { const t = tasks.get(p.taskId); if (!t) return err(-32602, 'Task not found'); t.status = 'cancelled'; t.updatedAt = now(); return ok({ resultType: 'complete' }); }
    case 'ping': return ok({});
    default: return err(-32601, 'Method not found: ' + msg.method);
  }
});
