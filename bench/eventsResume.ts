/**
 * Phase (b) of `npm run bench:events` (eventsSoak.ts), resume on another instance: `--reconnects`
 * SSE reconnects with `Last-Event-ID`, each to another instance than before, an order of the
 * stream's user placed while it is away each time: lost and duplicated events counted.
 */
import { SseStream } from '../test/support/sseStream.js';
import { out, QUERY } from './eventsRig.js';
import type { EventsRig } from './eventsRig.js';

export interface ResumeOptions {
  /** SSE reconnects in all, over up to 20 users' streams. */
  reconnects: number;
  /** Users of the rig (`--users`). */
  users: number;
}

/** Runs the resume phase on `rig` and prints its line, `(b) …`. */
export async function runResume(rig: EventsRig, options: ResumeOptions): Promise<void> {
  const resumers = Math.min(20, options.users);
  let lost = 0;
  let duplicated = 0;
  let missedSignals = 0;
  const resumeStart = performance.now();
  await Promise.all(
    rig.users.slice(0, resumers).map(async (user, s) => {
      const token = rig.token(user.userId);
      const seen = new Set<string>();
      let lastId: string | undefined;
      const cycles = Math.ceil(options.reconnects / resumers);
      for (let c = 0; c < cycles; c++) {
        // Without an event id yet, nothing can be resumed: the stream opens (subscribed) first.
        const fresh = lastId === undefined;
        let orderId = fresh ? '' : await rig.placeOrder(user.userId);
        const stream = await SseStream.open(rig.apis[(s + c) % 3]!.url, token, lastId, QUERY);
        if (fresh) orderId = await rig.placeOrder(user.userId);
        const deadline = setTimeout(() => stream.close(), 10_000);
        try {
          for (;;) {
            const event = await stream.next();
            if (event.event !== 'next') throw new Error(`stream ended: ${event.event}`);
            const data = JSON.parse(event.data) as {
              data?: { orderEvents: { order: { orderId: string } } };
              errors?: { extensions?: { code?: string } }[];
            };
            if (data.errors?.[0]?.extensions?.code === 'EVENTS_MISSED') missedSignals++;
            const id = data.data?.orderEvents.order.orderId;
            if (!id) continue;
            if (seen.has(id)) duplicated++;
            seen.add(id);
            lastId = event.id;
            if (id === orderId) break;
          }
        } catch (error) {
          lost++;
          out(
            `(b) lost: ${user.userId}'s reconnect ${c} to instance ${(s + c) % 3} after ${lastId ?? 'no event'} did not bring order ${orderId} (${String(error)})`,
          );
        } finally {
          clearTimeout(deadline);
          stream.close();
        }
      }
    }),
  );
  out(
    `(b) ${resumers * Math.ceil(options.reconnects / resumers)} SSE reconnects with Last-Event-ID, each to another instance, an order placed while away each time: lost ${lost}, duplicated ${duplicated}, EVENTS_MISSED ${missedSignals}, in ${((performance.now() - resumeStart) / 1000).toFixed(1)} s`,
  );
}
