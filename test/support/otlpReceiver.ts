/**
 * An OTLP/HTTP receiver inside the test process: it takes what the exporters send to
 * /v1/traces and /v1/metrics, decodes protobuf bodies with the OpenTelemetry proto definitions
 * (test/support/otlp/, from opentelemetry-proto, read by protobufjs) and JSON bodies as
 * OTLP/JSON, and keeps the spans and metric names flat for assertions.
 */
import { EventEmitter } from 'node:events';
import http from 'node:http';
import type { AddressInfo } from 'node:net';
import path from 'node:path';
import protobuf from 'protobufjs';
import { projectRoot } from '../../src/projectRoot.js';

export interface ReceivedSpan {
  traceId: string;
  spanId: string;
  parentSpanId: string;
  name: string;
  kind: number;
  attributes: Record<string, unknown>;
  status: { code: number; message?: string };
  links: { traceId: string; spanId: string }[];
  service: string;
  /** The exporting process's resource attributes (service.instance.id, ...). */
  resource: Record<string, unknown>;
}

/** One data point of an exported metric: a sum's or gauge's value, a histogram's count and sum. */
export interface ReceivedPoint {
  metric: string;
  kind: 'sum' | 'gauge' | 'histogram';
  attributes: Record<string, unknown>;
  value: number;
  /** Histograms only. */
  count?: number;
  service: string;
}

const PROTO_DIR = path.join(projectRoot(), 'test', 'support', 'otlp');

function loadProtos(): protobuf.Root {
  const root = new protobuf.Root();
  root.resolvePath = (_origin, target) => path.join(PROTO_DIR, target);
  root.loadSync([
    'opentelemetry/proto/collector/trace/v1/trace_service.proto',
    'opentelemetry/proto/collector/metrics/v1/metrics_service.proto',
  ]);
  return root;
}

type AnyValue = Record<string, unknown>;

/** OTLP's AnyValue (protobuf objects and OTLP/JSON alike) as a plain value. */
function valueOf(value: AnyValue | undefined): unknown {
  if (!value) return undefined;
  if ('stringValue' in value) return value.stringValue;
  if ('boolValue' in value) return value.boolValue;
  if ('intValue' in value) return Number(value.intValue);
  if ('doubleValue' in value) return Number(value.doubleValue);
  if ('arrayValue' in value) {
    return ((value.arrayValue as { values?: AnyValue[] }).values ?? []).map(valueOf);
  }
  return undefined;
}

const attributesOf = (list: { key: string; value: AnyValue }[] | undefined): Record<string, unknown> =>
  Object.fromEntries((list ?? []).map(({ key, value }) => [key, valueOf(value)]));

/** Protobuf ids are bytes, OTLP/JSON's are hex already. */
const hexOf = (id: unknown): string =>
  id === undefined || id === null ? '' : typeof id === 'string' ? id : Buffer.from(id as Uint8Array).toString('hex');

interface RawSpan {
  traceId: unknown;
  spanId: unknown;
  parentSpanId?: unknown;
  name: string;
  kind?: number;
  attributes?: { key: string; value: AnyValue }[];
  status?: { code?: number; message?: string };
  links?: { traceId: unknown; spanId: unknown }[];
}
interface RawTraces {
  resourceSpans?: {
    resource?: { attributes?: { key: string; value: AnyValue }[] };
    scopeSpans?: { spans?: RawSpan[] }[];
  }[];
}
interface RawPoint {
  attributes?: { key: string; value: AnyValue }[];
  asDouble?: number | string;
  asInt?: number | string;
  count?: number | string;
  sum?: number | string;
}
interface RawMetric {
  name: string;
  sum?: { dataPoints?: RawPoint[] };
  gauge?: { dataPoints?: RawPoint[] };
  histogram?: { dataPoints?: RawPoint[] };
}
interface RawMetrics {
  resourceMetrics?: {
    resource?: { attributes?: { key: string; value: AnyValue }[] };
    scopeMetrics?: { metrics?: RawMetric[] }[];
  }[];
}

export class OtlpReceiver {
  readonly spans: ReceivedSpan[] = [];
  readonly metricNames = new Set<string>();
  readonly points: ReceivedPoint[] = [];
  readonly contentTypes = new Set<string>();
  private readonly emitter = new EventEmitter();
  private readonly root = loadProtos();
  private server: http.Server | undefined;
  url = '';

  async start(): Promise<this> {
    const traces = this.root.lookupType('opentelemetry.proto.collector.trace.v1.ExportTraceServiceRequest');
    const metrics = this.root.lookupType('opentelemetry.proto.collector.metrics.v1.ExportMetricsServiceRequest');
    this.server = http.createServer((req, res) => {
      const chunks: Buffer[] = [];
      req.on('data', (chunk: Buffer) => chunks.push(chunk));
      req.on('end', () => {
        const body = Buffer.concat(chunks);
        const type = String(req.headers['content-type'] ?? '');
        this.contentTypes.add(type);
        const json = type.includes('json');
        const decode = (message: protobuf.Type): unknown =>
          json ? JSON.parse(body.toString('utf8')) : message.toObject(message.decode(body), { longs: String });
        if (req.url === '/v1/traces') this.addTraces(decode(traces) as RawTraces);
        else if (req.url === '/v1/metrics') this.addMetrics(decode(metrics) as RawMetrics);
        res.writeHead(200, { 'content-type': json ? 'application/json' : 'application/x-protobuf' });
        res.end(json ? '{}' : '');
      });
    });
    await new Promise<void>((resolve) => this.server?.listen(0, '127.0.0.1', resolve));
    this.url = `http://127.0.0.1:${(this.server.address() as AddressInfo).port}`;
    return this;
  }

  private addTraces(request: RawTraces): void {
    for (const resourceSpans of request.resourceSpans ?? []) {
      const resource = attributesOf(resourceSpans.resource?.attributes);
      const named = resource['service.name'];
      const service = typeof named === 'string' ? named : '';
      for (const scope of resourceSpans.scopeSpans ?? []) {
        for (const span of scope.spans ?? []) {
          this.spans.push({
            traceId: hexOf(span.traceId),
            spanId: hexOf(span.spanId),
            parentSpanId: hexOf(span.parentSpanId),
            name: span.name,
            kind: span.kind ?? 0,
            attributes: attributesOf(span.attributes),
            status: { code: span.status?.code ?? 0, message: span.status?.message },
            links: (span.links ?? []).map((link) => ({ traceId: hexOf(link.traceId), spanId: hexOf(link.spanId) })),
            service,
            resource,
          });
        }
      }
    }
    this.emitter.emit('data');
  }

  private addMetrics(request: RawMetrics): void {
    for (const resourceMetrics of request.resourceMetrics ?? []) {
      const named = attributesOf(resourceMetrics.resource?.attributes)['service.name'];
      const service = typeof named === 'string' ? named : '';
      for (const scope of resourceMetrics.scopeMetrics ?? []) {
        for (const metric of scope.metrics ?? []) {
          this.metricNames.add(metric.name);
          for (const kind of ['sum', 'gauge', 'histogram'] as const) {
            for (const point of metric[kind]?.dataPoints ?? []) {
              this.points.push({
                metric: metric.name,
                kind,
                attributes: attributesOf(point.attributes),
                value: Number(kind === 'histogram' ? point.sum : (point.asDouble ?? point.asInt ?? 0)),
                ...(kind === 'histogram' ? { count: Number(point.count) } : {}),
                service,
              });
            }
          }
        }
      }
    }
    this.emitter.emit('data');
  }

  /** Resolves with `find`'s answer once it has one (checked on each export), or fails after `timeoutMs`. */
  async waitFor<T>(find: () => T | undefined, what: string, timeoutMs = 15_000): Promise<T> {
    const now = find();
    if (now !== undefined) return now;
    return new Promise<T>((resolve, reject) => {
      const timer = setTimeout(() => {
        this.emitter.off('data', check);
        reject(new Error(`OTLP receiver: no ${what} within ${timeoutMs} ms (${this.spans.length} spans so far)`));
      }, timeoutMs);
      const check = () => {
        const found = find();
        if (found === undefined) return;
        clearTimeout(timer);
        this.emitter.off('data', check);
        resolve(found);
      };
      this.emitter.on('data', check);
    });
  }

  /** The spans of one trace. */
  trace(traceId: string): ReceivedSpan[] {
    return this.spans.filter((span) => span.traceId === traceId);
  }

  async stop(): Promise<void> {
    this.server?.closeAllConnections();
    await new Promise((resolve) => (this.server ? this.server.close(resolve) : resolve(undefined)));
  }
}
