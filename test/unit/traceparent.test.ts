/** W3C traceparent: what a request may send, and what is refused (a new trace starts). */
import { describe, expect, it } from 'vitest';
import { formatTraceparent, parseTraceparent } from '../../src/telemetry/traceparent.js';

const TRACE = '4bf92f3577b34da6a3ce929d0e0e4736';
const SPAN = '00f067aa0ba902b7';

describe('traceparent', () => {
  it('reads a valid header and writes it back', () => {
    const parsed = parseTraceparent(`00-${TRACE}-${SPAN}-01`);
    expect(parsed).toEqual({ traceId: TRACE, spanId: SPAN, traceFlags: 1, isRemote: true });
    expect(formatTraceparent(parsed!)).toBe(`00-${TRACE}-${SPAN}-01`);
  });

  it('accepts a later version with more fields', () => {
    expect(parseTraceparent(`01-${TRACE}-${SPAN}-00-extra`)?.traceFlags).toBe(0);
  });

  it.each([
    ['all-zero trace id', `00-${'0'.repeat(32)}-${SPAN}-01`],
    ['all-zero span id', `00-${TRACE}-${'0'.repeat(16)}-01`],
    ['version ff', `ff-${TRACE}-${SPAN}-01`],
    ['extra field in version 00', `00-${TRACE}-${SPAN}-01-x`],
    ['upper case', `00-${TRACE.toUpperCase()}-${SPAN}-01`],
    ['garbage', 'nope'],
    ['too long', `00-${TRACE}-${SPAN}-01`.padEnd(300, 'x')],
  ])('refuses %s', (_name, value) => {
    expect(parseTraceparent(value)).toBeUndefined();
  });
});
