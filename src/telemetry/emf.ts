/**
 * CloudWatch embedded metric format (EMF) for the Lambdas, where no collector runs: after each
 * invocation the function's prom-client registry is written to its log as JSON lines with the
 * `_aws` metadata, and CloudWatch Logs turns them into metrics. The names and labels are the
 * ones `/metrics` and the OTLP export use (bounded, metricLabels.ts); every label becomes a
 * dimension, next to `service` (the function).
 *
 * - Counters are written as what they grew by since the previous lines (CloudWatch adds them up).
 * - Gauges as their value, when it moved.
 * - Histograms as their new observations. EMF takes values, not buckets, so each one is written
 *   as the mean of the observations since the previous lines, as many times as there were
 *   (at most MAX_VALUES). A function serves one request per invocation, so that mean is the
 *   request's own duration; the sum and the count are exact up to MAX_VALUES observations.
 *
 * A series that did not change writes nothing, so an idle label costs no line.
 */
import type { Registry } from 'prom-client';

/** The namespace of every metric. */
export const EMF_NAMESPACE = 'tablegraph';

/** EMF takes at most 100 values for one metric in one line. */
export const MAX_VALUES = 100;

type Labels = Record<string, string | number>;
interface PromValue {
  value: number;
  labels: Labels;
  metricName?: string;
}
interface PromMetric {
  name: string;
  type: string;
  values: PromValue[];
}

export interface EmfOptions {
  registry: Registry;
  /** The `service` dimension: which function wrote the line. */
  service: string;
  /** Where a line goes; the function's log (stdout) by default. */
  write?: (line: string) => void;
}

const unitOf = (name: string): string =>
  name.endsWith('_seconds') ? 'Seconds' : name.endsWith('_total') ? 'Count' : 'None';

const seriesKey = (name: string, labels: Labels): string =>
  `${name}${JSON.stringify(Object.entries(labels).sort(([a], [b]) => a.localeCompare(b)))}`;

export class EmfWriter {
  readonly #registry: Registry;
  readonly #service: string;
  readonly #write: (line: string) => void;
  /** Each counter's and gauge's value, and each histogram's sum and count, when lines were last written. */
  readonly #previous = new Map<string, number>();

  constructor({ registry, service, write = (line) => process.stdout.write(`${line}\n`) }: EmfOptions) {
    this.#registry = registry;
    this.#service = service;
    this.#write = write;
  }

  /** Writes a line per series that changed since the last call; returns how many it wrote. */
  async flush(timestamp = Date.now()): Promise<number> {
    const metrics = (await this.#registry.getMetricsAsJSON()) as unknown as PromMetric[];
    let lines = 0;
    for (const metric of metrics) {
      for (const [labels, value] of this.#changes(metric)) {
        this.#write(this.#line(metric.name, labels, value, timestamp));
        lines++;
      }
    }
    return lines;
  }

  #line(name: string, labels: Labels, value: number | number[], timestamp: number): string {
    const dimensions = { service: this.#service, ...labels };
    return JSON.stringify({
      _aws: {
        Timestamp: timestamp,
        CloudWatchMetrics: [
          {
            Namespace: EMF_NAMESPACE,
            Dimensions: [Object.keys(dimensions)],
            Metrics: [{ Name: name, Unit: unitOf(name) }],
          },
        ],
      },
      ...Object.fromEntries(Object.entries(dimensions).map(([key, label]) => [key, String(label)])),
      [name]: value,
    });
  }

  /** How far a counter grew since last time (and remembers its value now). */
  #delta(key: string, value: number): number {
    const before = this.#previous.get(key) ?? 0;
    this.#previous.set(key, value);
    return value - before;
  }

  #changes(metric: PromMetric): [Labels, number | number[]][] {
    if (metric.type === 'gauge') {
      return metric.values
        .filter(({ labels, value }) => {
          const key = seriesKey(metric.name, labels);
          const moved = (this.#previous.get(key) ?? 0) !== value;
          this.#previous.set(key, value);
          return moved;
        })
        .map(({ labels, value }) => [labels, value]);
    }
    if (metric.type === 'counter') {
      return metric.values
        .map(({ labels, value }): [Labels, number] => [labels, this.#delta(seriesKey(metric.name, labels), value)])
        .filter(([, delta]) => delta > 0);
    }
    if (metric.type !== 'histogram') return [];
    const series = new Map<string, { labels: Labels; sum: number; count: number }>();
    for (const { labels, value, metricName } of metric.values) {
      if (!metricName?.endsWith('_sum') && !metricName?.endsWith('_count')) continue;
      const key = seriesKey(metric.name, labels);
      const entry = series.get(key) ?? { labels, sum: 0, count: 0 };
      if (metricName.endsWith('_sum')) entry.sum = value;
      else entry.count = value;
      series.set(key, entry);
    }
    const changes: [Labels, number[]][] = [];
    for (const [key, { labels, sum, count }] of series) {
      const added = this.#delta(`${key}#count`, count);
      const addedSum = this.#delta(`${key}#sum`, sum);
      if (added <= 0) continue;
      const mean = addedSum / added;
      changes.push([labels, new Array<number>(Math.min(added, MAX_VALUES)).fill(mean)]);
    }
    return changes;
  }
}
