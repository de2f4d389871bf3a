/**
 * The subscribing side of a process's pub/sub (redisChannels.ts): which connection serves a
 * channel, and what the channels' listeners are told as connections come and go.
 *
 * - One node: one subscriber connection carries every channel (SUBSCRIBE).
 * - A cluster: sharded pub/sub (SSUBSCRIBE): a channel is served by the primary that owns its
 *   slot, so an instance receives only the messages of the channels it listens to, not every
 *   message of the cluster. One connection per primary that holds a subscribed channel, placed
 *   by the publishing connection's slot map and moved when the map changes (a fail-over, slots
 *   migrated while the cluster scales).
 *
 * For each channel the listener hears, in order: `subscribing` (just before the SUBSCRIBE is
 * sent: nothing dated earlier can have been sent to this subscription), `subscribed` (Redis
 * confirmed it), and `lost` whenever the connection that served it closed (messages published
 * meanwhile are gone). Every channel is (re)subscribed here on every 'ready' of its connection,
 * its failure logged: ioredis's own resubscription is off (redisConnection.ts), as it covers
 * only channels whose SUBSCRIBE succeeded and leaves its failures unhandled.
 */
import calculateSlot from 'cluster-key-slot';
import type { Cluster, Redis } from 'ioredis';
import type { Logger } from 'pino';
import { openNode, openRedis } from './redisConnection.js';
import type { Backoff, RedisSettings } from './redisConnection.js';

export interface SubscriberEvents {
  message(channel: string, raw: Buffer): void;
  subscribing(channel: string): void;
  subscribed(channel: string): void;
  lost(channel: string): void;
}

export interface Subscriber {
  /** Subscribes `channel` (now, or once its connection is up). */
  add(channel: string): void;
  /** Unsubscribes `channel`. */
  remove(channel: string): void;
  /** Connects what the channels added so far need; resolves once they are subscribed (or failed). */
  connect(): Promise<unknown>;
  close(): Promise<Redis[]>;
}

export interface SubscriberOptions {
  settings: RedisSettings;
  log: Pick<Logger, 'debug' | 'warn'>;
  backoff?: Backoff | undefined;
  events: SubscriberEvents;
}

/** One node: one connection for every channel. */
export class NodeSubscriber implements Subscriber {
  private readonly connection: Redis;
  private readonly channels = new Set<string>();
  private started = false;

  constructor(private readonly options: SubscriberOptions) {
    this.connection = openRedis(options.settings, {
      role: 'subscriber',
      log: options.log,
      subscriber: true,
      backoff: options.backoff,
    }) as Redis;
    // The Buffer form: a message's size is checked before it is turned into a string.
    this.connection.on('messageBuffer', (channel: Buffer, raw: Buffer) =>
      options.events.message(channel.toString(), raw),
    );
    this.connection.on('ready', () => {
      for (const channel of this.channels) void this.subscribe(channel);
    });
    this.connection.on('close', () => {
      for (const channel of this.channels) options.events.lost(channel);
    });
  }

  add(channel: string): void {
    this.channels.add(channel);
    if (this.connection.status === 'ready') void this.subscribe(channel);
  }

  remove(channel: string): void {
    this.channels.delete(channel);
    if (this.connection.status === 'ready') void this.connection.unsubscribe(channel).catch(() => undefined);
  }

  async connect(): Promise<unknown> {
    if (this.started) return;
    this.started = true;
    await this.connection.connect();
    return Promise.all([...this.channels].map((channel) => this.subscribe(channel)));
  }

  close(): Promise<Redis[]> {
    this.channels.clear();
    return Promise.resolve([this.connection]);
  }

  private async subscribe(channel: string): Promise<void> {
    try {
      this.options.events.subscribing(channel);
      await this.connection.subscribe(channel);
      if (this.channels.has(channel)) this.options.events.subscribed(channel);
    } catch (error) {
      this.options.log.warn({ err: error, channel }, 'redis subscribe failed; retried on the next reconnect');
    }
  }
}

/** A cluster: a connection per primary that owns a subscribed channel's slot (sharded pub/sub). */
export class ShardSubscriber implements Subscriber {
  /** Channel -> its slot (worked out once: it never changes) and the node serving it now. */
  private readonly channels = new Map<string, { slot?: number; node?: string }>();
  /** `host:port` -> the subscriber connection to that primary. */
  private readonly nodes = new Map<string, Redis>();
  private closed = false;

  constructor(
    private readonly options: SubscriberOptions,
    /** The process's publishing connection: its slot map places the channels. */
    private readonly cluster: Cluster,
  ) {
    // A refreshed slot map (every few seconds, after a MOVED, a fail-over) may move a channel.
    cluster.on('refresh', () => this.placeAll());
    cluster.on('ready', () => this.placeAll());
  }

  add(channel: string): void {
    if (!this.channels.has(channel)) this.channels.set(channel, {});
    this.place(channel);
  }

  remove(channel: string): void {
    const entry = this.channels.get(channel);
    this.channels.delete(channel);
    const connection = entry?.node && this.nodes.get(entry.node);
    if (connection && connection.status === 'ready') void connection.sunsubscribe(channel).catch(() => undefined);
    if (entry?.node) this.closeIfIdle(entry.node);
  }

  async connect(): Promise<unknown> {
    // The slot map comes with the publishing connection; until it is up nothing can be placed.
    if (this.cluster.status === 'ready') this.placeAll();
    return Promise.all(
      [...this.nodes.values()]
        .filter((connection) => connection.status !== 'ready')
        .map(
          (connection) =>
            new Promise((resolve) => {
              connection.once('ready', resolve);
              connection.once('end', resolve);
            }),
        ),
    );
  }

  close(): Promise<Redis[]> {
    this.closed = true;
    this.channels.clear();
    const connections = [...this.nodes.values()];
    this.nodes.clear();
    return Promise.resolve(connections);
  }

  private placeAll(): void {
    for (const channel of this.channels.keys()) this.place(channel);
  }

  /** Finds the primary of `channel`'s slot and subscribes there, leaving the one it had if that changed. */
  private place(channel: string): void {
    const entry = this.channels.get(channel);
    if (!entry || this.closed || this.cluster.status !== 'ready') return;
    // Worked out here, as ioredis does for keys: a CLUSTER KEYSLOT round trip could time out
    // on a busy process, and nothing would place the channel again until the slot map changed.
    entry.slot ??= calculateSlot(channel);
    const owner = this.cluster.slots[entry.slot]?.[0];
    if (owner === undefined || owner === entry.node) return;
    const previous = entry.node;
    entry.node = owner;
    if (previous) {
      const old = this.nodes.get(previous);
      if (old?.status === 'ready') void old.sunsubscribe(channel).catch(() => undefined);
      this.options.events.lost(channel);
      this.closeIfIdle(previous);
    }
    const connection = this.connectionTo(owner);
    if (connection.status === 'ready') void this.subscribe(connection, channel);
    else if (connection.status === 'wait') void connection.connect().catch(() => undefined);
  }

  private connectionTo(node: string): Redis {
    const existing = this.nodes.get(node);
    if (existing) return existing;
    const connection = openNode(this.options.settings, node, {
      role: 'subscriber',
      log: this.options.log,
      subscriber: true,
      backoff: this.options.backoff,
    });
    connection.on('smessageBuffer', (channel: Buffer, raw: Buffer) =>
      this.options.events.message(channel.toString(), raw),
    );
    connection.on('ready', () => {
      for (const channel of this.channelsOn(node)) void this.subscribe(connection, channel);
    });
    connection.on('close', () => {
      for (const channel of this.channelsOn(node)) this.options.events.lost(channel);
      // The node may be gone for good (a fail-over gave its slots to another): ask again.
      if (!this.closed) this.cluster.refreshSlotsCache();
    });
    this.nodes.set(node, connection);
    return connection;
  }

  private channelsOn(node: string): string[] {
    return [...this.channels].filter(([, entry]) => entry.node === node).map(([channel]) => channel);
  }

  private closeIfIdle(node: string): void {
    if (this.channelsOn(node).length > 0) return;
    this.nodes.get(node)?.disconnect();
    this.nodes.delete(node);
  }

  private async subscribe(connection: Redis, channel: string): Promise<void> {
    try {
      this.options.events.subscribing(channel);
      await connection.ssubscribe(channel);
      const entry = this.channels.get(channel);
      if (entry && this.nodes.get(entry.node ?? '') === connection) this.options.events.subscribed(channel);
    } catch (error) {
      // MOVED: the slot has another owner since the map was read.
      if (/MOVED|ASK|CLUSTERDOWN/.test((error as Error).message)) this.cluster.refreshSlotsCache();
      this.options.log.warn({ err: error, channel }, 'redis subscribe failed; retried on the next reconnect');
    }
  }
}
