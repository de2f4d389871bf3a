/**
 * Admission: the one gate every GraphQL operation passes before anything runs, whichever
 * transport brought it. Its stages, each written once, hand their results forward:
 *
 * 1. `source`: the document's text and its sha256, from the request or the trusted documents
 *    (the server's manifest and the registry's, trustedDocuments.ts) or a document registered
 *    the automatic-persisted-queries way; PERSISTED_ONLY refuses anything but a trusted
 *    document here, before parsing.
 * 2. `document` (documentStage.ts): parsing with the token limit, the selection pre-check,
 *    validation with graphql-js's rules, the armor limits (depth, aliases, directives) and, where
 *    introspection is off, the rule that refuses `__schema`/`__type`; admitted and refused
 *    documents are remembered by the sha256 the source stage computed.
 * 3. CSRF prevention (csrf.ts), for the transports a browser can be made to send (HTTP, SSE):
 *    a request a page on another site could send without a preflight runs only when its
 *    admitted document shows that it only reads.
 * 4. `operation`: the operation to run (the one `getOperationAST` of the request), a
 *    subscription only over a streaming transport (WebSocket, SSE), no mutation over GET, and
 *    the list-aware cost limit (which needs the variables).
 *
 * `admit` runs them in that order and answers an `AdmittedOperation`: every later stage takes
 * its document, operation, hash, variables and cost from there and works none of them out
 * again. A refusal is a list of coded GraphQL errors (the HTTP status and headers in their
 * `extensions.http`, as Apollo Server reads them) and the status; no stage throws at its caller.
 */
import { getOperationAST, GraphQLError, OperationTypeNode } from 'graphql';
import type { GraphQLSchema, OperationDefinitionNode } from 'graphql';
import { LRUCache } from 'lru-cache';
import type { QueryLimits } from '../../config/index.js';
import { ErrorCode } from '../../errors.js';
import { csrfRefusal, isSimpleRequest, readsOnly } from './csrf.js';
import type { RequestHeader } from './csrf.js';
import { createDocumentStage, sha256 } from './documentStage.js';
import type { AdmittedDocument } from './documentStage.js';
import { queryCost } from './queryCost.js';
import type { DocumentLookup } from '../documents/trustedDocuments.js';

export { PARSE_FAILED, sha256, VALIDATION_FAILED } from './documentStage.js';
export type { AdmittedDocument } from './documentStage.js';

/** Where an operation came from; only the streaming ones (`ws`, `sse`) may carry subscriptions. */
export type Transport = 'http' | 'ws' | 'sse' | 'lambda';

/** An operation as a transport received it (the GraphQL-over-HTTP request fields). */
export interface OperationRequest {
  query?: string | null | undefined;
  /**
   * The id of a document sent without its text: `extensions.persistedQuery.sha256Hash`,
   * GraphQL-over-HTTP's `documentId` (`sha256:` stripped) or Relay's `doc_id`.
   */
  persistedHash?: string | null | undefined;
  /** `extensions.persistedQuery.version` when the request carries that extension (only 1 exists). */
  persistedVersion?: unknown;
  operationName?: string | null | undefined;
  variables?: Readonly<Record<string, unknown>> | null | undefined;
  /** The HTTP method that carried it (a GET never runs a mutation); unset over WebSocket. */
  method?: string | undefined;
  /** `extensions.cache: true`: the request asks for `extensions.cache` (answered in development only). */
  explain?: boolean | undefined;
}

export interface Refusal {
  ok: false;
  errors: GraphQLError[];
  /** The HTTP status of the refusal (WebSocket and Lambda clients see the same codes). */
  status: number;
}

/** What admission hands forward: each part worked out once, here. */
export interface AdmittedOperation {
  ok: true;
  document: AdmittedDocument;
  operation: OperationDefinitionNode;
  operationName: string | null;
  variables: Record<string, unknown>;
  /** The list-aware cost estimate (queryCost.ts), already held to the cost limit. */
  cost: number;
  /** One of the trusted documents (the manifest's or the registry's): the metric label and span name may use its name. */
  trusted: boolean;
}

/** What the HTTP transports tell admission of a request for CSRF prevention (csrf.ts). */
export interface RequestOrigin {
  method: string;
  header: RequestHeader;
}

export interface AdmissionOptions {
  schema: GraphQLSchema;
  limits: QueryLimits;
  introspection: boolean;
  persistedOnly: boolean;
  /** The trusted documents (the server's manifest and the registry's), by id. */
  documents: DocumentLookup & { ensure?(id: string): Promise<void> };
}

export type Admission = ReturnType<typeof createAdmission>;

/**
 * Documents registered the automatic-persisted-queries way (hash and text once, then the hash
 * alone), at most this many bytes of text: a client that registers more only sends its texts again.
 */
const REGISTERED_MAX_BYTES = 8 * 2 ** 20;

/**
 * The sha256 of texts sent lately, by text, at most this many bytes of text: an app sends the same
 * few documents over and over, and looking a text up costs a fraction of hashing it again.
 */
const HASHED_MAX_BYTES = 4 * 2 ** 20;

const refuse = (status: number, ...errors: GraphQLError[]): Refusal => ({ ok: false, errors, status });

const refusal = (message: string, code: string, extensions: Record<string, unknown> = {}): GraphQLError =>
  new GraphQLError(message, { extensions: { ...extensions, code, http: { status: 400 } } });

/** Apollo Server's answer to an unknown hash: 200, so that the client sends the text next. */
const persistedQueryNotFound = (): Refusal =>
  refuse(
    200,
    new GraphQLError('PersistedQueryNotFound', {
      extensions: {
        code: 'PERSISTED_QUERY_NOT_FOUND',
        http: { status: 200, headers: new Map([['cache-control', 'private, no-cache, must-revalidate']]) },
      },
    }),
  );

interface Source {
  ok: true;
  text: string;
  hash: string;
  /** Sent with its text and hash: registered once admitted (automatic persisted queries). */
  register: boolean;
}

export function createAdmission({ schema, limits, introspection, persistedOnly, documents }: AdmissionOptions) {
  const stage = createDocumentStage({ schema, limits, introspection, documents });
  const hashed = new LRUCache<string, string>({
    maxSize: HASHED_MAX_BYTES,
    sizeCalculation: (_hash, text) => text.length + 64,
  });
  /** The sha256 of a request's text, hashed once per text (a pure function of it). */
  const hashOf = (text: string): string => {
    let hash = hashed.get(text);
    if (hash === undefined) {
      hash = sha256(text);
      hashed.set(text, hash);
    }
    return hash;
  };
  const registered = new LRUCache<string, string>({
    maxSize: REGISTERED_MAX_BYTES,
    sizeCalculation: (text) => Math.max(1, text.length),
  });

  /**
   * PERSISTED_ONLY: only trusted documents, sent by id or in full. Null when the request may go
   * on.
   */
  function persistedOnlyCheck(request: OperationRequest): Refusal | null {
    if (!persistedOnly) return null;
    const { query, persistedHash } = request;
    const allowed =
      typeof query === 'string' && query !== ''
        ? documents.has(hashOf(query))
        : typeof persistedHash === 'string' && documents.has(persistedHash);
    return allowed ? null : persistedRequired();
  }

  /**
   * The document's text and its sha256: the request's text (hashed here, once), or the text of the
   * trusted or registered document its id names. A trusted document whose text is not at hand
   * (the Lambda reads the registry's index) is read first; 503 when the registry cannot be read.
   */
  async function source(request: OperationRequest): Promise<Source | Refusal> {
    const { query, persistedHash, persistedVersion } = request;
    if (persistedVersion !== undefined && persistedVersion !== 1) {
      return refuse(400, refusal('Unsupported persisted query version', 'BAD_REQUEST'));
    }
    if (typeof query === 'string' && query !== '') {
      const hash = hashOf(query);
      if (typeof persistedHash === 'string' && (documents.sha256Of?.(persistedHash) ?? persistedHash) !== hash) {
        return refuse(400, refusal('provided sha does not match query', 'BAD_REQUEST'));
      }
      return { ok: true, text: query, hash, register: typeof persistedHash === 'string' && !persistedOnly };
    }
    if (typeof persistedHash !== 'string') {
      return refuse(
        400,
        refusal('The request must contain a non-empty `query` or a `persistedQuery` extension', 'BAD_REQUEST'),
      );
    }
    if (documents.ensure) {
      try {
        await documents.ensure(persistedHash);
      } catch {
        return refuse(
          503,
          new GraphQLError('The trusted documents cannot be read right now; try again shortly', {
            extensions: { code: ErrorCode.SERVICE_UNAVAILABLE, http: { status: 503 } },
          }),
        );
      }
    }
    const trusted = documents.get(persistedHash);
    if (trusted !== undefined) {
      // A client's own id (Relay's md5) names the text; the admitted documents are kept by its sha256.
      return { ok: true, text: trusted, hash: documents.sha256Of?.(persistedHash) ?? persistedHash, register: false };
    }
    const known = persistedOnly ? undefined : registered.get(persistedHash);
    return known === undefined
      ? persistedQueryNotFound()
      : { ok: true, text: known, hash: persistedHash, register: false };
  }

  function operation(
    admitted: AdmittedDocument,
    found: OperationDefinitionNode | null,
    request: Pick<OperationRequest, 'operationName' | 'variables' | 'method'>,
    transport: Transport,
  ): AdmittedOperation | Refusal {
    const operationName = request.operationName ?? null;
    if (!found) {
      const message = operationName
        ? `Unknown operation named "${operationName}".`
        : 'Must provide operation name if query contains multiple operations.';
      return refuse(400, refusal(message, 'OPERATION_RESOLUTION_FAILURE'));
    }
    // A GET is a read a browser, a crawler or a prefetching proxy may send on its own: it may run
    // a query, or open a subscription (EventSource only sends GET), never a mutation.
    if (found.operation === OperationTypeNode.MUTATION && request.method?.toUpperCase() === 'GET') {
      return refuse(
        405,
        new GraphQLError('A GET request never runs a mutation: send it with POST', {
          extensions: { code: 'BAD_REQUEST', http: { status: 405, headers: new Map([['allow', 'POST']]) } },
        }),
      );
    }
    if (found.operation === OperationTypeNode.SUBSCRIPTION && transport !== 'ws' && transport !== 'sse') {
      return refuse(
        400,
        refusal(
          'Subscriptions are served over WebSocket (graphql-ws protocol on this URL) or Server-Sent Events (graphql-sse at /graphql/stream)',
          'BAD_REQUEST',
        ),
      );
    }
    const variables = { ...(request.variables ?? {}) };
    let cost: number;
    try {
      cost = queryCost(schema, admitted.document, variables, found.name?.value ?? operationName ?? undefined);
    } catch (error) {
      return refuse(400, costFailure(error, limits.maxCost));
    }
    if (cost > limits.maxCost) {
      return refuse(
        400,
        refusal(
          `The query's estimated cost ${cost} exceeds the limit of ${limits.maxCost}: ask for smaller pages or fewer nested connections`,
          ErrorCode.QUERY_TOO_COMPLEX,
          { cost, maxCost: limits.maxCost },
        ),
      );
    }
    return {
      ok: true,
      document: admitted,
      operation: found,
      operationName: found.name?.value ?? operationName,
      variables,
      cost,
      trusted: documents.has(admitted.hash),
    };
  }

  /**
   * CSRF prevention's first half, which needs no document: a simple request other than a GET is
   * refused before anything of it is read as GraphQL. Null when the request may go on.
   */
  function preflight(origin: RequestOrigin): Refusal | null {
    return isSimpleRequest(origin.header) && origin.method.toUpperCase() !== 'GET' ? csrfRefusal() : null;
  }

  /**
   * What admission answers a request that is not one operation (a batch, a body of the wrong
   * shape), before Apollo Server words its refusal: CSRF prevention's, then PERSISTED_ONLY's,
   * which refuses anything but a trusted document. Null: Apollo Server answers it.
   */
  function unreadable(origin: RequestOrigin): Refusal | null {
    return preflight(origin) ?? (persistedOnly ? persistedRequired() : null);
  }

  /**
   * Every stage, in order. `origin` (HTTP and SSE) turns CSRF prevention on: a simple request
   * (one a browser sends cross-site without a preflight) other than a GET is refused before
   * anything else, and a simple GET must show, by its admitted document, that it only reads; a
   * GET that cannot show it (no document, one that does not parse) gets the CSRF refusal, as if
   * its document had been read first.
   */
  async function admit(
    request: OperationRequest,
    transport: Transport,
    origin?: RequestOrigin,
  ): Promise<AdmittedOperation | Refusal> {
    const early = origin && preflight(origin);
    if (early) return early;
    const simple = origin !== undefined && isSimpleRequest(origin.header);
    if (!simple) {
      const locked = persistedOnlyCheck(request);
      if (locked) return locked;
    }
    const text = await source(request);
    if (!text.ok) return simple ? csrfRefusal() : text;
    const parsed = stage.document(text.text, text.hash);
    if (!parsed.ok) return simple ? csrfRefusal() : parsed;
    const found = getOperationAST(parsed.admitted.document, request.operationName ?? undefined) ?? null;
    if (simple) {
      if (!readsOnly(origin.header, documents.has(text.hash), found?.operation)) return csrfRefusal();
      const locked = persistedOnlyCheck(request);
      if (locked) return locked;
    }
    const admitted = operation(parsed.admitted, found, request, transport);
    if (admitted.ok && text.register && !documents.has(text.hash)) registered.set(text.hash, text.text);
    return admitted;
  }

  return {
    admit,
    unreadable,
    /** The document stage alone (`npm run documents -- check` runs it over a manifest). */
    document: stage.document,
    parseOptions: stage.parseOptions,
    stats: stage.stats,
  };
}

function persistedRequired(): Refusal {
  return refuse(
    400,
    refusal(
      'This server only runs trusted documents: send the documentId (or extensions.persistedQuery.sha256Hash) of a published document',
      ErrorCode.PERSISTED_QUERY_REQUIRED,
    ),
  );
}

/**
 * getComplexity fails on what execution would refuse anyway (variables of the wrong type) and
 * on documents too large to walk: both are the client's doing, so answer 400, not 500.
 */
function costFailure(error: unknown, maxCost: number): GraphQLError {
  const message = error instanceof Error ? error.message : String(error);
  if (/maximum allowed number of nodes/i.test(message)) {
    return refusal(
      `The query is too large to estimate (limit ${maxCost}): ask for fewer fields`,
      ErrorCode.QUERY_TOO_COMPLEX,
      {
        maxCost,
      },
    );
  }
  // Variable coercion messages name only the variable and the expected type.
  return refusal(message, ErrorCode.BAD_USER_INPUT);
}
