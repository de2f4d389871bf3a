/**
 * The fan-out's part of routing by topic, on the in-process bus (which hears every topic): the
 * bus is asked to watch a topic once, while at least one subscription listens to it, and to stop
 * when the last one leaves; the number of topics watched at once is bounded; each (topic, event)
 * is delivered once; and a resume the memory no longer covers is told so.
 */
import { describe, expect, it } from 'vitest';
import { InProcessEventBus } from '../../src/events/eventBus.js';
import type { TopicHandlers } from '../../src/events/eventBus.js';
import { EventFanOut } from '../../src/graphql/eventFanOut.js';
import { aProduct, aUser, placedEvents } from '../support/factories.js';

/** The in-process bus, recording which topics are watched now. */
class WatchedBus extends InProcessEventBus {
  readonly watching = new Map<string, number>();
  override watch(topic: string, handlers?: TopicHandlers): () => void {
    this.watching.set(topic, (this.watching.get(topic) ?? 0) + 1);
    const stop = super.watch(topic, handlers);
    return () => {
      const left = (this.watching.get(topic) ?? 0) - 1;
      if (left > 0) this.watching.set(topic, left);
      else this.watching.delete(topic);
      stop();
    };
  }
}

const alice = aUser();
const anEvent = placedEvents(alice, [aProduct()], 10n ** 20n);
const ALICES = `user-orders:${alice.userId}`;

describe('the fan-out', () => {
  it('watches a topic once while anyone listens, and stops when the last listener leaves', async () => {
    const bus = new WatchedBus();
    const fanOut = new EventFanOut(bus);
    const [a, b] = [fanOut.subscribe({ topic: ALICES }), fanOut.subscribe({ topic: ALICES })];
    const order = fanOut.subscribe({ topic: 'order:o1' });
    expect(Object.fromEntries(bus.watching)).toEqual({ [ALICES]: 1, 'order:o1': 1 });
    expect(fanOut.subscribedTopicCount).toBe(2);
    await a.return?.();
    expect(bus.watching.get(ALICES)).toBe(1);
    await b.return?.();
    await order.return?.();
    expect(bus.watching.size).toBe(0);
    expect(fanOut.subscribedTopicCount).toBe(0);
  });

  it('refuses a subscription to one topic more than its bound, and takes it once a topic is free', async () => {
    const fanOut = new EventFanOut(new WatchedBus(), 10, 100, 2);
    const first = fanOut.subscribe({ topic: 'order:o1' });
    fanOut.subscribe({ topic: 'order:o2' });
    fanOut.subscribe({ topic: 'order:o2' }); // a topic watched already costs nothing
    expect(() => fanOut.subscribe({ topic: 'order:o3' })).toThrow(/as many topics as it may/);
    await first.return?.();
    expect(() => fanOut.subscribe({ topic: 'order:o3' })).not.toThrow();
  });

  it('delivers an event heard twice on a topic once, and on each of its topics', async () => {
    const bus = new WatchedBus();
    const fanOut = new EventFanOut(bus);
    const event = anEvent();
    const mine = fanOut.subscribe({ topic: ALICES });
    const shop = fanOut.subscribe({ topic: 'orders' });
    await bus.publish(event);
    await bus.publish(event);
    const marker = anEvent();
    await bus.publish(marker);
    for (const iterator of [mine, shop]) {
      expect((await iterator.next()).value?.seq).toBe(event.seq);
      expect((await iterator.next()).value?.seq).toBe(marker.seq);
    }
    expect(fanOut.duplicates).toBe(1);
  });

  it('resumes from its memory, or says the events are missed when it no longer holds them', async () => {
    const bus = new WatchedBus();
    const fanOut = new EventFanOut(bus, 2);
    const events = [anEvent(), anEvent(), anEvent()];
    for (const event of events) await bus.publish(event);
    let missed = 0;
    const resumed = await fanOut.open({ topic: ALICES, resume: { after: events[1]!.seq, missed: () => missed++ } });
    expect((await resumed.next()).value?.seq).toBe(events[2]!.seq);
    expect(missed).toBe(0);
    // The oldest was evicted (2 held): what followed it cannot be proven complete.
    await fanOut.open({ topic: ALICES, resume: { after: events[0]!.seq, missed: () => missed++ } });
    expect(missed).toBe(1);
  });
});
