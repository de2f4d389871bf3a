/**
 * What travels on the invalidation channels (invalidationBus.ts), as the body of a signed
 * envelope (signedEnvelope.ts): the dependency tags a change touched, and the consumers'
 * heartbeats. Both sides keep one rule: **no invalidation is dropped silently**.
 *
 * - Each tag is judged on its own. A tag of the tag pattern (src/table/dependencies.ts) is
 *   evicted as it is; one outside it (an item written outside the API's id rules, say
 *   `product:sku.import-1`) widens to its kind (`product`: every entry filed under a `product:`
 *   tag), and one whose kind cannot be read either, to everything. The batch's other tags are
 *   applied either way. The publisher widens before it sends, the receiver again on receipt.
 * - A batch too large for one message is split by the publisher into messages under the
 *   bound: the receiver refuses only what exceeds the byte bound, which no publisher sends.
 * - A body that cannot be decoded is not ignored: the receiver treats it as a gap in its feed.
 */
import { TAG_PATTERN } from '../table/dependencies.js';
import { ID_PATTERN } from '../table/keys.js';
import { MAX_TRACEPARENTS } from '../table/limits.js';
import { TRACEPARENT } from './eventSchema.js';

/** The byte bound of one message, envelope included. */
export const MAX_INVALIDATION_MESSAGE_BYTES = 256_000;
/** Room kept for the envelope's header. */
const HEADER_BYTES = 400;
/** Tenures a heartbeat names at most (one current tenure is enough to vouch for it). */
export const MAX_HEARTBEAT_TENURES = 16;

const KIND_PATTERN = /^[a-z-]{1,16}$/;
const SHARD_ID = /^[A-Za-z0-9_.-]{1,128}$/;

/** An invalidation: exact tags, kinds whose every tag is invalidated, or everything. */
export interface Invalidation {
  tags: string[];
  /** Every entry filed under a tag of one of these kinds. */
  kinds: string[];
  /** Every entry. */
  everything: boolean;
}

/**
 * A stream reader's proof that changes reach the instances now. A consumer names some of the
 * lease tenures it reads under (checked against the lease table); any reader that read a feed
 * probe (an item the instances write when their feed falls silent, src/streams/feedProbe.ts)
 * names the newest one's write time: the instances' invalidations are then current up to it.
 */
export interface Heartbeat {
  kind: 'heartbeat';
  /** The publisher (a consumer's lease owner name), from the envelope. */
  from: string;
  /** The consumer name whose leases it holds (the stream Lambda: its function's reader name). */
  group: string;
  /** Some of the shard tenures it holds: checked against the lease table. */
  tenures: { shardId: string; epoch: number }[];
  /** When the newest feed probe it read was written (epoch ms, the writer's clock). */
  probe?: number | undefined;
}

export type InvalidationMessage =
  | (Invalidation & {
      kind: 'tags';
      /** epoch ms of the oldest change */
      changedAt?: number | undefined;
      /** The W3C traceparents of the writes that made the changes, when they were traced. */
      traceparents?: string[] | undefined;
      /**
       * The publisher bumped `tags` in the response cache's shared tier before it sent this (a
       * receiver need not bump them); false: it did not, or could not (a receiver bumps them).
       */
      bumped: boolean;
      /**
       * A publisher's word that a message of it before this one was lost (with `everything`):
       * counted apart from an invalidation widened for a tag it could not take as it was.
       */
      lost?: true | undefined;
    })
  | Heartbeat;

/** A tag's kind: before its first `:` (the whole tag without one); a refused tag widens to it. */
export const kindOf = (tag: string): string => {
  const colon = tag.indexOf(':');
  return colon < 0 ? tag : tag.slice(0, colon);
};

/** Sorts `raw` tags into exact ones, kinds they widen to, or everything (see the module comment). */
export function sortTags(raw: readonly unknown[]): Invalidation & { widened: number } {
  const tags = new Set<string>();
  const kinds = new Set<string>();
  let everything = false;
  let widened = 0;
  for (const tag of raw) {
    if (typeof tag === 'string' && TAG_PATTERN.test(tag)) {
      tags.add(tag);
      continue;
    }
    widened++;
    const kind = typeof tag === 'string' ? kindOf(tag) : '';
    if (KIND_PATTERN.test(kind)) kinds.add(kind);
    else everything = true;
  }
  return { tags: [...tags], kinds: [...kinds], everything, widened };
}

const validTraceparents = (value: unknown): string[] =>
  Array.isArray(value)
    ? (value as unknown[])
        .filter((item): item is string => typeof item === 'string' && TRACEPARENT.test(item))
        .slice(0, MAX_TRACEPARENTS)
    : [];

/**
 * The bodies of the messages for one invalidation, each under the byte bound: the tags split
 * where needed, the kinds and the flag in the first.
 */
export function tagsBodies(
  invalidation: Invalidation,
  extra: { changedAt?: number | undefined; traceparents?: readonly string[] | undefined; bumped?: boolean } = {},
  maxBytes = MAX_INVALIDATION_MESSAGE_BYTES,
): string[] {
  const traceparents = validTraceparents(extra.traceparents);
  const head = {
    kind: 'tags',
    ...(extra.changedAt === undefined ? {} : { changedAt: extra.changedAt }),
    ...(traceparents.length > 0 ? { traceparents } : {}),
    // Only ever true: a message without it (any older publisher's too) asks the receiver to bump.
    ...(extra.bumped === true ? { bumped: true } : {}),
  };
  const bodies: string[] = [];
  let chunk: string[] = [];
  const budget = maxBytes - HEADER_BYTES;
  const bodyOf = (tags: string[], first: boolean) =>
    JSON.stringify({
      ...head,
      tags,
      ...(first && invalidation.kinds.length > 0 ? { kinds: invalidation.kinds } : {}),
      ...(first && invalidation.everything ? { everything: true } : {}),
    });
  let size = Buffer.byteLength(bodyOf([], true));
  for (const tag of invalidation.tags) {
    const cost = Buffer.byteLength(tag) + 3;
    if (chunk.length > 0 && size + cost > budget) {
      bodies.push(bodyOf(chunk, bodies.length === 0));
      chunk = [];
      size = Buffer.byteLength(bodyOf([], false));
    }
    chunk.push(tag);
    size += cost;
  }
  if (chunk.length > 0 || bodies.length === 0) bodies.push(bodyOf(chunk, bodies.length === 0));
  return bodies;
}

export const heartbeatBody = ({ group, tenures, probe }: Omit<Heartbeat, 'kind' | 'from'>): string =>
  JSON.stringify({
    kind: 'heartbeat',
    group,
    tenures: tenures.slice(0, MAX_HEARTBEAT_TENURES).map(({ shardId, epoch }) => [shardId, epoch]),
    ...(probe === undefined ? {} : { probe }),
  });

/**
 * The message in an envelope's `body` (`from`: the envelope's publisher), or why it cannot be
 * decoded (the receiver then counts a gap in its feed).
 */
export function parseInvalidation(body: string, from: string): { message?: InvalidationMessage; problem?: string } {
  let value: unknown;
  try {
    value = JSON.parse(body);
  } catch {
    return { problem: 'not JSON' };
  }
  if (typeof value !== 'object' || value === null || Array.isArray(value)) return { problem: 'not an object' };
  const m = value as Record<string, unknown>;
  if (m.kind === 'heartbeat') {
    if (typeof m.group !== 'string' || !ID_PATTERN.test(m.group)) return { problem: 'a heartbeat without its group' };
    if (!Array.isArray(m.tenures) || m.tenures.length > MAX_HEARTBEAT_TENURES) return { problem: 'bad tenures' };
    const tenures: { shardId: string; epoch: number }[] = [];
    for (const tenure of m.tenures as unknown[]) {
      const [shardId, epoch] = Array.isArray(tenure) ? (tenure as unknown[]) : [];
      if (typeof shardId !== 'string' || !SHARD_ID.test(shardId) || !Number.isSafeInteger(epoch))
        return { problem: 'bad tenures' };
      tenures.push({ shardId, epoch: epoch as number });
    }
    if (m.probe !== undefined && !Number.isSafeInteger(m.probe)) return { problem: 'bad probe' };
    const probe = m.probe as number | undefined;
    return { message: { kind: 'heartbeat', from, group: m.group, tenures, ...(probe === undefined ? {} : { probe }) } };
  }
  if (m.kind !== 'tags' || !Array.isArray(m.tags)) return { problem: 'neither tags nor a heartbeat' };
  const sorted = sortTags(m.tags as unknown[]);
  if (m.kinds !== undefined) {
    const kinds = new Set(sorted.kinds);
    for (const kind of Array.isArray(m.kinds) ? (m.kinds as unknown[]) : [undefined]) {
      if (typeof kind === 'string' && KIND_PATTERN.test(kind)) kinds.add(kind);
      else sorted.everything = true;
    }
    sorted.kinds = [...kinds];
  }
  if (m.everything === true) sorted.everything = true;
  const changedAt = typeof m.changedAt === 'number' && Number.isFinite(m.changedAt) ? m.changedAt : undefined;
  // Trace contexts only link spans: malformed ones are left out, the eviction still happens.
  const traceparents = validTraceparents(m.traceparents);
  return {
    message: {
      kind: 'tags',
      tags: sorted.tags,
      kinds: sorted.kinds,
      everything: sorted.everything,
      changedAt,
      ...(traceparents.length > 0 ? { traceparents } : {}),
      bumped: m.bumped === true,
      ...(m.lost === true ? { lost: true as const } : {}),
    },
  };
}
