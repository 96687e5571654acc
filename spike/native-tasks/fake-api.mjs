import { createServer } from 'node:http';
import { appendFileSync, writeFileSync } from 'node:fs';
const LOG = process.env.API_LOG || '/tmp/spike19/probe/api.log';
const TOOL = process.env.TOOL_NAME || 'mcp__plugin_tprobe_srv__slow';
const ev = (res, type, data) => res.write(`event: ${type}\ndata: ${JSON.stringify({ type, ...data })}\n\n`);
const srv = createServer((req, res) => {
  let body = '';
  req.on('data', (c) => (body += c));
  req.on('end', () => {
    if (req.method !== 'POST' || !req.url.startsWith('/v1/messages') || req.url.includes('count_tokens')) { res.writeHead(200, { 'content-type': 'application/json' }); return res.end(JSON.stringify({ input_tokens: 10, data: [] })); }
    const j = JSON.parse(body);
    const n = j.messages.filter((m) => m.role === 'assistant').length;
    const last = j.messages[j.messages.length - 1];
    appendFileSync(LOG, `${new Date().toISOString()} REQ n=${n} tools=${(j.tools||[]).map(t=>t.name).filter(x=>x.startsWith('mcp')).join(',')} moved=${(JSON.stringify(last).match(/moved to the background as task/g)||[]).length} notMoved=${(JSON.stringify(last).match(/not moved to the background/g)||[]).length} notif=${(JSON.stringify(last).match(/<task-notification>/g)||[]).length} last=${JSON.stringify(last).slice(0, 3000)}\n`);
    res.writeHead(200, { 'content-type': 'text/event-stream' });
    ev(res, 'message_start', { message: { id: 'msg_' + Date.now(), type: 'message', role: 'assistant', model: j.model, content: [], stop_reason: null, stop_sequence: null, usage: { input_tokens: 100, output_tokens: 1, cache_creation_input_tokens: 0, cache_read_input_tokens: 0 } } });
    const stopId = process.env.API_MODE === 'stop' && n === 1 ? (JSON.stringify(last).match(/TaskStop with task_id \\"(\w+)\\"/) || [])[1] : undefined;
    if (stopId) {
      ev(res, 'content_block_start', { index: 0, content_block: { type: 'tool_use', id: 'toolu_s' + Date.now(), name: 'TaskStop', input: {} } });
      ev(res, 'content_block_delta', { index: 0, delta: { type: 'input_json_delta', partial_json: JSON.stringify({ task_id: stopId }) } });
      ev(res, 'content_block_stop', { index: 0 });
      ev(res, 'message_delta', { delta: { stop_reason: 'tool_use', stop_sequence: null }, usage: { output_tokens: 20 } });
    } else if (n === 0) {
      const K = Number(process.env.TOOL_COUNT || 1);
      for (let i = 0; i < K; i++) {
      ev(res, 'content_block_start', { index: i, content_block: { type: 'tool_use', id: 'toolu_' + Date.now() + '_' + i, name: TOOL, input: {} } });
      ev(res, 'content_block_delta', { index: i, delta: { type: 'input_json_delta', partial_json: '{"what":"x' + i + '"}' } });
      ev(res, 'content_block_stop', { index: i });
      }
      ev(res, 'message_delta', { delta: { stop_reason: 'tool_use', stop_sequence: null }, usage: { output_tokens: 20 } });
    } else {
      ev(res, 'content_block_start', { index: 0, content_block: { type: 'text', text: '' } });
      ev(res, 'content_block_delta', { index: 0, delta: { type: 'text_delta', text: `turn ${n} ok` } });
      ev(res, 'content_block_stop', { index: 0 });
      ev(res, 'message_delta', { delta: { stop_reason: 'end_turn', stop_sequence: null }, usage: { output_tokens: 20 } });
    }
    ev(res, 'message_stop', {});
    res.end();
  });
});
srv.listen(0, '127.0.0.1', () => { writeFileSync(process.env.PORT_FILE || '/tmp/spike19/probe/port', String(srv.address().port)); });
