/**
 * The HTTP server span of a GraphQL request (node:http's request and response, or an API
 * Gateway event in the Lambda), with the W3C `traceparent` of the request honoured as its
 * parent. The operation's trace hangs under it (graphql/context.ts), and the span ends with
 * the operation's DynamoDB totals once the response is sent.
 */
import type { IncomingMessage, ServerResponse } from 'node:http';
import { SpanKind, SpanStatusCode, trace } from '@opentelemetry/api';
import type { Attributes, Span } from '@opentelemetry/api';
import type { RequestTrace, TraceParent } from './requestTrace.js';
import { ATTR } from './semconv.js';
import { contextOf } from './traceparent.js';
import { tracing } from './tracing.js';

export class HttpTrace implements TraceParent {
  readonly context;
  #child: RequestTrace | undefined;

  constructor(readonly span: Span) {
    this.context = trace.setSpan(contextOf(undefined), span);
  }

  adopt(child: RequestTrace): void {
    this.#child = child;
  }

  /** Ends the span with the response's status and the operation's totals. */
  end(status: number, attributes: Attributes = {}): void {
    if (!this.span.isRecording()) return;
    this.span.setAttributes({ ...attributes, ...this.#child?.totals(), [ATTR.HTTP_RESPONSE_STATUS_CODE]: status });
    if (status >= 500) this.span.setStatus({ code: SpanStatusCode.ERROR });
    this.span.end();
  }
}

/** Starts the server span of a request: undefined while tracing is off. */
export function startHttpTrace(
  method: string,
  route: string,
  headers: Record<string, string | string[] | undefined>,
  attributes: Attributes = {},
): HttpTrace | undefined {
  const active = tracing();
  if (!active) return undefined;
  const span = active.tracer.startSpan(
    `${method} ${route}`,
    {
      kind: SpanKind.SERVER,
      attributes: { [ATTR.HTTP_REQUEST_METHOD]: method, [ATTR.HTTP_ROUTE]: route, ...attributes },
    },
    contextOf(headers.traceparent),
  );
  const httpTrace = new HttpTrace(span);
  // Not recording: the context still carries the sampler's "no", so the operation follows it.
  return httpTrace;
}

const byRequest = new WeakMap<IncomingMessage, HttpTrace>();

/** node:http: traces `req` until `res` is sent (or the connection closes). */
export function traceHttpRequest(req: IncomingMessage, res: ServerResponse, route: string): void {
  if (!tracing()) return;
  const path = (req.url ?? '/').split('?')[0] ?? '/';
  const httpTrace = startHttpTrace(req.method ?? 'GET', route, req.headers, {
    [ATTR.URL_PATH]: path.slice(0, 256),
    [ATTR.URL_SCHEME]: 'http',
  });
  if (!httpTrace) return;
  byRequest.set(req, httpTrace);
  res.once('close', () => httpTrace.end(res.statusCode));
}

/** The trace parent of a request traced by traceHttpRequest. */
export const httpTraceOf = (req: IncomingMessage): HttpTrace | undefined =>
  tracing() ? byRequest.get(req) : undefined;
