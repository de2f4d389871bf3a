import type { VarSpec } from './varSpec.js';

/** The GraphQL API: what it answers, to whom, and how it executes. */
export const API_SPEC = {
  CURSOR_SECRET: {
    type: 'secret',
    defaultText: 'a fixed development value; **required** in production',
    description: 'signs page cursors (a long random string)',
    readBy: ['server', 'graphql-lambda'],
  },
  COST_DETAILS: {
    type: ['admin', 'all'],
    default: 'admin',
    description:
      'who sees capacity units in `extensions.cost.dynamodb`: admins only (others get the request count), or every caller',
    readBy: ['server', 'graphql-lambda'],
  },
  GRAPHQL_INTROSPECTION: {
    type: 'boolean',
    defaultText: '`true` outside production',
    description: 'schema introspection (and schema suggestions in validation errors)',
    readBy: ['server', 'graphql-lambda'],
  },
  PERSISTED_ONLY: {
    type: 'boolean',
    default: 'false',
    description: 'run only the documents of the persisted-documents manifest',
    readBy: ['server', 'graphql-lambda'],
  },
  DOCUMENTS_REFRESH_MS: {
    type: 'integer',
    default: '5000',
    description:
      'how often each instance looks for new or retired app manifests in the trusted-documents registry (`npm run documents`); a change is served within about this long',
    readBy: ['server', 'graphql-lambda'],
  },
  EXECUTOR: {
    type: ['auto', 'graphql-js'],
    default: 'auto',
    description:
      'what executes operations: `auto` (planned execution, breadth-first by rounds of DynamoDB reads, for queries and subscription events; graphql-js for mutations and whatever the planner leaves, counted in graphql_executor_fallbacks_total), or `graphql-js` for everything (an escape hatch)',
    readBy: ['server', 'graphql-lambda'],
  },
  COMPILED_DOCUMENTS_MAX_BYTES: {
    type: 'integer',
    default: '33554432',
    description:
      'estimated bytes the planned documents of one instance may take (32 MiB; at most 1000 documents); the least recently used go first',
    readBy: ['server', 'graphql-lambda'],
  },
  CACHE_MAX_AGE: {
    type: 'seconds',
    default: '60',
    description:
      'seconds browsers and CDNs may reuse an anonymous persisted GET that reads only public data (`Cache-Control: public`); `0`: every answer is `private, no-store`',
    readBy: ['server', 'graphql-lambda'],
  },
} as const satisfies Record<string, VarSpec>;
