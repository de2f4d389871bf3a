/**
 * The span attribute names copied into src/telemetry/semconv.ts are the conventions' own: each
 * equals its constant in @opentelemetry/semantic-conventions (stable or incubating).
 */
import * as stable from '@opentelemetry/semantic-conventions';
import * as incubating from '@opentelemetry/semantic-conventions/incubating';
import { describe, expect, it } from 'vitest';
import { ATTR } from '../../src/telemetry/semconv.js';

describe('semantic-convention names', () => {
  it.each(Object.entries(ATTR))('%s is the conventions’ name', (key, name) => {
    const conventions = { ...incubating, ...stable } as Record<string, unknown>;
    expect(conventions[`ATTR_${key}`]).toBe(name);
  });
});
