import { describe, expect, it } from 'vitest';
import { MAX_TAGS_PER_MESSAGE, parseInvalidation } from '../../src/events/invalidationBus.js';
import { MAX_TRACEPARENTS } from '../../src/table/limits.js';

const traceparent = (n: number) => `00-${n.toString(16).padStart(32, '0')}-${'1'.repeat(16)}-01`;

describe('invalidation messages on Redis', () => {
  it('accepts tags and heartbeats of the current version', () => {
    expect(parseInvalidation('{"v":1,"kind":"tags","tags":["product:p1","categories"],"changedAt":5}').message).toEqual(
      {
        v: 1,
        kind: 'tags',
        tags: ['product:p1', 'categories'],
        changedAt: 5,
      },
    );
    expect(parseInvalidation('{"v":1,"kind":"heartbeat","from":"host:1"}').message?.kind).toBe('heartbeat');
  });

  it.each([
    ['not JSON', '{'],
    ['another version', '{"v":2,"kind":"tags","tags":[]}'],
    ['an unknown kind', '{"v":1,"kind":"store","tags":[]}'],
    ['a tag of another shape', '{"v":1,"kind":"tags","tags":["product:p1#PROFILE"]}'],
    ['a tag that is not a string', '{"v":1,"kind":"tags","tags":[1]}'],
    ['too many tags', JSON.stringify({ v: 1, kind: 'tags', tags: Array(MAX_TAGS_PER_MESSAGE + 1).fill('categories') })],
    ['a huge message', JSON.stringify({ v: 1, kind: 'heartbeat', from: 'x'.repeat(300_000) })],
  ])('drops %s', (_, raw) => {
    expect(parseInvalidation(raw).message).toBeUndefined();
  });

  it('keeps the writes’ trace contexts, bounded, and leaves out malformed ones without dropping the tags', () => {
    const traceparents = [...Array.from({ length: MAX_TRACEPARENTS + 4 }, (_, i) => traceparent(i + 1)), 'nope', 7];
    const { message } = parseInvalidation(JSON.stringify({ v: 1, kind: 'tags', tags: ['categories'], traceparents }));
    expect(message).toMatchObject({ kind: 'tags', tags: ['categories'] });
    expect(message?.kind === 'tags' && message.traceparents).toEqual(traceparents.slice(0, MAX_TRACEPARENTS));
    const onlyBad = parseInvalidation('{"v":1,"kind":"tags","tags":["categories"],"traceparents":["x"]}').message;
    expect(onlyBad).toEqual({ v: 1, kind: 'tags', tags: ['categories'], changedAt: undefined });
  });
});
