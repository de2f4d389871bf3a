/**
 * Admission: the one gate every GraphQL operation passes before anything runs, whichever
 * transport brought it. Its stages, each written once, hand their results forward:
 *
 * 1. `source` (sourceStage.ts): the document's text and its sha256, from the request or the
 *    trusted documents (the server's manifest and the registry's, trustedDocuments.ts) or a
 *    document registered the automatic-persisted-queries way; PERSISTED_ONLY refuses anything
 *    but a trusted document here, before parsing.
 * 2. `document` (documentStage.ts): parsing with the token limit, the selection pre-check,
 *    validation with graphql-js's rules, the armor limits (depth, aliases, directives) and, where
 *    introspection is off, the rule that refuses `__schema`/`__type`; admitted and refused
 *    documents are remembered by the sha256 the source stage computed.
 * 3. CSRF prevention (csrf.ts), for the transports a browser can be made to send (HTTP, SSE):
 *    a request a page on another site could send without a preflight runs only when its
 *    admitted document shows that it only reads.
 * 4. `operation` (operationStage.ts): the operation to run (the one `getOperationAST` of the
 *    request), a subscription only over a streaming transport (WebSocket, SSE), no mutation over
 *    GET, and the list-aware cost limit (which needs the variables).
 *
 * `admit` runs them in that order and answers an `AdmittedOperation`: every later stage takes
 * its document, operation, hash, variables and cost from there and works none of them out
 * again. A refusal is a list of coded GraphQL errors (the HTTP status and headers in their
 * `extensions.http`, as Apollo Server reads them) and the status (refusal.ts); no stage throws at
 * its caller.
 */
import { getOperationAST } from 'graphql';
import type { GraphQLSchema, OperationDefinitionNode } from 'graphql';
import type { QueryLimits } from '../../config/index.js';
import { csrfRefusal, isSimpleRequest, readsOnly } from './csrf.js';
import type { RequestHeader } from './csrf.js';
import { createDocumentStage } from './documentStage.js';
import type { AdmittedDocument } from './documentStage.js';
import { createOperationStage } from './operationStage.js';
import type { Refusal } from './refusal.js';
import { createSourceStage, persistedRequired } from './sourceStage.js';
import type { AdmissionDocuments } from './sourceStage.js';

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
  documents: AdmissionDocuments;
}

export type Admission = ReturnType<typeof createAdmission>;

export function createAdmission({ schema, limits, introspection, persistedOnly, documents }: AdmissionOptions) {
  const stage = createDocumentStage({ schema, limits, introspection, documents });
  const sources = createSourceStage({ persistedOnly, documents });
  const operation = createOperationStage({ schema, limits, documents });

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
      const locked = sources.persistedOnlyCheck(request);
      if (locked) return locked;
    }
    const text = await sources.source(request);
    if (!text.ok) return simple ? csrfRefusal() : text;
    const parsed = stage.document(text.text, text.hash);
    if (!parsed.ok) return simple ? csrfRefusal() : parsed;
    const found = getOperationAST(parsed.admitted.document, request.operationName ?? undefined) ?? null;
    if (simple) {
      if (!readsOnly(origin.header, documents.has(text.hash), found?.operation)) return csrfRefusal();
      const locked = sources.persistedOnlyCheck(request);
      if (locked) return locked;
    }
    const admitted = operation(parsed.admitted, found, request, transport);
    if (admitted.ok) sources.register(text);
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
