/**
 * Admission's document stage: a document's text becomes a parsed and validated document, or a
 * refusal, once per text. In order: parsing with the token limit; the selection pre-check
 * (selectionShape.ts: fields per selection set, repeated response keys, selections in all;
 * trusted documents are exempt); then validation with graphql-js's rules, the armor limits
 * (depth, aliases, directives) and, where introspection is off, the rule that refuses
 * `__schema`/`__type`. Admitted documents are cached by the sha256 of their text (Apollo's
 * documentStore too), and so are refusals (refusedDocuments.ts): a copy of either costs a hash.
 */
import { createHash } from 'node:crypto';
import { InMemoryLRUCache } from '@apollo/utils.keyvaluecache';
import { ApolloArmor } from '@escape.tech/graphql-armor';
import { GraphQLError, parse, specifiedRules, validate } from 'graphql';
import type { DocumentNode, GraphQLSchema, ParseOptions, ValidationRule } from 'graphql';
import type { QueryLimits } from '../config/index.js';
import { createRefusedDocuments } from './refusedDocuments.js';
import type { DocumentRefusal } from './refusedDocuments.js';
import { selectionExcess } from './selectionShape.js';
import type { SelectionBounds, SelectionExcess } from './selectionShape.js';
import type { DocumentLookup } from './trustedDocuments.js';

/** The error code Apollo Server gives to parse and validation failures; every transport uses it. */
export const PARSE_FAILED = 'GRAPHQL_PARSE_FAILED';
export const VALIDATION_FAILED = 'GRAPHQL_VALIDATION_FAILED';

export const sha256 = (text: string): string => createHash('sha256').update(text).digest('hex');

export interface DocumentStageOptions {
  schema: GraphQLSchema;
  limits: QueryLimits;
  introspection: boolean;
  /** The trusted documents, exempt from the selection pre-check. */
  documents: DocumentLookup;
}

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

const refuse = (status: number, ...errors: GraphQLError[]): DocumentRefusal => ({ ok: false, errors, status });

export function createDocumentStage({ schema, limits, introspection, documents }: DocumentStageOptions) {
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
  // Documents that passed this stage, by sha256 of their text: Apollo's documentStore too.
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
  const remember = (hash: string, refusal: DocumentRefusal, bySelections = false): DocumentRefusal => {
    refused.remember(hash, refusal, bySelections);
    return refusal;
  };
  const selectionBounds: SelectionBounds = {
    maxFieldsPerSet: limits.maxSelectionSetFields,
    maxRepeatedPairs: limits.maxRepeatedFieldPairs,
    maxSelections: limits.maxSelections,
  };

  async function document(
    text: string,
    hash = sha256(text),
  ): Promise<{ ok: true; document: DocumentNode } | DocumentRefusal> {
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

  return {
    document,
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
  return new GraphQLError(message, {
    extensions: { limit: setting, maximum: limit, code: VALIDATION_FAILED, http: { status: 400 } },
  });
}
