/**
 * GraphQL over Server-Sent Events at /graphql/stream: the graphql-sse protocol's "distinct
 * connections" mode (one operation per request, its results as `next` events, then `complete`),
 * for proxies and front doors that speak only HTTP/1. A thin adapter over the pipeline, like
 * WebSocket: the same admission, viewer, execution, masking, cost, log line and metrics.
 *
 * - Request: POST with a JSON body (`query` or a document id, `variables`, `operationName`,
 *   `extensions`) or GET with the same as parameters, `Accept: text/event-stream`; the token in
 *   `Authorization`. A refusal before the stream answers with JSON and the HTTP status of the
 *   other transports (400, 401, 413, 503).
 * - Every event of a subscription carries `id: <seq>`, the stream record's sequence number. A
 *   client that reconnects with `Last-Event-ID` first receives the held events after it (a
 *   bounded buffer, EventFanOut); when the buffer no longer reaches back that far, the first
 *   message is a `next` with an `EVENTS_MISSED` error: refetch, the stream then goes on live.
 * - Bounds: streams per server (the WebSocket socket bound), the streams and subscriptions of
 *   one client (clientBounds.ts, shared with WebSocket: 429 TOO_MANY_CONNECTIONS or
 *   TOO_MANY_OPERATIONS), the body limit, a comment line every keep-alive interval (drops dead
 *   peers), the end of the stream at the token's `exp`.
 */
import { randomUUID } from 'node:crypto';
import type { IncomingMessage, ServerResponse } from 'node:http';
import { GraphQLError, OperationTypeNode } from 'graphql';
import type { ExecutionResult, GraphQLFormattedError } from 'graphql';
import type { Viewer } from '../../auth/tokens.js';
import type { WebSocketLimits } from '../../config/index.js';
import { ErrorCode } from '../../errors.js';
import type { ChangeEvent } from '../../events/changeEvent.js';
import { SEQ_PATTERN } from '../../graphql/eventFanOut.js';
import { ClientLimitError, clientOf } from '../../pipeline/clientBounds.js';
import type { ClientBounds, Hold } from '../../pipeline/clientBounds.js';
import { hasExpired } from '../../pipeline/execution.js';
import { BodyRefused, readBody } from '../../pipeline/httpBody.js';
import type { OperationRequest } from '../../pipeline/admission.js';
import { operationRequestOf } from '../../pipeline/operationRequest.js';
import type { Pipeline } from '../../pipeline/pipeline.js';

export const SSE_PATH = '/graphql/stream';

export interface SseOptions {
  pipeline: Pipeline;
  websocket: WebSocketLimits;
  /** What one client may hold open, shared with the WebSocket transport (pipeline/clientBounds.ts). */
  clients: ClientBounds;
  /** The address of the client that sent a request (TRUST_PROXY_HOPS applied). */
  addressOf: (req: IncomingMessage) => string;
}

/** What `operate` is given of a request that passed every check before admission. */
interface Admissible {
  viewer: Viewer | null;
  request: OperationRequest;
  lastEventId: string | undefined;
  /** The client its holds count against, and the holds to release once the stream has ended. */
  client: string;
  holds: Hold[];
}

/** setTimeout's limit (about 24.8 days); a later `exp` is re-armed when it fires. */
const MAX_TIMER_MS = 2 ** 31 - 1;

const isRecord = (value: unknown): value is Record<string, unknown> =>
  typeof value === 'object' && value !== null && !Array.isArray(value);

const answerJson = (res: ServerResponse, status: number, errors: readonly GraphQLFormattedError[]) => {
  if (res.headersSent) return;
  res.writeHead(status, { 'content-type': 'application/json; charset=utf-8', 'cache-control': 'private, no-store' });
  res.end(JSON.stringify({ errors }));
};

const coded = (message: string, code: string, status: number) =>
  new GraphQLError(message, { extensions: { code, http: { status } } });

export function createSseHandler({ pipeline, websocket, clients, addressOf }: SseOptions) {
  const { admission, execution, reporter, csrf } = pipeline;
  let open = 0;
  const streams = new Set<() => void>();

  const refuse = (res: ServerResponse, status: number, ...errors: GraphQLError[]) =>
    answerJson(res, status, reporter.finishErrors(errors, { transport: 'sse', operationName: null }));

  async function handle(req: IncomingMessage, res: ServerResponse): Promise<void> {
    if (req.method !== 'GET' && req.method !== 'POST') {
      res.setHeader('allow', 'GET, POST');
      return refuse(res, 405, coded('GraphQL over SSE takes GET or POST', 'BAD_REQUEST', 405));
    }
    if (open >= websocket.maxSockets) {
      return refuse(res, 503, coded('Too many open streams: try again later', 'SERVICE_UNAVAILABLE', 503));
    }
    let params: Record<string, unknown>;
    if (req.method === 'GET') {
      params = Object.fromEntries(new URLSearchParams(req.url?.split('?')[1] ?? ''));
    } else {
      let text: string;
      try {
        // The one body limit of every HTTP transport (pipeline/httpBody.ts).
        text = await readBody(req as AsyncIterable<Uint8Array>, {
          limit: pipeline.limits.maxBodyBytes,
          contentLength: req.headers['content-length'],
          contentEncoding: req.headers['content-encoding'],
        });
      } catch (error) {
        if (!(error instanceof BodyRefused)) throw error;
        const code = error.status === 413 ? ErrorCode.PAYLOAD_TOO_LARGE : 'BAD_REQUEST';
        return refuse(res, error.status, coded(error.message, code, error.status));
      }
      try {
        const parsed: unknown = JSON.parse(text);
        params = isRecord(parsed) ? parsed : {};
      } catch {
        return refuse(res, 400, coded('The request body is not valid JSON', 'BAD_REQUEST', 400));
      }
    }
    const header = (name: string) => {
      const value = req.headers[name];
      return Array.isArray(value) ? value.join(',') : value;
    };
    const request = operationRequestOf(params);
    const csrfRefusal = csrf(req.method, header, request);
    if (csrfRefusal) return refuse(res, csrfRefusal.status, ...csrfRefusal.errors);
    const lastEventId = header('last-event-id');
    if (lastEventId !== undefined && !SEQ_PATTERN.test(lastEventId)) {
      return refuse(res, 400, coded('Last-Event-ID must be the id of an event of this stream', 'BAD_REQUEST', 400));
    }
    let viewer: Viewer | null;
    try {
      viewer = await execution.viewer(header('authorization'));
    } catch (error) {
      if (error instanceof GraphQLError && error.extensions.code === ErrorCode.UNAUTHENTICATED) {
        return refuse(res, 401, coded(error.message, ErrorCode.UNAUTHENTICATED, 401));
      }
      throw error;
    }
    if (hasExpired(viewer)) return refuse(res, 401, coded('The token has expired', ErrorCode.UNAUTHENTICATED, 401));
    // The stream counts against its client from here until `operate` returns, which is when
    // the stream has ended, however it ended.
    const client = clientOf(viewer, addressOf(req));
    const connection = clients.hold(client, 'connection');
    if (connection instanceof ClientLimitError) return refuse(res, 429, connection);
    const holds: Hold[] = [connection];
    try {
      await operate(res, { viewer, request: { ...request, method: req.method }, lastEventId, client, holds });
    } finally {
      for (const hold of holds) hold.release();
    }
  }

  /** Admits and runs the operation, and streams its results until it ends. */
  async function operate(res: ServerResponse, { viewer, request, lastEventId, client, holds }: Admissible) {
    const startedAt = performance.now();
    const verdict = await admission.admit(request, 'sse');
    if (!verdict.ok) {
      if (verdict.status === 405) res.setHeader('allow', 'POST');
      return answerJson(
        res,
        verdict.status,
        reporter.finishErrors(verdict.errors, { transport: 'sse', operationName: null, startedAt }),
      );
    }
    const context = execution.context(viewer, randomUUID());
    // The subscription resumes where the client left off, here or on another instance; told
    // while it opens (before the stream starts) when what it missed is no longer held.
    let missed = false;
    if (lastEventId !== undefined) context.resume = { after: lastEventId, missed: () => (missed = true) };
    const args = {
      schema: pipeline.schema,
      document: verdict.document,
      operationName: verdict.operationName,
      variableValues: verdict.variables,
      contextValue: context,
    };
    const isSubscription = verdict.operation.operation === OperationTypeNode.SUBSCRIPTION;
    if (isSubscription) {
      const subscription = clients.hold(client, 'subscription');
      if (subscription instanceof ClientLimitError) return refuse(res, 429, subscription);
      holds.push(subscription);
    }
    const outcome = isSubscription ? await execution.subscribe(args) : await execution.execute(args);
    const report = (result: ExecutionResult) =>
      reporter.finishResult(result, {
        transport: 'sse',
        operationName: verdict.operationName,
        measurement: execution.measurementOf(result),
        viewerRole: viewer?.role,
        log: context.log,
        // A subscription event is timed by its execution (the measurement).
        startedAt: execution.eventOf(result) === undefined ? startedAt : undefined,
      });
    if (!(Symbol.asyncIterator in outcome)) {
      // A refusal while opening a subscription (FORBIDDEN, a missing order) ends before the stream.
      if (isSubscription && outcome.errors?.length && !outcome.data) {
        return answerJson(res, 200, report(outcome).errors ?? []);
      }
    }

    open++;
    res.writeHead(200, {
      'content-type': 'text/event-stream; charset=utf-8',
      'cache-control': 'private, no-store',
      connection: 'keep-alive',
      // Proxies (nginx) must pass events on as they come.
      'x-accel-buffering': 'no',
    });
    res.flushHeaders();
    const write = (event: 'next' | 'complete', data: unknown, id?: string) =>
      res.write(
        `${id === undefined ? '' : `id: ${id}\n`}event: ${event}\ndata: ${data === undefined ? '' : JSON.stringify(data)}\n\n`,
      );
    if (missed) {
      write('next', {
        errors: [
          {
            message:
              'Events since Last-Event-ID are no longer held: refetch what you show; the stream goes on with new events',
            extensions: { code: ErrorCode.EVENTS_MISSED },
          },
        ],
      });
    }

    let ended = false;
    const iterator = Symbol.asyncIterator in outcome ? outcome : undefined;
    const keepAlive = setInterval(() => res.write(':\n\n'), websocket.keepAliveMs);
    keepAlive.unref();
    let expiry: NodeJS.Timeout | undefined;
    const end = () => {
      if (ended) return;
      ended = true;
      open--;
      streams.delete(end);
      clearInterval(keepAlive);
      clearTimeout(expiry);
      void iterator?.return?.(undefined);
      if (!res.writableEnded) {
        write('complete', undefined);
        res.end();
      }
    };
    streams.add(end);
    res.on('close', end);
    const armExpiry = () => {
      if (viewer?.expiresAt === undefined) return;
      const wait = Math.min(Math.max(viewer.expiresAt * 1000 - Date.now(), 0), MAX_TIMER_MS);
      expiry = setTimeout(() => {
        if (!hasExpired(viewer)) return armExpiry();
        write('next', {
          errors: [
            {
              message: 'The token has expired: sign in again and resubscribe',
              extensions: { code: ErrorCode.UNAUTHENTICATED },
            },
          ],
        });
        end();
      }, wait);
      expiry.unref();
    };
    armExpiry();

    if (!iterator) {
      write('next', report(outcome as ExecutionResult));
      return end();
    }
    try {
      for await (const result of iterator) {
        if (ended) break;
        const seq = (execution.eventOf(result) as ChangeEvent | undefined)?.seq;
        write('next', report(result), seq);
      }
    } catch (error) {
      if (!(error instanceof GraphQLError)) pipeline.log.error({ err: error }, 'SSE stream failed');
      const errors = error instanceof GraphQLError ? [error] : [new GraphQLError('Internal server error')];
      if (!ended)
        write('next', {
          errors: reporter.finishErrors(errors, { transport: 'sse', operationName: verdict.operationName }),
        });
    }
    end();
  }

  return {
    /** A plain node handler for SSE_PATH: it answers every request itself. */
    handler: (req: IncomingMessage, res: ServerResponse): void => {
      handle(req, res).catch((error: unknown) => {
        pipeline.log.error({ err: error }, 'SSE request failed');
        answerJson(res, 500, [{ message: 'Internal server error', extensions: { code: 'INTERNAL_SERVER_ERROR' } }]);
      });
    },
    /** Open streams. */
    get size(): number {
      return open;
    },
    /** Ends every open stream (`complete`), e.g. before the server drains. */
    dispose(): void {
      for (const end of [...streams]) end();
    },
  };
}
