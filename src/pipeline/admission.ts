/**
 * Admission: the one gate every GraphQL operation passes before anything runs, whichever
 * transport brought it. Three stages, each written once:
 *
 * 1. `source`: the document's text, from the request or the trusted documents (the server's
 *    manifest and the registry's, trustedDocuments.ts); PERSISTED_ONLY refuses anything else
 *    here, before parsing.
 * 2. `document` (documentStage.ts): parsing with the token limit, the selection pre-check,
 *    validation with graphql-js's rules, the armor limits (depth, aliases, directives) and, where
 *    introspection is off, the rule that refuses `__schema`/`__type`; admitted and refused
 *    documents are remembered by the sha256 of their text.
 * 3. `operation`: the operation to run, a subscription only over a streaming transport
 *    (WebSocket, SSE), and the list-aware cost limit (which needs the variables).
 *
 * `admit` runs all three (the WebSocket and SSE transports, which have no GraphQL server of
 * their own). Apollo Server (HTTP, Lambda) runs stages 2 and 3 through the admission plugin of
 * `createApollo` (apollo.ts): its documentStore is the cache of stage 2, so Apollo executes only
 * documents this module parsed and validated. A refusal is a list of coded GraphQL errors and
 * the HTTP status that goes with it; no stage ever throws at its caller.
 */
import { getOperationAST, GraphQLError, OperationTypeNode } from 'graphql';
import type { DocumentNode, GraphQLSchema, OperationDefinitionNode } from 'graphql';
import type { QueryLimits } from '../config/index.js';
import { ErrorCode } from '../errors.js';
import { createDocumentStage, sha256 } from './documentStage.js';
import { queryCost } from './queryCost.js';
import type { DocumentLookup } from './trustedDocuments.js';

export { PARSE_FAILED, sha256, VALIDATION_FAILED } from './documentStage.js';

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
  operationName?: string | null | undefined;
  variables?: Readonly<Record<string, unknown>> | null | undefined;
  /** The HTTP method that carried it (a GET never runs a mutation); unset over WebSocket. */
  method?: string | undefined;
}

export interface Refusal {
  ok: false;
  errors: GraphQLError[];
  /** The HTTP status of the refusal (WebSocket and Lambda clients see the same codes). */
  status: number;
}

export interface AdmittedOperation {
  ok: true;
  document: DocumentNode;
  operation: OperationDefinitionNode;
  operationName: string | null;
  variables: Record<string, unknown>;
  cost: number;
}

export interface AdmissionOptions {
  schema: GraphQLSchema;
  limits: QueryLimits;
  introspection: boolean;
  persistedOnly: boolean;
  /** The trusted documents (the server's manifest and the registry's), by id. */
  documents: DocumentLookup;
}

export type Admission = ReturnType<typeof createAdmission>;

const SHA256_HEX = /^[0-9a-f]{64}$/;

const refuse = (status: number, ...errors: GraphQLError[]): Refusal => ({ ok: false, errors, status });

const refusal = (message: string, code: string, extensions: Record<string, unknown> = {}): GraphQLError =>
  new GraphQLError(message, { extensions: { ...extensions, code, http: { status: 400 } } });

export function createAdmission({ schema, limits, introspection, persistedOnly, documents }: AdmissionOptions) {
  const stage = createDocumentStage({ schema, limits, introspection, documents });
  const { document } = stage;
  /**
   * PERSISTED_ONLY: only manifest documents, sent by hash or in full. Null when the request may
   * go on. Apollo's transports call this alone (Apollo resolves hashes itself, APQ included).
   */
  function persistedOnlyCheck(request: OperationRequest): Refusal | null {
    if (!persistedOnly) return null;
    const { query, persistedHash } = request;
    const allowed =
      typeof query === 'string' && query !== ''
        ? documents.has(sha256(query))
        : typeof persistedHash === 'string' && documents.has(persistedHash);
    return allowed ? null : persistedRequired();
  }

  function source(request: OperationRequest): { ok: true; source: string; hash: string } | Refusal {
    const refused = persistedOnlyCheck(request);
    if (refused) return refused;
    const { query, persistedHash } = request;
    if (typeof query === 'string' && query !== '') {
      const hash = sha256(query);
      if (typeof persistedHash === 'string' && persistedHash !== hash) {
        return refuse(400, refusal('provided sha does not match query', 'BAD_REQUEST'));
      }
      return { ok: true, source: query, hash };
    }
    if (typeof persistedHash === 'string') {
      const known = documents.get(persistedHash);
      // A Relay id is not the sha256 the admitted-documents cache is keyed by.
      if (known !== undefined)
        return { ok: true, source: known, hash: SHA256_HEX.test(persistedHash) ? persistedHash : sha256(known) };
      return refuse(400, refusal('PersistedQueryNotFound', 'PERSISTED_QUERY_NOT_FOUND'));
    }
    return refuse(
      400,
      refusal('The request must contain a non-empty `query` or a `persistedQuery` extension', 'BAD_REQUEST'),
    );
  }

  function operation(
    admittedDocument: DocumentNode,
    request: Pick<OperationRequest, 'operationName' | 'variables' | 'method'>,
    transport: Transport,
  ): AdmittedOperation | Refusal {
    const operationName = request.operationName ?? null;
    const found = getOperationAST(admittedDocument, operationName);
    if (!found) {
      const message = operationName
        ? `Unknown operation named "${operationName}".`
        : 'Must provide operation name if query contains multiple operations.';
      return refuse(400, refusal(message, 'OPERATION_RESOLUTION_FAILURE'));
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
    // A GET is a read a browser, a crawler or a prefetching proxy may send on its own: it may run
    // a query, or open a subscription (EventSource only sends GET), never a mutation.
    if (found.operation === OperationTypeNode.MUTATION && request.method?.toUpperCase() === 'GET') {
      return refuse(
        405,
        new GraphQLError('A GET request never runs a mutation: send it with POST', {
          extensions: { code: 'BAD_REQUEST', http: { status: 405 } },
        }),
      );
    }
    const variables = { ...(request.variables ?? {}) };
    let cost: number;
    try {
      cost = queryCost(schema, admittedDocument, variables, found.name?.value ?? operationName ?? undefined);
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
      document: admittedDocument,
      operation: found,
      operationName: found.name?.value ?? operationName,
      variables,
      cost,
    };
  }

  /** All three stages: what a transport without a GraphQL server of its own calls. */
  async function admit(request: OperationRequest, transport: Transport): Promise<AdmittedOperation | Refusal> {
    const text = source(request);
    if (!text.ok) return text;
    const parsed = await document(text.source, text.hash);
    if (!parsed.ok) return parsed;
    return operation(parsed.document, request, transport);
  }

  return {
    admit,
    persistedOnlyCheck,
    source,
    document,
    operation,
    parseOptions: stage.parseOptions,
    validationRules: stage.validationRules,
    stats: stage.stats,
    /** The sha256 of an admitted document, and whether it is one of the manifest's. */
    describe: stage.describe,
    /** Read-only for Apollo: only the document stage adds documents. */
    documentStore: stage.documentStore,
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
