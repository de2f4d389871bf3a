/**
 * The request core: `serve(request, transport)` runs one GraphQL operation for any transport
 * (node:http and the Lambda through graphqlHttp.ts, WebSocket, SSE) and settles it into one
 * value, an `Answer` ({ result, body, status, headers, cost, cache, event? }), which the
 * transport writes out as it is; a subscription settles into a stream of them (`Events`).
 *
 * In order, each step taking what the one before it made:
 * 1. admission (admission.ts): the source, CSRF prevention for the transports a browser can be
 *    made to send, PERSISTED_ONLY, the document, the operation and its cost;
 * 2. the viewer of the request's token (a WebSocket's is the socket's), 401 for a refused one;
 * 3. for a query, the response cache by the admitted document's hash, the operation, the
 *    variables and the viewer's scope: a hit is answered from its stored JSON, with the entry's
 *    ETag and tags, and costs no execution (`hit`);
 * 4. execution (execution.ts) in a fresh context, under the operation meter, with the executor
 *    EXECUTOR (or a test) chooses; a miss's answer is stored, a mutation's writes are evicted;
 * 5. the report (report.ts): masking, `extensions.cost`, the size ceiling, the status, the log
 *    line and the metrics, and for the HTTP transports the caching headers (httpCaching.ts).
 *
 * Nothing is looked up twice: admission parses, validates, hashes and finds the operation once
 * and hands those forward; no stage keeps a table keyed by the request.
 */
import { GraphQLError, OperationTypeNode } from 'graphql';
import type { Viewer } from '../auth/tokens.js';
import { newRequestCost } from '../db/capacity.js';
import { ErrorCode } from '../errors.js';
import type { GraphQLContext } from '../graphql/context.js';
import type { Resume } from '../graphql/eventFanOut.js';
import { startRequestTrace } from '../telemetry/requestTrace.js';
import type { TraceParent } from '../telemetry/requestTrace.js';
import { tracing } from '../telemetry/tracing.js';
import type { Admission, AdmittedOperation, OperationRequest, Transport } from './admission/admission.js';
import { ClientLimitError, releasedAtEnd } from './admission/clientBounds.js';
import type { Hold } from './admission/clientBounds.js';
import type { RequestHeader } from './admission/csrf.js';
import type { Execution } from './execution/execution.js';
import { cachingHeaders, mayBePublic, NO_STORE } from './report/httpCaching.js';
import { nameOperationSpan } from './report/operationSpans.js';
import { answerJson, answerOf } from './report/answer.js';
import { explainOf, visibleCost } from './report/extensions.js';
import type { Answer } from './report/answer.js';
import type { CostDetails } from './report/extensions.js';
import type { ReportContext, Reporter } from './report/report.js';
import { cacheKeyOf, etagOf, scopeOf } from './responseCache/cacheKey.js';
import type { CacheHit, CacheMiss, ResponseCache } from './responseCache/responseCache.js';
import { mapEvents } from './execution/mapEvents.js';

/** One operation as a transport hands it to the core. */
export interface CoreRequest {
  operation: OperationRequest;
  /**
   * The request's headers, for the transports a browser can send (HTTP, the Lambda, SSE): CSRF
   * prevention reads them, and the token is their `Authorization`.
   */
  header?: RequestHeader | undefined;
  /** The viewer, when the transport verified the token itself (a WebSocket's at connection_init, SSE's). */
  viewer?: Viewer | null | undefined;
  requestId: string;
  /** The HTTP server span the operation's trace hangs under. */
  trace?: TraceParent | undefined;
  /** A resumed SSE stream (Last-Event-ID): the events after `after` first, or `missed()` when they are gone. */
  resume?: Resume | undefined;
  /** A streaming transport's hold for a subscription, taken once admission let it through (clientBounds.ts). */
  holdSubscription?: (() => Hold | ClientLimitError) | undefined;
}

/** A subscription that opened: each event's settled answer, until the client or the server ends it. */
export interface Events {
  events: AsyncIterableIterator<Answer>;
  operationName: string | null;
}

/** What the events of a subscription throw when they end on an error: its answer, already reported. */
export class EventsEnded extends Error {
  override name = 'EventsEnded';
  constructor(readonly answer: Answer) {
    super(answer.result.errors?.[0]?.message ?? 'The subscription ended');
  }
}

/** A hit's extensions as JSON, by who sees capacity units: the same bytes on every hit. */
const hitExtensions = (role: 'admin' | 'other', costDetails: CostDetails): string =>
  JSON.stringify({ cost: visibleCost(newRequestCost(), costDetails, role === 'admin' ? 'admin' : undefined) });

export interface ServeOptions {
  admission: Admission;
  execution: Execution;
  reporter: Reporter;
  cache?: ResponseCache | undefined;
  /** Answer `extensions.cache` to requests that ask for it (development only). */
  explainCache: boolean;
  costDetails: CostDetails;
  /** Seconds a public answer over HTTP may be reused (CACHE_MAX_AGE); 0: none is public. */
  cacheMaxAgeSeconds: number;
}

export type Serve = (request: CoreRequest, transport: Transport) => Promise<Answer | Events>;

export function createServe({
  admission,
  execution,
  reporter,
  cache,
  explainCache,
  costDetails,
  cacheMaxAgeSeconds,
}: ServeOptions): Serve {
  const extensionsOf = { admin: hitExtensions('admin', costDetails), other: hitExtensions('other', costDetails) };
  const overHttp = (transport: Transport) => transport === 'http' || transport === 'lambda';

  /** A stored answer: its data's JSON as it is, the entry's ETag and tags, no execution. */
  function hit(
    looked: CacheHit,
    admitted: AdmittedOperation,
    viewer: Viewer | null,
    request: CoreRequest,
    report: ReportContext,
    explain: boolean,
  ): Answer {
    const cost = newRequestCost();
    if (tracing() && startRequestTrace(cost, request.trace)) nameOperationSpan(cost, admitted);
    const { entry, outcome } = looked;
    const variant = viewer?.role === 'admin' ? 'admin' : 'other';
    const extensions = explain
      ? JSON.stringify({ cost: visibleCost(cost, costDetails, viewer?.role), cache: explainOf(outcome) })
      : extensionsOf[variant];
    reporter.report(report, cost, []);
    const answer = answerOf({
      body: answerJson(entry.json, extensions),
      status: 200,
      headers: new Map(),
      cost,
      cache: outcome,
      refused: false,
      operationName: admitted.operationName,
      // The same bytes on every hit of this entry for this variant: their compressed forms are kept with it.
      ...(explain || !cache
        ? {}
        : {
            encoded: {
              get: (encoding: string) => entry.encoded?.get(`${variant}:${encoding}`),
              keep: (encoding: string, bytes: Buffer) =>
                cache.keepEncoded(looked.key, entry, `${variant}:${encoding}`, bytes),
            },
          }),
    });
    return answer;
  }

  /** What HTTP caching knows of a request before it executes. */
  const requestFacts = (request: CoreRequest) => ({
    maxAgeSeconds: cacheMaxAgeSeconds,
    method: request.operation.method?.toUpperCase(),
    signedIn: (request.header?.('authorization') ?? '') !== '',
  });

  /** The caching headers of an answer over HTTP (httpCaching.ts). */
  function withCachingHeaders(
    answer: Answer,
    request: CoreRequest,
    read: {
      ok: boolean;
      tags: readonly string[];
      unnamedRead: boolean;
      viewerRead: boolean;
      etag?: string | undefined;
    },
    dataJson: () => string,
  ): Answer {
    const headers = cachingHeaders({
      ...requestFacts(request),
      ...read,
      ok: read.ok && answer.status === 200,
      etag: () => read.etag ?? etagOf(dataJson()),
    });
    for (const [name, value] of headers) answer.headers.set(name, value);
    return answer;
  }

  /** A subscription: opened in its own context, each event settled into an answer of its own. */
  async function subscribe(
    admitted: AdmittedOperation,
    viewer: Viewer | null,
    request: CoreRequest,
    report: ReportContext,
  ): Promise<Answer | Events> {
    const hold = request.holdSubscription?.();
    if (hold instanceof ClientLimitError) return reporter.refuse([hold], 429, report);
    // A subscription's answers are neither stored nor public: its reads are not recorded.
    const context = execution.context(viewer, request.requestId, request.trace, false);
    if (request.resume !== undefined) context.resume = request.resume;
    let opened: Awaited<ReturnType<Execution['subscribe']>>;
    try {
      opened = await execution.subscribe(admitted, context);
    } catch (error) {
      hold?.release();
      throw error;
    }
    if (!(Symbol.asyncIterator in opened)) {
      hold?.release();
      // A refusal while opening (FORBIDDEN, a missing order) carries no cost: its figures would
      // tell another customer's order from a missing one.
      const answer = reporter.settle({
        ...report,
        executionContext: context,
        result: opened,
        cost: newRequestCost(),
        viewerRole: viewer?.role,
        costed: false,
      });
      answer.notOpened = true;
      return answer;
    }
    const answers = mapEvents(opened, ({ result, context: eventContext, event, startedAt }) =>
      reporter.settle({
        ...report,
        startedAt,
        executionContext: eventContext,
        result,
        cost: eventContext.cost,
        viewerRole: viewer?.role,
        event,
        arrivedAt: eventContext.events.arrivedAt(event),
      }),
    );
    // The stream's end on an error (the token expired, a failure): reported once, here.
    const events: AsyncIterableIterator<Answer> = {
      next: () =>
        answers.next().catch((error: unknown) => {
          const failure =
            error instanceof GraphQLError
              ? error
              : new GraphQLError('Internal server error', { originalError: error as Error });
          throw new EventsEnded(reporter.refuse([failure], 500, { ...report, startedAt: performance.now() }));
        }),
      return: () => answers.return(undefined),
      throw: (error?: unknown) => answers.throw(error),
      [Symbol.asyncIterator]() {
        return this;
      },
    };
    return { events: hold ? releasedAtEnd(events, hold) : events, operationName: admitted.operationName };
  }

  return async function serve(request, transport) {
    const startedAt = performance.now();
    const report: ReportContext = { transport, operationName: null, startedAt, requestId: request.requestId };
    const { operation } = request;
    const origin =
      request.header && transport !== 'ws' ? { method: operation.method ?? 'POST', header: request.header } : undefined;
    const admitted = await admission.admit(operation, transport, origin);
    if (!admitted.ok) return reporter.refuse(admitted.errors, admitted.status, report);
    report.operationName = admitted.operationName;

    let viewer: Viewer | null;
    if (request.viewer !== undefined) viewer = request.viewer;
    else {
      try {
        viewer = await execution.viewer(request.header?.('authorization'));
      } catch (error) {
        if (error instanceof GraphQLError && error.extensions.code === ErrorCode.UNAUTHENTICATED) {
          return reporter.refuse([error], 401, report);
        }
        throw error;
      }
    }
    if (viewer) report.viewer = viewer.userId;
    const type = admitted.operation.operation;
    if (type === OperationTypeNode.SUBSCRIPTION) return subscribe(admitted, viewer, request, report);

    const explain = explainCache && operation.explain === true;
    let miss: CacheMiss | undefined;
    if (cache && type === OperationTypeNode.QUERY) {
      const scope = scopeOf(admitted.document.readsOnlyPublicData, viewer);
      const looked = await cache.lookup(
        cacheKeyOf(admitted.document.hash, admitted.operationName, admitted.variables, scope),
      );
      if (looked.status === 'hit') {
        const answer = hit(looked, admitted, viewer, request, report, explain);
        if (!overHttp(transport)) return answer;
        const { entry } = looked;
        // A hit consults no viewer: what it read is its entry's tags (only named reads are stored).
        const read = { ok: true, tags: entry.tags, unnamedRead: false, viewerRead: false, etag: entry.etag };
        return withCachingHeaders(answer, request, read, () => entry.json);
      }
      miss = looked;
    }

    // What the answer read is recorded only where it may be stored or public (dependencyRecord.ts).
    const maybePublic = overHttp(transport) && mayBePublic(requestFacts(request));
    const recordReads = (miss !== undefined && miss.status !== 'bypass') || maybePublic;
    const context: GraphQLContext = execution.context(viewer, request.requestId, request.trace, recordReads);
    const result = await execution.execute(admitted, context);
    const stored =
      miss && cache ? cache.store(miss, result, context, admitted.document.readsOnlyPublicData) : undefined;
    if (cache && type === OperationTypeNode.MUTATION) cache.wrote(context.wrote.tags());
    const answer = reporter.settle({
      ...report,
      executionContext: context,
      result,
      cost: context.cost,
      viewerRole: viewer?.role,
      // The planned executor writes its answer as JSON (`result.dataJson`): the cache and the report use that text.
      dataJson: stored?.dataJson ?? result.dataJson,
      cache: stored?.outcome,
      explain,
    });
    if (!overHttp(transport)) return answer;
    // Most answers (to a POST, to someone signed in) can never be public: `private, no-store`
    // (httpCaching.ts's answer for them), without gathering what they read.
    if (!maybePublic) {
      answer.headers.set('cache-control', NO_STORE);
      return answer;
    }
    return withCachingHeaders(
      answer,
      request,
      {
        ok: !result.errors?.length,
        tags: [...context.reads.tags],
        unnamedRead: context.reads.uncacheable !== undefined,
        viewerRead: context.access.readViewerData(),
        etag: stored?.outcome.etag,
      },
      () => stored?.dataJson ?? result.dataJson ?? JSON.stringify(result.data ?? null),
    );
  };
}
