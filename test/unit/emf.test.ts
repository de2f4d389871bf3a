import { Counter, Gauge, Histogram, Registry } from 'prom-client';
import { describe, expect, it } from 'vitest';
import { EmfWriter, MAX_VALUES } from '../../src/telemetry/emf.js';

function aRegistry() {
  const registry = new Registry();
  return {
    registry,
    requests: new Counter({ name: 'x_requests_total', help: 'h', labelNames: ['operation'], registers: [registry] }),
    lag: new Gauge({ name: 'x_lag_seconds', help: 'h', registers: [registry] }),
    duration: new Histogram({
      name: 'x_duration_seconds',
      help: 'h',
      labelNames: ['operation'],
      buckets: [0.1, 1],
      registers: [registry],
    }),
  };
}

function writerOf(registry: Registry) {
  const lines: Record<string, unknown>[] = [];
  const writer = new EmfWriter({ registry, service: 'fn', write: (line) => lines.push(JSON.parse(line)) });
  return { lines, writer };
}

describe('EMF lines', () => {
  it('writes a counter as what it grew by since the previous lines, with its labels as dimensions', async () => {
    const { registry, requests } = aRegistry();
    const { lines, writer } = writerOf(registry);
    requests.inc({ operation: 'GetItem' }, 3);
    await writer.flush(1000);
    requests.inc({ operation: 'GetItem' }, 2);
    await writer.flush(2000);
    expect(lines).toEqual([
      {
        _aws: {
          Timestamp: 1000,
          CloudWatchMetrics: [
            {
              Namespace: 'tablegraph',
              Dimensions: [['service', 'operation']],
              Metrics: [{ Name: 'x_requests_total', Unit: 'Count' }],
            },
          ],
        },
        service: 'fn',
        operation: 'GetItem',
        x_requests_total: 3,
      },
      expect.objectContaining({ operation: 'GetItem', x_requests_total: 2 }),
    ]);
  });

  it('writes nothing for a series that did not change', async () => {
    const { registry, requests, lag } = aRegistry();
    const { lines, writer } = writerOf(registry);
    requests.inc({ operation: 'Query' });
    lag.set(4);
    await writer.flush();
    expect(lines).toHaveLength(2);
    await writer.flush();
    expect(lines).toHaveLength(2);
  });

  it('writes a histogram as its new observations, at most MAX_VALUES of them, in seconds', async () => {
    const { registry, duration } = aRegistry();
    const { lines, writer } = writerOf(registry);
    duration.observe({ operation: 'Q' }, 0.25);
    await writer.flush();
    for (let i = 0; i < MAX_VALUES + 5; i++) duration.observe({ operation: 'Q' }, 0.5);
    await writer.flush();
    expect(lines[0]).toMatchObject({ x_duration_seconds: [0.25] });
    expect((lines[0]?._aws as { CloudWatchMetrics: { Metrics: unknown[] }[] }).CloudWatchMetrics[0]?.Metrics).toEqual([
      { Name: 'x_duration_seconds', Unit: 'Seconds' },
    ]);
    expect(lines[1]?.x_duration_seconds).toHaveLength(MAX_VALUES);
    expect((lines[1]?.x_duration_seconds as number[])[0]).toBeCloseTo(0.5);
  });
});
