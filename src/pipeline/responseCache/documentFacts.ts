/**
 * What the cache needs to know of a document, worked out once per parsed document (the
 * admission's document store hands the same object to every request of a document): its
 * hash, the type of the operation, and whether it reads only public data.
 */
import { createHash } from 'node:crypto';
import { getOperationAST, print } from 'graphql';
import type { DocumentNode, GraphQLSchema, OperationTypeNode } from 'graphql';
import { documentReadsOnlyPublicData } from '../httpCaching.js';

export interface DocumentFacts {
  /** sha256 hex of the document's text: Apollo's persisted-query hash of the same document. */
  hash: string;
  readsOnlyPublicData: boolean;
  /** The type of each named operation ('' for the only, anonymous one). */
  operationType: (operationName: string | null | undefined) => OperationTypeNode | undefined;
}

export function documentFactsOf(schema: GraphQLSchema): (document: DocumentNode) => DocumentFacts {
  const known = new WeakMap<DocumentNode, DocumentFacts>();
  return (document) => {
    let facts = known.get(document);
    if (!facts) {
      const text = document.loc?.source.body ?? print(document);
      facts = {
        hash: createHash('sha256').update(text).digest('hex'),
        readsOnlyPublicData: documentReadsOnlyPublicData(schema, document),
        operationType: (name) => getOperationAST(document, name ?? undefined)?.operation,
      };
      known.set(document, facts);
    }
    return facts;
  };
}
