/**
 * Fan-out of change events to the GraphQL subscriptions of this instance. The events come from
 * the table's stream through an event bus (src/events/): in-process when this instance runs its
 * own stream consumer, Redis when standalone consumers or the Lambda feed many instances. A
 * subscription names one topic (src/table/entities/topics.ts); this module watches a topic on
 * the bus while at least one subscription here listens to it (counted here: the bus is told
 * once when the first listener comes and once when the last leaves), and hands each event
 * heard on a topic to that topic's subscriptions. At most `maxTopics` topics are watched at
 * once: a subscription to one more is refused (SERVICE_UNAVAILABLE: another instance can take
 * it), so what one instance subscribes to on Redis stays bounded.
 *
 * Each change reaches a subscriber once: an event whose `seq` (the stream record's sequence
 * number) was delivered here on that topic already, within the last `dedupeWindow`
 * deliveries, is dropped. A change is published again after a consumer fail-over, a checkpoint
 * replay, or by both the Lambda and a consumer; the repeat never reaches the subscribers.
 *
 * A subscription may resume after an event id (SSE `Last-Event-ID`, see `open`): from the bus's
 * shared history of its topic when there is one (Redis: any instance can resume any client),
 * else from this instance's memory of recent events. When the events after that id are no
 * longer held, it is told (`missed`), never left with a silent gap.
 *
 * An open subscription is never left with a silent gap either: when the bus loses a topic's
 * subscription, its listeners are caught up from the history once it is back, or ended with
 * EVENTS_MISSED (topicGaps.ts). Below every transport, so the same on each.
 */
import { InProcessEventBus } from '../events/eventBus.js';
import type { EventBus } from '../events/eventBus.js';
import type { ChangeEvent, ChangeEventOf, EventEntity } from '../events/changeEvent.js';
import { SeenWindow } from '../events/seenWindow.js';
import { createTurnPacer } from '../events/turnPacer.js';
import type { TurnPacer } from '../events/turnPacer.js';
import { subscriberQueue } from './subscriberQueue.js';
import type { SubscriberQueue } from './subscriberQueue.js';
import { ServiceUnavailableError } from '../errors.js';
import { eventsAfter, TopicGaps } from './topicGaps.js';
import type { Listener } from './topicGaps.js';
import { DEFAULT_EVENT_DEDUPE_WINDOW, DEFAULT_SSE_REPLAY_EVENTS } from '../config/index.js';

/**
 * Events a subscriber has not taken yet. A client that reads slower than events arrive loses
 * the oldest ones rather than growing the server's memory without bound.
 */
export const MAX_PENDING_EVENTS = 100;

/** Topics one instance watches at once, at most (each is a channel subscribed on Redis). */
export const MAX_TOPICS = 10_000;

/** How long a resuming subscription waits for its topic's subscription before it reads the history. */
const RESUME_SUBSCRIBE_WAIT_MS = 2000;

/** Stream sequence numbers are decimal strings of up to 40 digits: compared as numbers. */
export const SEQ_PATTERN = /^\d{1,40}$/;
export const compareSeq = (a: string, b: string): number => {
  const difference = BigInt(a) - BigInt(b);
  return difference > 0n ? 1 : difference < 0n ? -1 : 0;
};

/** What a subscription listens to. */
export interface Listening<E extends ChangeEvent = ChangeEvent> {
  /** The one topic it hears (TOPICS in src/table/entities/topics.ts). */
  topic: string;
  /** Of the topic's events, those it wants (default all): a type, say. */
  accept?: ((event: ChangeEvent) => event is E) | ((event: ChangeEvent) => boolean) | undefined;
  /** A resumed subscription (SSE Last-Event-ID): the held events after this sequence number first. */
  resumeAfter?: string | undefined;
}

/** Where a subscription resumes (SSE Last-Event-ID), and how it learns that it cannot. */
export interface Resume {
  /** The `seq` of the last event the client received. */
  after: string;
  /** The events after `after` are no longer all held: the client must refetch. */
  missed(): void;
}

/** A test that an event is about a node of `entity` (a subscription's `accept`), typed as such. */
export const eventsAbout =
  <N extends EventEntity>(entity: N) =>
  (event: ChangeEvent): event is ChangeEventOf<N> =>
    event.entity === entity;

export class EventFanOut {
  readonly bus: EventBus;
  private readonly unsubscribe: () => void;
  private readonly seen: SeenWindow;
  private duplicateCount = 0;
  /** The latest events, oldest first: what a resumed stream replays. */
  private readonly recent: ChangeEvent[] = [];
  /** The listeners of each topic heard here. */
  private readonly byTopic = new Map<string, Set<Listener>>();
  /** How to stop watching each topic heard here, on the bus. */
  private readonly stopWatching = new Map<string, () => void>();
  /** The topics whose subscription on the bus is in place now. */
  private readonly subscribedTopics = new Set<string>();
  /** Resumes waiting for their topic's subscription. */
  private readonly waiting = new Map<string, Set<() => void>>();
  /** Where each topic stands, and the catch-up of its listeners after a lost subscription. */
  private readonly gaps: TopicGaps;
  private listenerCount = 0;
  /** When each event being delivered here arrived (performance.now()), for the fan-out's timing. */
  private readonly arrivals = new WeakMap<ChangeEvent, number>();
  /**
   * Paces the work of each subscriber's event (its execution, answer and write) over turns of
   * the event loop (turnPacer.ts): a large fan-out lets the loop breathe between shares.
   */
  readonly pacer: TurnPacer;

  /**
   * `replayEvents`: how many recent events a resuming stream can catch up on (SSE_REPLAY_EVENTS);
   * `dedupeWindow`: how many recent `seq` are remembered to drop repeats (EVENT_DEDUPE_WINDOW, src/config/subscriptions.ts).
   */
  constructor(
    bus: EventBus = new InProcessEventBus(),
    private readonly replayEvents = DEFAULT_SSE_REPLAY_EVENTS,
    dedupeWindow = DEFAULT_EVENT_DEDUPE_WINDOW,
    private readonly maxTopics = MAX_TOPICS,
    pacer: TurnPacer = createTurnPacer(),
  ) {
    this.bus = bus;
    this.pacer = pacer;
    this.seen = new SeenWindow(dedupeWindow);
    this.gaps = new TopicGaps({
      history: bus.history?.bind(bus),
      listening: (topic) => this.byTopic.has(topic),
      subscribed: (topic) => this.subscribedTopics.has(topic),
      delivered: (topic, seq) => this.seen.firstTime(`${topic} ${seq}`),
    });
    this.unsubscribe = bus.subscribe((event, topics) => {
      this.arrivals.set(event, performance.now());
      const known = SEQ_PATTERN.test(event.seq);
      if (known && !bus.history && topics === event.topics) {
        // In process every event is heard once, on all its topics: the memory a resume reads.
        this.recent.push(event);
        if (this.recent.length > this.replayEvents) this.recent.shift();
      }
      let repeated = false;
      for (const topic of topics) {
        if (known && !this.seen.firstTime(`${topic} ${event.seq}`)) {
          repeated = true;
          continue;
        }
        const listeners = this.byTopic.get(topic);
        if (!listeners) continue;
        this.gaps.heard(topic, event, known);
        // A copy: a listener may end its subscription (and another's) while it runs.
        for (const listener of [...listeners]) if (!this.gaps.holds(topic, listener)) listener.deliver(event);
      }
      // One repeat heard, however many of its topics it was heard on.
      if (repeated) this.duplicateCount++;
    });
  }

  /** When `event` reached this instance (performance.now()); undefined for one it did not deliver. */
  arrivedAt(event: unknown): number | undefined {
    return typeof event === 'object' && event !== null ? this.arrivals.get(event as ChangeEvent) : undefined;
  }

  /** Repeats of an already delivered event dropped so far. */
  get duplicates(): number {
    return this.duplicateCount;
  }

  /**
   * Whether every event after `seq` is still held: true when `seq` is not older than the
   * oldest event kept (everything after it was kept since). Otherwise some may be lost (evicted,
   * or published before this instance listened), and a resuming client must refetch.
   */
  covers(seq: string): boolean {
    const oldest = this.recent[0];
    return oldest?.seq !== undefined && compareSeq(seq, oldest.seq) >= 0;
  }

  /** Sends `event` over the bus (to every instance on it, this one included). */
  publish(event: ChangeEvent): Promise<void> {
    return this.bus.publish(event);
  }

  /**
   * The events of `topic` that `accept` lets through, as an async iterator. Its `return()`
   * removes the listener at once, also while a `next()` is waiting for an event (that `next()`
   * then resolves as done): an async generator could only run its cleanup after the next event
   * arrived, so every abandoned subscription would stay registered until then.
   */
  subscribe<E extends ChangeEvent = ChangeEvent>(listening: Listening<E>): AsyncIterableIterator<E> {
    return this.queue(listening).iterator;
  }

  /**
   * `subscribe`, resolved once the topic's subscription is in place on a shared bus (Redis),
   * resuming after `resume.after` when given: the events of the topic after it
   * first, each once and in the order they were published, then the live ones. From the bus's
   * history when it keeps one: the topic is watched first, and read once its subscription is in
   * place, so an event is either in what was read or heard live (heard twice, it is delivered
   * once). Without the event `after` in what is held (trimmed, expired, lost with Redis, or the
   * history unreadable) the subscription goes on live and `resume.missed()` is called before
   * this resolves.
   */
  async open<E extends ChangeEvent = ChangeEvent>(
    listening: Omit<Listening<E>, 'resumeAfter'> & { resume?: Resume | undefined },
  ): Promise<AsyncIterableIterator<E>> {
    const { resume, ...rest } = listening;
    if (!resume) {
      if (!this.bus.history) return this.subscribe(rest);
      // On Redis: opened once the topic's subscription is in place (at once when it already
      // is), so whoever sees the subscription open (an SSE stream's headers) hears every event
      // published after; Redis down, it opens after the bounded wait and hears events once back.
      const queue = this.queue(rest);
      await this.subscribedPromise(rest.topic).catch(() => undefined);
      return queue.iterator;
    }
    if (!this.bus.history) {
      if (this.covers(resume.after)) return this.subscribe({ ...rest, resumeAfter: resume.after });
      resume.missed();
      return this.subscribe(rest);
    }
    // Listening first (a refusal throws here, before anything waits), then waiting for the
    // subscription: both in this tick, so a subscription made meanwhile is not missed.
    const queue = this.queue(rest);
    const subscribed = this.subscribedPromise(rest.topic);
    try {
      await subscribed;
      const missed = eventsAfter(await this.bus.history(rest.topic), resume.after);
      if (!missed) {
        resume.missed();
        return queue.iterator;
      }
      queue.prepend(missed.filter((event) => rest.accept?.(event) ?? true));
    } catch {
      // Redis down, or the subscription not in place in time: nothing proves the gap empty.
      resume.missed();
    }
    return queue.iterator;
  }

  /** Resolves once `topic`'s subscription is in place (at once in process); rejects after a bounded wait. */
  private subscribedPromise(topic: string): Promise<void> {
    return new Promise((resolve, reject) => {
      const waiters = this.waiting.get(topic) ?? new Set<() => void>();
      this.waiting.set(topic, waiters);
      const timer = setTimeout(() => {
        waiters.delete(done);
        reject(new Error(`topic ${topic} not subscribed in ${RESUME_SUBSCRIBE_WAIT_MS} ms`));
      }, RESUME_SUBSCRIBE_WAIT_MS);
      timer.unref();
      const done = () => {
        clearTimeout(timer);
        waiters.delete(done);
        resolve();
      };
      waiters.add(done);
      if (this.subscribedTopics.has(topic)) done();
    });
  }

  private queue<E extends ChangeEvent>({ topic, accept, resumeAfter }: Listening<E>): SubscriberQueue<E> {
    const wanted = (event: ChangeEvent): boolean => event.topics.includes(topic) && (accept?.(event) ?? true);
    // The held events after `resumeAfter` first, then live ones: taken in the same tick as the
    // listener is added, so none is missed or delivered twice in between.
    const held =
      resumeAfter === undefined
        ? []
        : this.recent
            .filter((event) => compareSeq(event.seq, resumeAfter) > 0 && wanted(event))
            .slice(-MAX_PENDING_EVENTS);
    const queue: SubscriberQueue<E> = subscriberQueue<E>({
      held,
      accept,
      maxPending: MAX_PENDING_EVENTS,
      stop: () => this.removeListener(topic, listener),
    });
    const listener: Listener = { deliver: queue.listener, fail: queue.fail };
    this.addListener(topic, listener);
    return queue;
  }

  /** This instance's subscriptions listening now. */
  get subscriberCount(): number {
    return this.listenerCount;
  }

  /** The topics listened to here whose subscription on the bus is in place now. */
  get subscribedTopicCount(): number {
    return this.subscribedTopics.size;
  }

  /** The topics at least one subscription here listens to (those watched on the bus). */
  get topics(): string[] {
    return [...this.byTopic.keys()];
  }

  /** Stops listening to the bus (the bus itself belongs to whoever made it). */
  detach(): void {
    this.unsubscribe();
  }

  private addListener(topic: string, listener: Listener): void {
    let listeners = this.byTopic.get(topic);
    if (!listeners) {
      if (this.byTopic.size >= this.maxTopics) {
        throw new ServiceUnavailableError(
          'This server listens to as many topics as it may: subscribe again (another server can take it)',
        );
      }
      this.byTopic.set(topic, (listeners = new Set()));
      this.stopWatching.set(
        topic,
        this.bus.watch(topic, {
          subscribed: () => this.topicSubscribed(topic),
          lost: () => this.topicLost(topic),
        }),
      );
    }
    listeners.add(listener);
    this.listenerCount++;
  }

  private removeListener(topic: string, listener: Listener): void {
    const listeners = this.byTopic.get(topic);
    if (!listeners?.delete(listener)) return;
    this.listenerCount--;
    this.gaps.leave(topic, listener);
    if (listeners.size > 0) return;
    this.byTopic.delete(topic);
    this.subscribedTopics.delete(topic);
    this.gaps.forget(topic);
    if ((this.waiting.get(topic)?.size ?? 0) === 0) this.waiting.delete(topic);
    this.stopWatching.get(topic)?.();
    this.stopWatching.delete(topic);
  }

  private topicSubscribed(topic: string): void {
    this.subscribedTopics.add(topic);
    for (const wake of [...(this.waiting.get(topic) ?? [])]) wake();
    this.gaps.subscribed(topic);
  }

  private topicLost(topic: string): void {
    const wasSubscribed = this.subscribedTopics.delete(topic);
    const listeners = this.byTopic.get(topic);
    if (wasSubscribed && listeners) this.gaps.lost(topic, listeners);
  }
}
