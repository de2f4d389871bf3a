import { describe, expect, it } from 'vitest';
import type { ChangeEvent } from '../../src/events/changeEvent.js';
import { eventsAfter } from '../../src/graphql/topicGaps.js';

const history = (...seqs: string[]) => seqs.map((seq) => ({ seq }) as ChangeEvent);
const seqsOf = (events: ChangeEvent[] | undefined) => events?.map((event) => event.seq);

describe('eventsAfter: what a history proves about a gap', () => {
  it('gives the entries after the last one received, each seq once, in the history’s order', () => {
    // A repeat of an entry from before it (a replayed publish) is not new.
    expect(seqsOf(eventsAfter(history('1', '2', '3', '2', '4', '3'), '2'))).toEqual(['4']);
    expect(seqsOf(eventsAfter(history('1', '2', '3', '4', '3'), '2'))).toEqual(['3', '4']);
    expect(seqsOf(eventsAfter(history('1', '2'), '2'))).toEqual([]);
  });

  it('proves nothing when the history no longer holds the last event received', () => {
    expect(eventsAfter(history('3', '4'), '2')).toBeUndefined();
    expect(eventsAfter(history(), '2')).toBeUndefined();
  });

  it('gives everything when the topic had no event as its listening started', () => {
    expect(seqsOf(eventsAfter(history('5', '6', '5'), null))).toEqual(['5', '6']);
  });

  it('without a known position, proves the gap empty only on an empty history', () => {
    expect(seqsOf(eventsAfter(history(), undefined))).toEqual([]);
    expect(eventsAfter(history('5'), undefined)).toBeUndefined();
  });
});
