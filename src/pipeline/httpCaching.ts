/**
 * HTTP caching, decided by what the answer read: an anonymous GET (a query) that succeeded, whose
 * reads (the dependency record's tags, or the cached entry's) are all public and which never
 * consulted the viewer (`access.readViewerData()`: not even whether someone is signed in), may be
 * cached by browsers and CDNs, whatever its document and however its client hashed it. Every
 * other response is `private, no-store`. (The HTTP transport adds the ETag and answers
 * If-None-Match.) `documentReadsOnlyPublicData` is the static judgement of a document, which the
 * response cache scopes its entries by.
 */
import { createHash } from 'node:crypto';
import type { ApolloServerPlugin } from '@apollo/server';
import { OperationTypeNode, parse, TypeInfo, visit, visitWithTypeInfo } from 'graphql';
import type { DocumentNode, GraphQLSchema } from 'graphql';
import type { GraphQLContext } from '../graphql/context.js';
import { isPublicTag } from '../table/dependencies.js';
import type { ResponseCache } from './responseCache/responseCache.js';
import { schemaPolicy } from './schemaPolicy.js';

/**
 * The ETag of an answer's JSON, whoever computes it (the HTTP handler, the response cache for an
 * entry). Weak: the same JSON may be sent gzip- or br-encoded, which a strong ETag would have to
 * tell apart.
 */
export const etagOf = (json: string): string =>
  `W/"${createHash('sha256').update(json).digest('base64url').slice(0, 27)}"`;

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

/**
 * readsOnlyPublicData of a parsed document: every field it selects is `@public` in
 * schema.graphql (on the field, or on its type). A field or type without it (a new one, say)
 * makes the document private: the safe default.
 */
export function documentReadsOnlyPublicData(schema: GraphQLSchema, ast: DocumentNode): boolean {
  const policy = schemaPolicy(schema);
  const typeInfo = new TypeInfo(schema);
  let isPublic = true;
  visit(
    ast,
    visitWithTypeInfo(typeInfo, {
      OperationDefinition(node) {
        if (node.operation !== OperationTypeNode.QUERY) isPublic = false;
      },
      Field(node) {
        if (node.name.value === '__typename') return;
        const field = typeInfo.getFieldDef();
        if (!field || !policy.isPublic(field)) isPublic = false;
      },
    }),
  );
  return isPublic;
}

export interface HttpCachingOptions {
  /** Seconds a public answer may be reused; 0 makes every answer `private, no-store`. */
  maxAgeSeconds: number;
  /** The response cache, whose hits report the tags their entry read. */
  cache?: ResponseCache | undefined;
}

/** Whether an execution's answer depended on nothing private: its reads' tags and the viewer. */
function readOnlyPublicData(context: Partial<GraphQLContext> | undefined, cache: ResponseCache | undefined): boolean {
  if (!context?.access || !context.reads || context.access.readViewerData()) return false;
  const outcome = context && cache?.outcomeOf(context);
  if (outcome?.status === 'hit') return outcome.tags.every(isPublicTag);
  return context.reads.uncacheable === undefined && [...context.reads.tags].every(isPublicTag);
}

export function httpCachingPlugin({ maxAgeSeconds, cache }: HttpCachingOptions): ApolloServerPlugin<GraphQLContext> {
  return {
    async requestDidStart() {
      return {
        async willSendResponse({ request, response, errors, contextValue }) {
          const isPublic =
            maxAgeSeconds > 0 &&
            request.http?.method === 'GET' &&
            // A signed-in answer stays private (RFC 9111's default for requests with credentials).
            !request.http.headers.get('authorization') &&
            // contextValue is incomplete when the context factory itself failed (a refused token).
            readOnlyPublicData(contextValue, cache) &&
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
