/**
 * Child process of bench/mux/run.ts: holds the agent ends of many idle tunnels, so the
 * parent's memory holds only server ends. Args: candidate name, ws URL, count.
 */
import { WebSocket } from 'ws';
import { ALL_CANDIDATES } from './candidates';

const [name, url, countText] = process.argv.slice(2);
const candidate = ALL_CANDIDATES.find((c) => c.name === name);
if (!candidate || !url || !countText) {
  process.stderr.write('usage: agent-side.ts <candidate> <ws url> <count>\n');
  process.exit(2);
}
const sockets: WebSocket[] = [];
let opened = 0;
const count = Number(countText);
// Connect in small batches: 500 simultaneous handshakes would measure the accept queue.
for (let i = 0; i < count; i++) {
  const ws = new WebSocket(url, { perMessageDeflate: false });
  candidate.agent(ws, (stream) => stream.resume());
  ws.on('error', (error) => process.stderr.write(`agent socket error: ${error.message}\n`));
  ws.once('open', () => {
    opened++;
    if (opened === count) process.stdout.write('ready\n');
  });
  sockets.push(ws);
  if (i % 50 === 49) await new Promise((resolve) => setTimeout(resolve, 20));
}
process.stdin.resume();
process.stdin.on('end', () => process.exit(0));
