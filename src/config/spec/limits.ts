import type { VarSpec } from './varSpec.js';

/** Query limits and operation budgets (docs/security.md): what one document may ask and one operation may spend. */
export const LIMITS_SPEC = {
  MAX_QUERY_DEPTH: {
    type: 'integer',
    default: '12',
    description: 'deepest selection a document may have',
    readBy: ['server', 'graphql-lambda', 'scripts'],
  },
  MAX_QUERY_ALIASES: {
    type: 'integer',
    default: '15',
    description: 'most aliases in one document',
    readBy: ['server', 'graphql-lambda', 'scripts'],
  },
  MAX_QUERY_DIRECTIVES: {
    type: 'integer',
    default: '10',
    description: 'most directives in one document',
    readBy: ['server', 'graphql-lambda', 'scripts'],
  },
  MAX_QUERY_TOKENS: {
    type: 'integer',
    default: '2000',
    description: 'most lexical tokens in one document (checked before parsing completes)',
    readBy: ['server', 'graphql-lambda', 'scripts'],
  },
  MAX_SELECTION_SET_FIELDS: {
    type: 'integer',
    default: '100',
    description:
      'most fields in one selection set, its fragments merged in (checked before validation; trusted documents are exempt)',
    readBy: ['server', 'graphql-lambda', 'scripts'],
  },
  MAX_REPEATED_FIELD_PAIRS: {
    type: 'integer',
    default: '100',
    description:
      'most pairs of fields that share a response key within a selection set, summed over the document: the comparisons validation makes (checked before validation; trusted documents are exempt)',
    readBy: ['server', 'graphql-lambda', 'scripts'],
  },
  MAX_SELECTIONS: {
    type: 'integer',
    default: '1000',
    description:
      'most selections in one document, a fragment counted wherever it is spread (checked before validation; trusted documents are exempt)',
    readBy: ['server', 'graphql-lambda', 'scripts'],
  },
  MAX_QUERY_COST: {
    type: 'integer',
    default: '5000',
    description: 'largest estimated cost: connection sizes multiply their selections',
    readBy: ['server', 'graphql-lambda', 'scripts'],
  },
  MAX_BODY_BYTES: {
    type: 'integer',
    default: '100000',
    description: 'largest request body, in bytes (413 above it)',
    readBy: ['server', 'graphql-lambda', 'scripts'],
  },
  MAX_RESPONSE_BYTES: {
    type: 'integer',
    default: '4000000',
    description:
      'largest answer, in bytes: the operation meter stops an answer whose estimated bytes pass it while it is built (`BUDGET_EXCEEDED`), and a finished answer larger than this is refused instead of sent',
    readBy: ['server', 'graphql-lambda', 'scripts'],
  },
  MAX_OPERATION_REQUESTS: {
    type: 'integer',
    default: '100',
    description: 'most DynamoDB requests one operation (or one subscription event) may make',
    readBy: ['server', 'graphql-lambda', 'scripts'],
  },
  MAX_OPERATION_READ_UNITS: {
    type: 'integer',
    default: '1000',
    description: 'most read capacity units one operation may consume',
    readBy: ['server', 'graphql-lambda', 'scripts'],
  },
  MAX_RESULT_ENTRIES: {
    type: 'integer',
    default: '10000',
    description:
      'most entries (fields and list elements, `__typename` included) one answer may hold; counted before they are built',
    readBy: ['server', 'graphql-lambda', 'scripts'],
  },
  SUBSCRIBE_READS_PER_VIEWER: {
    type: 'integer',
    default: '50',
    description:
      'DynamoDB reads one viewer’s subscriptions may make while opening, per `SUBSCRIBE_READ_WINDOW_MS` (a token bucket; more: `RATE_LIMITED`)',
    readBy: ['server', 'graphql-lambda', 'scripts'],
  },
  SUBSCRIBE_READS_PER_INSTANCE: {
    type: 'integer',
    default: '1000',
    description:
      'DynamoDB reads all subscriptions opening on one server may make, per `SUBSCRIBE_READ_WINDOW_MS` (a token bucket; more: `RATE_LIMITED`)',
    readBy: ['server', 'graphql-lambda', 'scripts'],
  },
  SUBSCRIBE_READ_WINDOW_MS: {
    type: 'integer',
    default: '10000',
    description: 'the window of the subscribe-read budgets: an empty bucket refills completely over it',
    readBy: ['server', 'graphql-lambda', 'scripts'],
  },
} as const satisfies Record<string, VarSpec>;
