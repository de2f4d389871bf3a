/**
 * HTTP caching, decided per document rather than per field: a persisted document whose every
 * field reads public data (products, categories) may be cached by browsers and CDNs when it
 * arrives as an anonymous GET; every other response is `private, no-store`. The policy of each
 * manifest document is worked out once, at start-up, so a request costs one set lookup (Apollo's
 * cache-control plugin, which this replaces, wraps every resolved field instead).
 */
import type { ApolloServerPlugin } from '@apollo/server';
import { getNamedType, OperationTypeNode, parse, TypeInfo, visit, visitWithTypeInfo } from 'graphql';
import type { DocumentNode, GraphQLSchema } from 'graphql';

/** Query fields that read only public data. */
const PUBLIC_ROOT_FIELDS: ReadonlySet<string> = new Set(['product', 'products', 'category', 'categories']);

/**
 * Types whose every field is public. A type missing here (a new one, say) makes a document
 * that reaches it private: the safe default.
 */
const PUBLIC_TYPES: ReadonlySet<string> = new Set([
  'Product',
  'ProductConnection',
  'ProductEdge',
  'Category',
  'CategoryConnection',
  'CategoryEdge',
  'PageInfo',
  'Money',
]);

export const NO_STORE = 'private, no-store';

/** True when `document` is one query that selects public fields only (no introspection). */
export function readsOnlyPublicData(schema: GraphQLSchema, document: string): boolean {
  let ast;
  try {
    ast = parse(document);
  } catch {
    return false;
  }
  return documentReadsOnlyPublicData(schema, ast);
}

/** readsOnlyPublicData of a parsed document. */
export function documentReadsOnlyPublicData(schema: GraphQLSchema, ast: DocumentNode): boolean {
  const typeInfo = new TypeInfo(schema);
  let isPublic = true;
  visit(
    ast,
    visitWithTypeInfo(typeInfo, {
      OperationDefinition(node) {
        if (node.operation !== OperationTypeNode.QUERY) isPublic = false;
      },
      Field(node) {
        const parent = typeInfo.getParentType();
        const name = node.name.value;
        if (name === '__typename') return;
        if (!parent || !typeInfo.getFieldDef()) {
          isPublic = false;
        } else if (parent.name === schema.getQueryType()?.name) {
          if (!PUBLIC_ROOT_FIELDS.has(name)) isPublic = false;
        } else if (!PUBLIC_TYPES.has(getNamedType(parent).name)) {
          isPublic = false;
        }
      },
    }),
  );
  return isPublic;
}

/** The sha256 hashes of the manifest documents that read only public data. */
export function publicDocumentHashes(schema: GraphQLSchema, documents: ReadonlyMap<string, string>): Set<string> {
  return new Set([...documents].filter(([, document]) => readsOnlyPublicData(schema, document)).map(([hash]) => hash));
}

export interface HttpCachingOptions {
  schema: GraphQLSchema;
  documents: ReadonlyMap<string, string>;
  /** Seconds a public answer may be reused; 0 makes every answer `private, no-store`. */
  maxAgeSeconds: number;
}

/**
 * Sets Cache-Control on every response: `public, max-age=N` for an anonymous GET of a public
 * persisted document that succeeded without errors, `private, no-store` for everything else.
 * (The HTTP transport adds the ETag and answers If-None-Match.)
 */
export function httpCachingPlugin({ schema, documents, maxAgeSeconds }: HttpCachingOptions): ApolloServerPlugin {
  const cacheable = maxAgeSeconds > 0 ? publicDocumentHashes(schema, documents) : new Set<string>();
  return {
    async requestDidStart() {
      return {
        async willSendResponse({ request, response, queryHash, errors }) {
          const isPublic =
            request.http?.method === 'GET' &&
            !request.http.headers.get('authorization') &&
            queryHash !== undefined &&
            cacheable.has(queryHash) &&
            !errors?.length &&
            response.body.kind === 'single' &&
            !response.body.singleResult.errors &&
            (response.http.status ?? 200) === 200;
          response.http.headers.set('cache-control', isPublic ? `public, max-age=${maxAgeSeconds}` : NO_STORE);
        },
      };
    },
  };
}
