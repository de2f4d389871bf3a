/**
 * The counters of the stream processing, by the same names wherever it runs: the standalone
 * consumer's /metrics (src/consumer/consumerMetrics.ts) and the stream Lambda's EMF lines.
 */
import { Counter } from 'prom-client';
import type { Registry } from 'prom-client';

/** What one batch did (a consumer's BatchReport, or a Lambda's ProcessResult). */
export interface StreamBatchCounts {
  records: number;
  duplicates: number;
  failures: number;
  events: number;
}

export function registerStreamMetrics(registry: Registry): { observe(batch: StreamBatchCounts): void } {
  const records = new Counter({
    name: 'tablegraph_stream_records_total',
    help: 'Stream records read and processed (every item type)',
    registers: [registry],
  });
  const duplicates = new Counter({
    name: 'tablegraph_stream_duplicate_records_total',
    help: 'Stream records delivered again whose soldCount change was already applied (changed nothing)',
    registers: [registry],
  });
  const failures = new Counter({
    name: 'tablegraph_stream_record_failures_total',
    help: 'Stream records that failed and are retried',
    registers: [registry],
  });
  const events = new Counter({
    name: 'tablegraph_stream_events_published_total',
    help: 'Change events handed to the event bus (lost ones included: see tablegraph_event_bus_lost_events)',
    registers: [registry],
  });
  return {
    observe(batch) {
      records.inc(batch.records);
      duplicates.inc(batch.duplicates);
      failures.inc(batch.failures);
      events.inc(batch.events);
    },
  };
}
