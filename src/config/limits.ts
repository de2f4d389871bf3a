import { integer } from './read.js';
import type { Env } from './read.js';

/** Query limits and operation budgets (docs/security.md); each is a MAX_* or SUBSCRIBE_* variable. */
export interface QueryLimits {
  maxDepth: number;
  maxAliases: number;
  maxDirectives: number;
  maxTokens: number;
  /** Fields in one selection set, fragments merged in (src/pipeline/admission/selectionShape.ts). */
  maxSelectionSetFields: number;
  /** Pairs of fields sharing a response key in one selection set, summed over the document. */
  maxRepeatedFieldPairs: number;
  /** Selections in one document, each fragment counted where it is spread. */
  maxSelections: number;
  /** Estimated cost: connection sizes multiply their selections (see src/pipeline/admission/queryCost.ts). */
  maxCost: number;
  /** Largest request body, in bytes. */
  maxBodyBytes: number;
  /** Largest response, in bytes of JSON; a larger answer is replaced by RESPONSE_TOO_LARGE. */
  maxResponseBytes: number;
  /** DynamoDB requests one operation may make while it runs. */
  maxOperationRequests: number;
  /** Read capacity units one operation may consume. */
  maxOperationReadUnits: number;
  /** Entries one answer may hold, counted before they are built. */
  maxResultEntries: number;
  /** Bytes one answer may hold, estimated while it is built (MAX_RESPONSE_BYTES, as is maxResponseBytes). */
  maxResultBytes: number;
  /** Reads one viewer's subscriptions may make while opening, per window. */
  subscribeReadsPerViewer: number;
  /** Reads all subscriptions opening on this server may make, per window. */
  subscribeReadsPerInstance: number;
  /** An empty subscribe-read bucket refills completely over this. */
  subscribeReadWindowMs: number;
}

export function readLimits(env: Env): { limits: QueryLimits } {
  return {
    limits: {
      maxDepth: integer(env, 'MAX_QUERY_DEPTH'),
      maxAliases: integer(env, 'MAX_QUERY_ALIASES'),
      maxDirectives: integer(env, 'MAX_QUERY_DIRECTIVES'),
      maxTokens: integer(env, 'MAX_QUERY_TOKENS'),
      maxSelectionSetFields: integer(env, 'MAX_SELECTION_SET_FIELDS'),
      maxRepeatedFieldPairs: integer(env, 'MAX_REPEATED_FIELD_PAIRS'),
      maxSelections: integer(env, 'MAX_SELECTIONS'),
      maxCost: integer(env, 'MAX_QUERY_COST'),
      maxBodyBytes: integer(env, 'MAX_BODY_BYTES'),
      maxResponseBytes: integer(env, 'MAX_RESPONSE_BYTES'),
      maxOperationRequests: integer(env, 'MAX_OPERATION_REQUESTS'),
      maxOperationReadUnits: integer(env, 'MAX_OPERATION_READ_UNITS'),
      maxResultEntries: integer(env, 'MAX_RESULT_ENTRIES'),
      // One ceiling, checked twice: on the estimate while the answer is built, and on the finished JSON.
      maxResultBytes: integer(env, 'MAX_RESPONSE_BYTES'),
      subscribeReadsPerViewer: integer(env, 'SUBSCRIBE_READS_PER_VIEWER'),
      subscribeReadsPerInstance: integer(env, 'SUBSCRIBE_READS_PER_INSTANCE'),
      subscribeReadWindowMs: integer(env, 'SUBSCRIBE_READ_WINDOW_MS'),
    },
  };
}

/** The limits of an empty environment: the spec's defaults. */
export const DEFAULT_LIMITS: QueryLimits = readLimits({}).limits;
