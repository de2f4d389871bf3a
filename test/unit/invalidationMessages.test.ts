import { describe, expect, it } from 'vitest';
import {
  heartbeatBody,
  MAX_INVALIDATION_MESSAGE_BYTES,
  parseInvalidation,
  sortTags,
  tagsBodies,
} from '../../src/events/invalidationMessages.js';
import { MAX_TRACEPARENTS } from '../../src/table/limits.js';

const traceparent = (n: number) => `00-${n.toString(16).padStart(32, '0')}-${'1'.repeat(16)}-01`;
const tagsOf = (body: string) => parseInvalidation(body, 'consumer-1').message;

describe('invalidation tags', () => {
  it('are judged one by one: a tag outside the pattern widens to its kind, the others go as they are', () => {
    expect(sortTags(['product:p1', 'product:sku.import-1', 'category:books', 'user:a#b', 'categories'])).toEqual({
      tags: ['product:p1', 'category:books', 'categories'],
      kinds: ['product', 'user'],
      everything: false,
      widened: 2,
    });
  });

  it('widen to everything when even their kind cannot be read', () => {
    expect(sortTags(['PRODUCT#x', 7, 'product:p1'])).toMatchObject({ tags: ['product:p1'], everything: true });
  });
});

describe('invalidation messages', () => {
  it('carry tags, kinds and a flush across the wire unchanged', () => {
    const [body] = tagsBodies({ tags: ['product:p1'], kinds: ['product'], everything: true }, { changedAt: 5 });
    expect(tagsOf(body!)).toEqual({
      kind: 'tags',
      tags: ['product:p1'],
      kinds: ['product'],
      everything: true,
      changedAt: 5,
      bumped: false,
    });
  });

  it('say whether their publisher bumped the tags in the shared tier, and anything but true is no', () => {
    const [bumped] = tagsBodies({ tags: ['product:p1'], kinds: [], everything: false }, { bumped: true });
    const [unbumped] = tagsBodies({ tags: ['product:p1'], kinds: [], everything: false }, { bumped: false });
    expect(tagsOf(bumped!)).toMatchObject({ tags: ['product:p1'], bumped: true });
    expect(tagsOf(unbumped!)).toMatchObject({ tags: ['product:p1'], bumped: false });
    for (const claim of ['true', 1, 'yes', null])
      expect(tagsOf(JSON.stringify({ kind: 'tags', tags: ['product:p1'], bumped: claim }))).toMatchObject({
        bumped: false,
      });
  });

  it('carry the flag in every message a large invalidation is split into', () => {
    const tags = Array.from({ length: 200 }, (_, i) => `product:p${i}`);
    const bodies = tagsBodies({ tags, kinds: [], everything: false }, { bumped: true }, 2000);
    expect(bodies.length).toBeGreaterThan(1);
    for (const body of bodies) expect(tagsOf(body)).toMatchObject({ bumped: true });
  });

  it('are judged again on receipt, tag by tag, never dropped whole for one bad tag', () => {
    const body = JSON.stringify({ kind: 'tags', tags: ['product:p1', 'product:sku.import-1', 3], kinds: ['x y'] });
    expect(tagsOf(body)).toMatchObject({ tags: ['product:p1'], kinds: ['product'], everything: true });
  });

  it('are split by the publisher under the byte bound, every tag in one of them', () => {
    const tags = Array.from({ length: 12_000 }, (_, i) => `product:p-${i}-${'x'.repeat(40)}`);
    const bodies = tagsBodies({ tags, kinds: ['user'], everything: false }, { changedAt: 9 });
    expect(bodies.length).toBeGreaterThan(1);
    for (const body of bodies) expect(Buffer.byteLength(body)).toBeLessThan(MAX_INVALIDATION_MESSAGE_BYTES - 400);
    const received = bodies.map(tagsOf);
    expect(received.flatMap((m) => (m?.kind === 'tags' ? m.tags : []))).toEqual(tags);
    expect(received.map((m) => m?.kind === 'tags' && m.kinds)).toEqual([['user'], ...bodies.slice(1).map(() => [])]);
  });

  it('carry a heartbeat’s consumer name and tenures, its publisher taken from the envelope', () => {
    const body = heartbeatBody({ group: 'processor', tenures: [{ shardId: 'shardId-0001', epoch: 4 }] });
    expect(parseInvalidation(body, 'host:1:abc').message).toEqual({
      kind: 'heartbeat',
      from: 'host:1:abc',
      group: 'processor',
      tenures: [{ shardId: 'shardId-0001', epoch: 4 }],
    });
  });

  it('carry the feed probe a heartbeat answers, and refuse one that is not a time', () => {
    const body = heartbeatBody({ group: 'stream-lambda', tenures: [], probe: 1_780_000_000_123 });
    expect(parseInvalidation(body, 'lambda:1:abc').message).toEqual({
      kind: 'heartbeat',
      from: 'lambda:1:abc',
      group: 'stream-lambda',
      tenures: [],
      probe: 1_780_000_000_123,
    });
    const bad = JSON.stringify({ kind: 'heartbeat', group: 'stream-lambda', tenures: [], probe: '1780000000123' });
    expect(parseInvalidation(bad, 'lambda:1:abc')).toEqual({ problem: 'bad probe' });
  });

  it.each([
    ['not JSON', '{'],
    ['an array', '[]'],
    ['an unknown kind', '{"kind":"store","tags":[]}'],
    ['tags that are not a list', '{"kind":"tags","tags":"product:p1"}'],
    ['a heartbeat without its group', '{"kind":"heartbeat","tenures":[]}'],
    ['a heartbeat with a malformed tenure', '{"kind":"heartbeat","group":"processor","tenures":[["a#b",1]]}'],
  ])('cannot be decoded: %s (the receiver counts a gap)', (_, body) => {
    expect(parseInvalidation(body, 'c').problem).toBeDefined();
  });

  it('keep the writes’ trace contexts, bounded, and leave out malformed ones without dropping the tags', () => {
    const traceparents = [...Array.from({ length: MAX_TRACEPARENTS + 4 }, (_, i) => traceparent(i + 1)), 'nope', 7];
    const message = tagsOf(JSON.stringify({ kind: 'tags', tags: ['categories'], traceparents }));
    expect(message).toMatchObject({ kind: 'tags', tags: ['categories'] });
    expect(message?.kind === 'tags' && message.traceparents).toEqual(traceparents.slice(0, MAX_TRACEPARENTS));
    const onlyBad = tagsOf('{"kind":"tags","tags":["categories"],"traceparents":["x"]}');
    expect(onlyBad).toEqual({
      kind: 'tags',
      tags: ['categories'],
      kinds: [],
      everything: false,
      changedAt: undefined,
      bumped: false,
    });
  });
});
