/**
 * OTLP metrics with the very names, labels and numbers of the Prometheus `/metrics`: a
 * MetricProducer for the SDK's metric reader that reads the process's prom-client registries
 * (one per server, one per consumer) at each export. Nothing is counted twice, and the labels
 * stay the bounded ones the registries already use (metricLabels.ts).
 */
import type { HrTime } from '@opentelemetry/api';
import { ValueType } from '@opentelemetry/api';
import { AggregationTemporality, DataPointType } from '@opentelemetry/sdk-metrics';
import type { CollectionResult, MetricData, MetricProducer } from '@opentelemetry/sdk-metrics';
import type { Resource } from '@opentelemetry/resources';
import type { Registry } from 'prom-client';

type Labels = Record<string, string | number>;
interface PromValue {
  value: number;
  labels: Labels;
  metricName?: string;
}
interface PromMetric {
  name: string;
  help: string;
  type: string;
  values: PromValue[];
}

const hrTime = (ms: number): HrTime => [Math.floor(ms / 1000), Math.round((ms % 1000) * 1e6)];

const labelKey = (labels: Labels): string =>
  JSON.stringify(Object.entries(labels).sort(([a], [b]) => a.localeCompare(b)));

function histogram(metric: PromMetric, start: HrTime, end: HrTime): MetricData {
  const series = new Map<
    string,
    { attributes: Labels; bounds: number[]; cumulative: number[]; sum: number; count: number }
  >();
  for (const value of metric.values) {
    const { le, ...attributes } = value.labels;
    const key = labelKey(attributes);
    const entry = series.get(key) ?? { attributes, bounds: [], cumulative: [], sum: 0, count: 0 };
    series.set(key, entry);
    if (value.metricName?.endsWith('_bucket')) {
      if (le !== '+Inf') {
        entry.bounds.push(Number(le));
        entry.cumulative.push(value.value);
      }
    } else if (value.metricName?.endsWith('_sum')) entry.sum = value.value;
    else if (value.metricName?.endsWith('_count')) entry.count = value.value;
  }
  return {
    descriptor: { name: metric.name, description: metric.help, unit: '', valueType: ValueType.DOUBLE },
    aggregationTemporality: AggregationTemporality.CUMULATIVE,
    dataPointType: DataPointType.HISTOGRAM,
    dataPoints: [...series.values()].map(({ attributes, bounds, cumulative, sum, count }) => {
      // Prometheus buckets count everything up to their bound; OTLP's count each bucket alone.
      const counts = cumulative.map((total, index) => total - (cumulative[index - 1] ?? 0));
      counts.push(count - (cumulative.at(-1) ?? 0));
      return {
        startTime: start,
        endTime: end,
        attributes,
        value: { buckets: { boundaries: bounds, counts }, sum, count },
      };
    }),
  };
}

function convert(metric: PromMetric, start: HrTime, end: HrTime): MetricData | undefined {
  if (metric.type === 'histogram') return histogram(metric, start, end);
  if (metric.type !== 'counter' && metric.type !== 'gauge') return undefined; // no summaries here
  const descriptor = { name: metric.name, description: metric.help, unit: '', valueType: ValueType.DOUBLE };
  const dataPoints = metric.values.map((value) => ({
    startTime: start,
    endTime: end,
    attributes: value.labels,
    value: value.value,
  }));
  return metric.type === 'counter'
    ? {
        descriptor,
        aggregationTemporality: AggregationTemporality.CUMULATIVE,
        dataPointType: DataPointType.SUM,
        isMonotonic: true,
        dataPoints,
      }
    : {
        descriptor,
        aggregationTemporality: AggregationTemporality.CUMULATIVE,
        dataPointType: DataPointType.GAUGE,
        dataPoints,
      };
}

export class PrometheusProducer implements MetricProducer {
  readonly registries = new Set<Registry>();
  readonly #started = Date.now();

  constructor(private readonly resource: Resource) {}

  async collect(): Promise<CollectionResult> {
    const start = hrTime(this.#started);
    const end = hrTime(Date.now());
    const metrics: MetricData[] = [];
    const errors: unknown[] = [];
    for (const registry of this.registries) {
      try {
        for (const metric of (await registry.getMetricsAsJSON()) as unknown as PromMetric[]) {
          const data = convert(metric, start, end);
          if (data) metrics.push(data);
        }
      } catch (error) {
        errors.push(error);
      }
    }
    return {
      resourceMetrics: { resource: this.resource, scopeMetrics: [{ scope: { name: 'tablegraph' }, metrics }] },
      errors,
    };
  }
}
