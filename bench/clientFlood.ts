/**
 * The customer of `npm run bench:clients`, in a process of its own so that its work is not
 * charged to the server or to the other client: it tries to open ATTEMPTS Server-Sent Events
 * streams of `orderEvents`, 50 at a time, then as many WebSockets (each running one
 * `orderEvents`), keeps everything it got, and prints one JSON line per phase: `{ phase, held,
 * refused, failed }`. It ends on SIGTERM.
 *
 * Run: node --import tsx bench/clientFlood.ts with URL (the server's /graphql), TOKEN, ATTEMPTS.
 */
import WebSocket from 'ws';

const url = process.env.URL ?? '';
const token = process.env.TOKEN ?? '';
const attempts = Number(process.env.ATTEMPTS ?? '1000');
const WATCH = { query: 'subscription { orderEvents { type } }' };

interface Tally {
  held: number;
  refused: number;
  failed: number;
}
/** Everything held is kept referenced: an unread fetch body is cancelled once collected. */
const kept: unknown[] = [];

async function openStream(tally: Tally): Promise<void> {
  try {
    const response = await fetch(`${url}/stream`, {
      method: 'POST',
      headers: { 'content-type': 'application/json', accept: 'text/event-stream', authorization: `Bearer ${token}` },
      body: JSON.stringify(WATCH),
      signal: AbortSignal.timeout(30_000),
    });
    if ((response.headers.get('content-type') ?? '').startsWith('text/event-stream')) {
      tally.held += 1;
      kept.push(response, response.body?.getReader());
    } else {
      tally[response.status === 429 ? 'refused' : 'failed'] += 1;
      await response.arrayBuffer();
    }
  } catch {
    tally.failed += 1;
  }
}

function openSocket(tally: Tally): Promise<void> {
  return new Promise((resolve) => {
    const socket = new WebSocket(url.replace(/^http/, 'ws'), 'graphql-transport-ws');
    let settled = false;
    const settle = (outcome: keyof Tally) => {
      if (settled) return;
      settled = true;
      clearTimeout(timer);
      tally[outcome] += 1;
      resolve();
    };
    const timer = setTimeout(() => {
      socket.terminate();
      settle('failed');
    }, 30_000);
    socket.once('unexpected-response', (_request, response) => {
      socket.terminate();
      settle(response.statusCode === 429 ? 'refused' : 'failed');
    });
    socket.once('error', () => settle('failed'));
    socket.once('open', () =>
      socket.send(JSON.stringify({ type: 'connection_init', payload: { authorization: `Bearer ${token}` } })),
    );
    socket.on('message', (data: Buffer) => {
      if ((JSON.parse(data.toString()) as { type: string }).type !== 'connection_ack') return;
      socket.send(JSON.stringify({ id: '1', type: 'subscribe', payload: WATCH }));
      kept.push(socket);
      settle('held');
    });
    // 1008: over the client's bound at connection_init.
    socket.once('close', (code) => settle(code === 1008 ? 'refused' : 'failed'));
  });
}

async function phase(name: string, open: (tally: Tally) => Promise<void>): Promise<void> {
  const tally: Tally = { held: 0, refused: 0, failed: 0 };
  for (let started = 0; started < attempts; started += 50) {
    await Promise.all(Array.from({ length: Math.min(50, attempts - started) }, () => open(tally)));
  }
  process.stdout.write(`${JSON.stringify({ phase: name, ...tally })}\n`);
}

await phase('sse', openStream);
await phase('ws', openSocket);
process.stdout.write(`${JSON.stringify({ phase: 'holding' })}\n`);
process.once('SIGTERM', () => process.exit(0));
setInterval(() => kept.length, 60_000);
