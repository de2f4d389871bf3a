/**
 * The GraphQL context of one execution (an HTTP request, a WebSocket operation, one event of a
 * subscription): who asks, fresh loaders, so no cache outlives it, and the execution's DynamoDB
 * cost record. Its data sources send through a client bound to that record (db/client.ts
 * `costed`), so every read and write made for the execution is counted, and nothing else is.
 */
import type { Logger } from 'pino';
import { Access } from '../auth/access.js';
import { InvalidTokenError } from '../auth/tokens.js';
import type { TokenVerifier, Viewer } from '../auth/tokens.js';
import { newRequestCost } from '../db/capacity.js';
import type { RequestCost } from '../db/capacity.js';
import { costed } from '../db/client.js';
import { newDependencyRecord, NOT_RECORDED } from '../db/dependencyRecord.js';
import type { DependencyRecord } from '../db/dependencyRecord.js';
import { Loaders } from '../db/loaders.js';
import type { DataSources } from '../db/loaders.js';
import { UnauthenticatedError } from '../errors.js';
import { startRequestTrace } from '../telemetry/requestTrace.js';
import type { TraceParent } from '../telemetry/requestTrace.js';
import type { EventFanOut, Resume } from './eventFanOut.js';
import type { ReadRound } from './reads.js';
import { WriteRecord } from './writeRecord.js';

export interface GraphQLContext {
  requestId: string;
  viewer: Viewer | null;
  /** What this execution's DynamoDB calls cost so far (`extensions.cost`, the log line, metrics). */
  cost: RequestCost;
  /**
   * What this execution read, as dependency tags (the response cache files its answer under them,
   * HTTP caching names them); NOT_RECORDED where the answer can be neither stored nor public.
   */
  reads: DependencyRecord;
  /** What this execution's writes touched (the writing instance evicts their tags before it answers). */
  wrote: WriteRecord;
  /** Authorized reads: use this, not `loaders`, for users and orders. */
  access: Access;
  loaders: Loaders;
  log: Logger;
  /** Data sources whose client counts into `cost`. */
  data: DataSources;
  /** Change events for subscriptions, by topic (fed by the stream consumer). */
  events: EventFanOut;
  /** A resumed subscription (SSE Last-Event-ID): the events after this one first, or word that they are gone. */
  resume?: Resume | undefined;
  /**
   * Set by the planned executor while it resolves a round's fields: fields that read add their
   * keys to it instead of reading one by one (reads.ts).
   */
  round?: ReadRound | undefined;
}

/** Longer than any real JWT; bounds the work spent on a hostile header. */
const MAX_AUTHORIZATION_LENGTH = 8192;

/**
 * The viewer named by an `Authorization: Bearer <jwt>` header; null without the header.
 * Throws UNAUTHENTICATED (HTTP 401) for any other scheme or an invalid token: a client that
 * sends credentials learns that they were refused instead of silently reading as anonymous.
 */
export async function viewerFrom(header: string | undefined, verify: TokenVerifier): Promise<Viewer | null> {
  if (header === undefined || header === '') return null;
  // The scheme is case-insensitive (RFC 7235); the token itself is base64url segments.
  const match = /^Bearer ([A-Za-z0-9_.-]+)$/i.exec(header);
  if (!match?.[1] || header.length > MAX_AUTHORIZATION_LENGTH) {
    throw new UnauthenticatedError('The Authorization header must be "Bearer <token>"', 401);
  }
  try {
    return await verify(match[1]);
  } catch (error) {
    if (error instanceof InvalidTokenError) throw new UnauthenticatedError(error.message, 401);
    throw error;
  }
}

export function createContext(
  data: DataSources,
  requestId: string,
  log: Logger,
  viewer: Viewer | null,
  events: EventFanOut,
  parent?: TraceParent,
  {
    traced = true,
    recordReads = true,
  }: {
    traced?: boolean;
    /**
     * Whether the answer may be stored or public, so that what it read is recorded (`reads`);
     * without, `reads` is NOT_RECORDED (uncacheable) and the reads cost no tags.
     */
    recordReads?: boolean;
  } = {},
): GraphQLContext {
  const cost = newRequestCost();
  // Traced: the operation span, found from the cost record by every DynamoDB call (telemetry/).
  // A replayed execution (the differential executor's oracle) is not traced: it sends nothing.
  const trace = traced ? startRequestTrace(cost, parent) : undefined;
  const ids = trace?.span.spanContext();
  const reads = recordReads ? newDependencyRecord() : NOT_RECORDED;
  const counted: DataSources = {
    ...data,
    dynamo: { client: data.dynamo.client, doc: costed(data.dynamo.doc, cost, recordReads ? reads : undefined) },
  };
  // Made on first use, each loader and access rule: an operation pays for those it reads through.
  const loaders = new Loaders(counted);
  return {
    requestId,
    viewer,
    cost,
    reads,
    wrote: new WriteRecord(),
    access: new Access(viewer, loaders),
    loaders,
    data: counted,
    events,
    log: log.child({
      requestId,
      ...(viewer ? { viewer: viewer.userId } : {}),
      ...(ids ? { trace_id: ids.traceId, span_id: ids.spanId } : {}),
    }),
  };
}
