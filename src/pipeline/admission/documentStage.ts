/**
 * Admission's document stage: a document's text becomes a parsed and validated document, or a
 * refusal, once per text. In order: parsing with the token limit; the selection pre-check
 * (selectionShape.ts: fields per selection set, repeated response keys, selections in all;
 * trusted documents are exempt); then validation with graphql-js's rules, the armor limits
 * (depth, aliases, directives) and, where introspection is off, the rule that refuses
 * `__schema`/`__type`. Admitted documents are kept by the sha256 of their text, and so are
 * refusals (refusedDocuments.ts): a copy of either costs a look-up by the hash the source stage
 * already has.
 */
import { ApolloArmor } from '@escape.tech/graphql-armor';
import { GraphQLError, parse, specifiedRules, validate } from 'graphql';
import type { DocumentNode, GraphQLSchema, ParseOptions, ValidationRule } from 'graphql';
import { LRUCache } from 'lru-cache';
import type { QueryLimits } from '../../config/index.js';
import { documentReadsOnlyPublicData } from '../schema/schemaPolicy.js';
import { createRefusedDocuments } from './refusedDocuments.js';
import type { DocumentRefusal } from './refusedDocuments.js';
import { selectionExcess } from './selectionShape.js';
import type { SelectionBounds, SelectionExcess } from './selectionShape.js';
import { sha256 } from '../documents/trustedDocuments.js';
import type { DocumentLookup } from '../documents/trustedDocuments.js';

/** The error code Apollo Server gives to parse and validation failures; every transport uses it. */
export const PARSE_FAILED = 'GRAPHQL_PARSE_FAILED';
export const VALIDATION_FAILED = 'GRAPHQL_VALIDATION_FAILED';

export { sha256 };

/**
 * A document that passed this stage, as every later stage receives it: the parsed document, the
 * sha256 of its text (the cache key's and the planned executor's), and whether it reads only
 * public data (worked out on first use, once per document: the response cache's scope).
 */
export interface AdmittedDocument {
  readonly document: DocumentNode;
  readonly hash: string;
  readonly readsOnlyPublicData: boolean;
}

/**
 * Heap bytes an admitted document is counted for: its text, and its AST by its tokens (each node
 * with its location, and the tokens the locations link: about 300-330 bytes a token, measured
 * over 4,000 parsed documents of four shapes, whatever the length of their names), and a fixed
 * part for the entry itself and what other stages keep per document. Counted by characters
 * alone (12 a character), a short document full of tokens took four to five times its count.
 */
const AST_BYTES_PER_TOKEN = 330;
const ADMITTED_OVERHEAD_BYTES = 1024;
/** Estimated bytes the admitted documents take, at most (the least recently used go first). */
export const ADMITTED_MAX_BYTES = 32 * 2 ** 20;

/** What an admitted document of `text`, parsed as `document`, is counted for. */
export function admittedBytes(text: string, document: DocumentNode): number {
  let tokens = 0;
  for (let token = document.loc?.startToken ?? null; token !== null; token = token.next) tokens += 1;
  return ADMITTED_OVERHEAD_BYTES + text.length + tokens * AST_BYTES_PER_TOKEN;
}

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
  // Documents that passed this stage, by sha256 of their text.
  const admitted = new LRUCache<string, AdmittedDocument & { bytes: number }>({
    maxSize: ADMITTED_MAX_BYTES,
    sizeCalculation: (entry) => entry.bytes,
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

  /** The admitted document of `text` (whose sha256 is `hash`), or its refusal. Never throws for a client's text. */
  function document(text: string, hash = sha256(text)): { ok: true; admitted: AdmittedDocument } | DocumentRefusal {
    const cached = admitted.get(hash);
    if (cached) return { ok: true, admitted: cached };
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
    let readsOnlyPublic: boolean | undefined;
    const entry = {
      document: parsed,
      hash,
      get readsOnlyPublicData(): boolean {
        return (readsOnlyPublic ??= documentReadsOnlyPublicData(schema, parsed));
      },
      bytes: admittedBytes(text, parsed),
    };
    admitted.set(hash, entry);
    return { ok: true, admitted: entry };
  }

  return { document, parseOptions, stats };
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
