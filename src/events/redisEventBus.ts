/**
 * The event bus on Redis pub/sub (ElastiCache in production), for N API instances fed by
 * standalone stream consumers (`npm run consumer`) or the stream Lambda, on the process's
 * RedisChannels (redisChannels.ts). Events are routed by topic:
 *
 * - Each change-event topic (src/table/entities/topics.ts) has its channel,
 *   `tablegraph:{<table>:events:<topic>}`, and a history beside it in the same slot
 *   (`...:history`, a Redis Stream). A publisher appends each event to the history of each of
 *   its topics, trimmed to about `historyLength` entries and expiring `HISTORY_TTL_SECONDS`
 *   after its last event, and publishes it on the topic's channel (PUBLISH on one node,
 *   SPUBLISH in a cluster: the topic's primary only).
 * - An instance subscribes to a topic only while it `watch`es it (a client listens), so it
 *   receives nothing of the topics nobody there listens to. A message is delivered only on a
 *   topic the event itself names (its topics derived again from its node): a signed event
 *   copied onto another topic's channel reaches nobody.
 * - ioredis reconnects with capped exponential backoff forever and the channels are subscribed
 *   again after a reconnect, so existing GraphQL subscriptions receive events again once Redis
 *   is back.
 * - Pub/sub is fire-and-forget: an event published while Redis (or this instance's subscriber
 *   connection) is down is not delivered live to those who missed it; a client that resumes
 *   (SSE `Last-Event-ID`) catches up from the topic's history, on any instance. The publisher
 *   does not queue while disconnected (a queue would replay stale events in a burst,
 *   unbounded): it counts the event as lost and goes on.
 * - Every message received, and every history entry read, is checked before anything reads it:
 *   its envelope (signedChannel.ts: size, the signature when a signing secret is set, and for
 *   live messages freshness), then the event's schema (eventSchema.ts), which takes only events
 *   that name this bus's table (the signature covers the name: another table's publishers may
 *   share the secret). A bad one is dropped
 *   and counted (`refusals`, by reason: the envelope's, or `invalid`), with one warning per
 *   `warnIntervalMs`, not one per message or listener. A publisher refuses an event that would
 *   not pass (counted as lost).
 */
import type { Logger } from 'pino';
import { startReceiveSpan } from '../telemetry/busSpans.js';
import { describeEvent } from './changeEvent.js';
import type { ChangeEvent } from './changeEvent.js';
import type { ChangeEventListener, EventBus, EventBusHealth, TopicHandlers } from './eventBus.js';
import { decodeEvent, encodeEvent, EVENT_LIMITS } from './eventSchema.js';
import type { RedisChannels } from './redisChannels.js';
import { eventsTopic, topicChannel, topicKey } from './redisNames.js';
import { SignedChannel } from './signedChannel.js';
import type { SignedMessage } from './signedChannel.js';
import { RefusalCounter, Sealer } from './signedEnvelope.js';

/** Rejected (unsigned, forged, replayed, malformed) messages are counted always, and logged at most this often. */
const REJECTED_WARNING_INTERVAL_MS = 60_000;
const PURPOSE = 'change-event';
/** A topic's history outlives its last event by this long (the topics of one order go quiet for good). */
export const HISTORY_TTL_SECONDS = 24 * 60 * 60;
/** A topic's history holds about this many events unless told otherwise (SSE_REPLAY_EVENTS's default). */
export const DEFAULT_HISTORY_LENGTH = 1000;

export interface RedisEventBusOptions {
  /** The process's pub/sub (the caller starts and closes it). */
  channels: RedisChannels;
  tableName: string;
  log: Pick<Logger, 'debug' | 'info' | 'warn' | 'error'>;
  /** Listen to topics too (default true); a stream reader that only publishes says false. */
  subscribe?: boolean | undefined;
  /** About how many events each topic's history keeps (default DEFAULT_HISTORY_LENGTH). */
  historyLength?: number | undefined;
  /** At most one warning about rejected messages per this many ms (default REJECTED_WARNING_INTERVAL_MS). */
  warnIntervalMs?: number | undefined;
  /** The clock messages are dated and judged by (tests). */
  now?: (() => number) | undefined;
}

/** The channel of change-event topic `topic`. */
export const eventTopicChannel = (tableName: string, topic: string): string =>
  topicChannel(tableName, eventsTopic(topic));
/** The history of change-event topic `topic`, in its channel's slot. */
export const eventTopicHistory = (tableName: string, topic: string): string =>
  topicKey(tableName, eventsTopic(topic), 'history');

export class RedisEventBus implements EventBus {
  private readonly shared: { sealer: Sealer; refusals: RefusalCounter };
  private readonly listeners = new Set<ChangeEventListener>();
  /** The topics watched here: each one's channel and how to stop listening to it. */
  private readonly watched = new Map<
    string,
    { channel: SignedChannel; stop: () => void; watchers: Set<TopicHandlers> }
  >();
  private readonly now: () => number;
  private readonly listening: boolean;
  private readonly historyLength: number;
  private lostCount = 0;
  private closed = false;
  onDelivered: ((latencyMs: number) => void) | undefined;

  constructor(private readonly options: RedisEventBusOptions) {
    this.now = options.now ?? Date.now;
    this.listening = options.subscribe ?? true;
    this.historyLength = options.historyLength ?? DEFAULT_HISTORY_LENGTH;
    this.shared = {
      sealer: new Sealer(PURPOSE, options.channels.settings.signingSecret),
      refusals: new RefusalCounter(
        'change events on redis',
        options.log,
        options.warnIntervalMs ?? REJECTED_WARNING_INTERVAL_MS,
      ),
    };
  }

  /** Messages received and dropped, by reason (the envelope's, or `invalid` for the schema). */
  get refusals(): RefusalCounter {
    return this.shared.refusals;
  }

  /** The topics this instance listens to now. */
  get topics(): string[] {
    return [...this.watched.keys()];
  }

  /** Appends `event` to the history of each of its topics and publishes it there, all topics at once. */
  async publish(event: ChangeEvent): Promise<void> {
    if (this.closed) {
      this.lose(event, 'redis is not connected');
      return;
    }
    let body: string;
    try {
      body = encodeEvent(event, this.options.tableName);
    } catch (error) {
      this.lose(event, 'the event does not fit the schema or its bounds', error);
      return;
    }
    // Its topics at once (each topic's events stay in order: the next event waits for this
    // one on every topic); an event that missed any topic counts once.
    const outcomes = await Promise.all(
      event.topics.map(async (topic) => ({
        topic,
        outcome: await this.channelOf(topic).append(
          body,
          eventTopicHistory(this.options.tableName, topic),
          this.historyLength,
          HISTORY_TTL_SECONDS,
        ),
      })),
    );
    const missed = outcomes.filter(({ outcome }) => outcome !== 'sent');
    if (missed.length === 0) return;
    const reason = missed.some(({ outcome }) => outcome === 'not-connected')
      ? 'redis is not connected'
      : 'redis publish failed';
    this.lose(
      event,
      reason,
      undefined,
      missed.map(({ topic }) => topic),
    );
  }

  subscribe(listener: ChangeEventListener): () => void {
    const own: ChangeEventListener = (event, topics) => listener(event, topics);
    this.listeners.add(own);
    return () => this.listeners.delete(own);
  }

  watch(topic: string, handlers: TopicHandlers = {}): () => void {
    if (!this.listening || this.closed) return () => undefined;
    let watch = this.watched.get(topic);
    if (!watch) {
      const channel = this.channelOf(topic);
      const watchers = new Set<TopicHandlers>();
      const stop = channel.listen({
        message: (message) => this.deliver(topic, message),
        subscribed: () => {
          for (const watcher of [...watchers]) watcher.subscribed?.();
        },
        lost: () => {
          for (const watcher of [...watchers]) watcher.lost?.();
        },
      });
      watch = { channel, stop, watchers };
      this.watched.set(topic, watch);
    } else if (watch.channel.subscribed) {
      handlers.subscribed?.();
    }
    const own = { ...handlers };
    watch.watchers.add(own);
    const { watchers, stop } = watch;
    return () => {
      if (!watchers.delete(own) || watchers.size > 0) return;
      this.watched.delete(topic);
      stop();
    };
  }

  async history(topic: string, last?: number): Promise<ChangeEvent[]> {
    const channel = this.channelOf(topic);
    const bodies = await channel.history(eventTopicHistory(this.options.tableName, topic), last);
    return bodies.flatMap((body) => {
      const event = this.decodeOn(topic, body, channel.name);
      return event ? [event] : [];
    });
  }

  health(): EventBusHealth {
    // The channels' one rule: the publisher connected and every channel listened to subscribed
    // (or being joined, briefly).
    return { kind: 'redis', status: this.options.channels.health() };
  }

  get lost(): number {
    return this.lostCount;
  }

  get rejected(): number {
    return this.refusals.total;
  }

  /** Stops listening; publish() afterwards counts as lost. The connections are the caller's (RedisChannels). */
  close(): Promise<void> {
    this.closed = true;
    this.listeners.clear();
    for (const { stop } of this.watched.values()) stop();
    this.watched.clear();
    return Promise.resolve();
  }

  private channelOf(topic: string): SignedChannel {
    return (
      this.watched.get(topic)?.channel ??
      new SignedChannel({
        channels: this.options.channels,
        name: eventTopicChannel(this.options.tableName, topic),
        purpose: PURPOSE,
        maxBytes: EVENT_LIMITS.bytes,
        what: 'change events on redis',
        log: this.options.log,
        now: this.now,
        shared: this.shared,
      })
    );
  }

  /** The event in `body`, if it passes the schema and names `topic` among its own; else counted and null. */
  private decodeOn(topic: string, body: string, channel: string): ChangeEvent | null {
    const decoded = decodeEvent(body, this.options.tableName);
    if (!decoded.ok) {
      this.refusals.count('invalid', { channel, problem: decoded.reason });
      return null;
    }
    if (!decoded.event.topics.includes(topic)) {
      this.refusals.count('invalid', { channel, problem: 'the event is not of this topic' });
      return null;
    }
    return decoded.event;
  }

  private deliver(topic: string, message: SignedMessage): void {
    const name = eventTopicChannel(this.options.tableName, topic);
    const decoded = this.decodeOn(topic, message.body, name);
    if (!decoded) return;
    this.onDelivered?.(this.now() - message.at);
    const received = startReceiveSpan(name, decoded.traceparent);
    const event = received ? { ...decoded, traceparent: received.traceparent } : decoded;
    for (const listener of this.listeners) {
      try {
        listener(event, [topic]);
      } catch (error) {
        this.options.log.warn({ err: error }, 'change event listener failed');
      }
    }
    received?.span.setAttribute('tablegraph.event.listeners', this.listeners.size).end();
  }

  private lose(event: ChangeEvent, reason: string, error?: unknown, on?: string[]): void {
    this.lostCount++;
    this.options.log.warn(
      { err: error, ...describeEvent(event), on, lost: this.lostCount },
      `change event lost: ${reason}`,
    );
  }
}
