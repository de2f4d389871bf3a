/**
 * Phase (c) of `npm run bench:events` (eventsSoak.ts), faults: `--streams` open subscriptions
 * (half SSE, half graphql-ws) while orders are placed; a Redis primary is killed for 6 s: each
 * stream either lost nothing or ended with EVENTS_MISSED, and how long after the kill.
 */
import { SseStream } from '../test/support/sseStream.js';
import { waitUntil } from '../test/support/waitUntil.js';
import { percentile } from './eventStages.js';
import { out, QUERY } from './eventsRig.js';
import type { EventsRig } from './eventsRig.js';

export interface FaultsOptions {
  /** Streams open while the primary is killed (at most one per user). */
  streams: number;
  /** Users of the rig (`--users`). */
  users: number;
}

/** Runs the faults phase on `rig` and prints its line, `(c) …`. */
export async function runFaults(rig: EventsRig, options: FaultsOptions): Promise<void> {
  // (c) A primary killed while streams are open.
  const faulted = rig.users.slice(0, Math.min(options.streams, options.users));
  const perStream = faulted.map(() => ({
    heard: new Set<string>(),
    endedWith: undefined as string | undefined,
    endedAt: 0,
  }));
  const sses: SseStream[] = [];
  await Promise.all(
    faulted.map(async (user, s) => {
      const record = perStream[s]!;
      const end = (code: string) => {
        record.endedWith ??= code;
        record.endedAt ||= performance.now();
      };
      if (s % 2 === 0) {
        rig.wsSubscriptions(rig.apis[s % 3]!, user.userId, 1, (orderId) => record.heard.add(orderId), end);
        return;
      }
      const stream = await SseStream.open(rig.apis[s % 3]!.url, rig.token(user.userId), undefined, QUERY);
      sses.push(stream);
      void (async () => {
        for (;;) {
          const event = await stream.next();
          if (event.event !== 'next') return end(event.event);
          const data = JSON.parse(event.data) as {
            data?: { orderEvents: { order: { orderId: string } } };
            errors?: { extensions?: { code?: string } }[];
          };
          const code = data.errors?.[0]?.extensions?.code;
          if (code) return end(code);
          const id = data.data?.orderEvents.order.orderId;
          if (id) record.heard.add(id);
        }
      })().catch(() => end('ended without a word'));
    }),
  );
  await waitUntil(async () => (await rig.activeSubscriptions()) >= faulted.length, {
    timeoutMs: 60_000,
    intervalMs: 200,
    what: 'the streams open',
  });
  const placedFor = faulted.map(() => [] as string[]);
  let placing = true;
  const placer = (async () => {
    for (let n = 0; placing; n++) {
      const s = n % faulted.length;
      placedFor[s]!.push(await rig.placeOrder(faulted[s]!.userId));
    }
  })();
  await new Promise((resolve) => setTimeout(resolve, 2000));
  const victim = rig.redis.nodes[0]!;
  const killedAt = performance.now();
  await victim.kill();
  await new Promise((resolve) => setTimeout(resolve, 6000));
  await rig.redis.restart(victim);
  await new Promise((resolve) => setTimeout(resolve, 3000));
  placing = false;
  await placer;
  // Every order placed so far has had time to arrive at a stream still open.
  await new Promise((resolve) => setTimeout(resolve, 3000));
  let intact = 0;
  let missedInTime = 0;
  let late = 0;
  let silentLoss = 0;
  const endMs: number[] = [];
  for (const [s, record] of perStream.entries()) {
    if (record.endedWith === 'EVENTS_MISSED') {
      const ms = record.endedAt - killedAt;
      endMs.push(ms);
      if (ms <= 5000) missedInTime++;
      else late++;
      continue;
    }
    const missing = placedFor[s]!.filter((id) => !record.heard.has(id));
    if (missing.length === 0 && record.endedWith === undefined) intact++;
    else silentLoss++;
  }
  endMs.sort((a, b) => a - b);
  out(
    `(c) ${faulted.length} streams (half SSE, half graphql-ws), ${placedFor.flat().length} orders placed, a primary killed for 6 s: ${intact} lost nothing, ${missedInTime} ended with EVENTS_MISSED within 5 s (p50 ${percentile(endMs, 50).toFixed(0)} ms, max ${(endMs.at(-1) ?? NaN).toFixed(0)} ms after the kill), ${late} later, ${silentLoss} with a silent loss or another end`,
  );
  for (const stream of sses) stream.close();
}
