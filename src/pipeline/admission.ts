/**
 * Admission: the one gate every GraphQL operation passes before anything runs, whichever
 * transport brought it. Three stages, each written once:
 *
 * 1. `source`: the document's text, from the request or the persisted-documents manifest;
 *    PERSISTED_ONLY refuses anything outside the manifest here, before parsing.
 * 2. `document`: parsing with the token limit, the selection pre-check (selectionShape.ts: fields
 *    per selection set, repeated response keys, selections in all; trusted documents are exempt),
 *    then validation with graphql-js's rules, the armor limits (depth, aliases, directives) and,
 *    where introspection is off, the rule that refuses `__schema`/`__type`. Admitted documents
 *    are cached by their sha256, and so are refused ones (refusedDocuments.ts).
 * 3. `operation`: the operation to run, a subscription only over WebSocket, and the
 *    connection-aware cost limit (which needs the variables).
 *
 * `admit` runs all three (graphql-ws and any other transport without a GraphQL server of its
 * own). Apollo Server (HTTP, Lambda) runs them through `apolloAdmission` (apollo.ts): its
 * documentStore is the cache of stage 2, so Apollo executes only documents this module
 * parsed and validated. A refusal is a list of coded GraphQL errors and the HTTP status that
 * goes with it; no stage ever throws at its caller.
 */
import { createHash } from 'node:crypto';
import { InMemoryLRUCache } from '@apollo/utils.keyvaluecache';
import { ApolloArmor } from '@escape.tech/graphql-armor';
import { getOperationAST, GraphQLError, OperationTypeNode, parse, specifiedRules, validate } from 'graphql';
import type { DocumentNode, GraphQLSchema, OperationDefinitionNode, ParseOptions, ValidationRule } from 'graphql';
import type { QueryLimits } from '../config/index.js';
import { ErrorCode } from '../errors.js';
import { queryCost } from './queryCost.js';
import { createRefusedDocuments } from './refusedDocuments.js';
import { selectionExcess } from './selectionShape.js';
import type { SelectionBounds, SelectionExcess } from './selectionShape.js';
import type { DocumentLookup } from './trustedDocuments.js';

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

/** The error code Apollo Server gives to parse and validation failures; every transport uses it. */
export const PARSE_FAILED = 'GRAPHQL_PARSE_FAILED';
export const VALIDATION_FAILED = 'GRAPHQL_VALIDATION_FAILED';

const SHA256_HEX = /^[0-9a-f]{64}$/;
export const sha256 = (text: string): string => createHash('sha256').update(text).digest('hex');

/** Re-codes an error of graphql-js, keeping its locations, for a 400 answer. */
const coded = (error: GraphQLError, code: string, extra: Record<string, unknown> = {}): GraphQLError =>
  new GraphQLError(error.message, {
    nodes: error.nodes,
    source: error.source,
    positions: error.positions,
    originalError: error.originalError,
    extensions: { ...error.extensions, ...extra, code, http: { status: 400 } },
  });

/**
 * Where introspection is off: refuses `__schema` and `__type` (graphql-js's own rule would
 * also flag every field below them, one error each).
 */
const NoIntrospection: ValidationRule = (context) => ({
  Field(node) {
    if (node.name.value === '__schema' || node.name.value === '__type') {
      context.reportError(
        new GraphQLError('GraphQL introspection is not allowed, but the query contained __schema or __type', {
          nodes: [node],
        }),
      );
    }
  },
});

const refuse = (status: number, ...errors: GraphQLError[]): Refusal => ({ ok: false, errors, status });

const refusal = (message: string, code: string, extensions: Record<string, unknown> = {}): GraphQLError =>
  new GraphQLError(message, { extensions: { ...extensions, code, http: { status: 400 } } });

export function createAdmission({ schema, limits, introspection, persistedOnly, documents }: AdmissionOptions) {
  const parseOptions: ParseOptions = { maxTokens: limits.maxTokens };
  const armor = new ApolloArmor({
    maxDepth: { n: limits.maxDepth, flattenFragments: true },
    // Every alias counts, `__typename`'s too (armor lets those through by default): each one is
    // another entry of the answer.
    maxAliases: { n: limits.maxAliases, allowList: [] },
    maxDirectives: { n: limits.maxDirectives },
    // graphql-js enforces this itself while parsing (parseOptions).
    maxTokens: { enabled: false },
    // The connection-aware cost limit (stage 3) replaces armor's.
    costLimit: { enabled: false },
    // "Did you mean ...?" hints are removed by the one error formatter (errorMasking.ts).
    blockFieldSuggestion: { enabled: false },
  }).protect();
  /** Our rules beside graphql-js's own (Apollo adds specifiedRules itself). */
  const validationRules: ValidationRule[] = [...armor.validationRules, ...(introspection ? [] : [NoIntrospection])];
  const allRules = [...specifiedRules, ...validationRules];
  // Documents that passed stage 2, by sha256 of their text: Apollo's documentStore too.
  // The hash of each admitted document, for the operation span (operationSpans.ts).
  const hashes = new WeakMap<DocumentNode, string>();
  const admitted = new InMemoryLRUCache<DocumentNode>({
    maxSize: 2 ** 20 * 16,
    sizeCalculation: (document) => InMemoryLRUCache.sizeCalculation(document),
  });
  // ... and those that failed it, so a copy sent again costs a hash (refusedDocuments.ts).
  const refused = createRefusedDocuments();
  /** Documents parsed (and validated, unless refused earlier), and refusals answered from memory. */
  const stats = { parsed: 0, remembered: 0 };
  const remember = (hash: string, refusal: Refusal, bySelections = false): Refusal => {
    refused.remember(hash, refusal, bySelections);
    return refusal;
  };
  const selectionBounds: SelectionBounds = {
    maxFieldsPerSet: limits.maxSelectionSetFields,
    maxRepeatedPairs: limits.maxRepeatedFieldPairs,
    maxSelections: limits.maxSelections,
  };

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

  async function document(text: string, hash = sha256(text)): Promise<{ ok: true; document: DocumentNode } | Refusal> {
    const cached = await admitted.get(hash);
    if (cached) return { ok: true, document: cached };
    const trusted = documents.has(hash);
    const known = refused.get(hash, trusted);
    if (known) {
      stats.remembered += 1;
      return known;
    }
    stats.parsed += 1;
    let parsed: DocumentNode;
    try {
      parsed = parse(text, parseOptions);
    } catch (error) {
      if (!(error instanceof GraphQLError)) throw error;
      return remember(hash, refuse(400, coded(error, PARSE_FAILED)));
    }
    // Before validation, whose cost can grow with the square of the selections; the trusted
    // documents were published by someone who may write to the table, and are validated once.
    const excess = trusted ? null : selectionExcess(parsed, selectionBounds);
    if (excess) return remember(hash, refuse(400, selectionRefusal(excess)), true);
    const errors = validate(schema, parsed, allRules);
    if (errors.length > 0) {
      return remember(hash, refuse(400, ...errors.map((error) => coded(error, VALIDATION_FAILED))));
    }
    await admitted.set(hash, parsed);
    hashes.set(parsed, hash);
    return { ok: true, document: parsed };
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
    parseOptions,
    validationRules,
    stats,
    /** The sha256 of an admitted document, and whether it is one of the manifest's. */
    describe: (admittedDocument: DocumentNode): { hash: string | undefined; persisted: boolean } => {
      const hash = hashes.get(admittedDocument);
      return { hash, persisted: hash !== undefined && documents.has(hash) };
    },
    /** Read-only for Apollo: only stage 2 adds documents. */
    documentStore: {
      get: (key: string) => admitted.get(key.slice(key.lastIndexOf(':') + 1)),
      set: async () => undefined,
      delete: async () => undefined,
    },
  };
}

/** The selection pre-check's refusal: which bound, its setting and its value. */
function selectionRefusal({ bound, limit, responseKey }: SelectionExcess): GraphQLError {
  const [message, setting] =
    bound === 'maxFieldsPerSet'
      ? [
          `A selection set holds more than ${limit} fields (its fragments merged in): ask for fewer fields`,
          'MAX_SELECTION_SET_FIELDS',
        ]
      : bound === 'maxRepeatedPairs'
        ? [
            `The document asks for "${responseKey ?? ''}" too many times: more than ${limit} pairs of fields share a response key within a selection set; ask for each field once`,
            'MAX_REPEATED_FIELD_PAIRS',
          ]
        : [
            `The document holds more than ${limit} selections (a fragment counts wherever it is spread): ask for fewer fields`,
            'MAX_SELECTIONS',
          ];
  return refusal(message, VALIDATION_FAILED, { limit: setting, maximum: limit });
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
