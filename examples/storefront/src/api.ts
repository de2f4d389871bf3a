/**
 * The storefront's GraphQL client: trusted documents only. A query or mutation is sent by its
 * id (`documentId: sha256:<hex>`, from codegen's manifest); a server that does not know the id
 * yet (development, without the manifest published) answers PERSISTED_QUERY_NOT_FOUND, and the
 * document goes once with its text, as the manifest spells it. Subscriptions run over
 * graphql-ws on the same endpoint with the manifest's text, which a server under
 * PERSISTED_ONLY admits as identical to a trusted document.
 */
import { createClient } from 'graphql-ws';
import type { Client } from 'graphql-ws';
import type { TypedDocumentString } from './gql/graphql';
import manifest from './gql/persisted-documents.json';

/** Where the API is: the build's setting, or this origin's /graphql (Vite's dev proxy). */
export const API_URL: string = import.meta.env.VITE_GRAPHQL_URL || `${location.origin}/graphql`;
export const TOKEN: string = import.meta.env.VITE_TOKEN ?? '';

/** The signed-in user's id, read from the token's claims (the server checks the token, not us). */
export const VIEWER_ID: string = (() => {
  try {
    const claims = JSON.parse(atob(TOKEN.split('.')[1]!.replace(/-/g, '+').replace(/_/g, '/'))) as { sub?: string };
    return claims.sub ?? '';
  } catch {
    return '';
  }
})();

export interface UserError {
  code: string;
  field: string[] | null;
  message: string;
}

export class GraphQLRequestError extends Error {
  constructor(
    message: string,
    readonly code: string | undefined,
  ) {
    super(message);
  }
}

const texts = manifest as Record<string, string>;

function documentOf<R, V>(document: TypedDocumentString<R, V>): { id: string; text: string } {
  const id = String(document.__meta__?.hash ?? '');
  const text = texts[id];
  if (!text) throw new Error(`document ${id} is not in the manifest: run npm run codegen`);
  return { id, text };
}

interface GraphQLResponse {
  data?: unknown;
  errors?: { message: string; extensions?: { code?: string } }[];
}

async function post(body: Record<string, unknown>): Promise<GraphQLResponse> {
  const response = await fetch(API_URL, {
    method: 'POST',
    headers: {
      'content-type': 'application/json',
      ...(TOKEN ? { authorization: `Bearer ${TOKEN}` } : {}),
    },
    body: JSON.stringify(body),
  });
  const answer: unknown = await response.json();
  return answer as GraphQLResponse;
}

export async function request<R, V>(document: TypedDocumentString<R, V>, variables: V): Promise<R> {
  const { id, text } = documentOf(document);
  let result = await post({ documentId: id, variables });
  if (result.errors?.[0]?.extensions?.code === 'PERSISTED_QUERY_NOT_FOUND') {
    result = await post({ documentId: id, query: text, variables });
  }
  const error = result.errors?.[0];
  if (error) throw new GraphQLRequestError(error.message, error.extensions?.code);
  return result.data as R;
}

let socket: Client | undefined;
const wsClient = (): Client =>
  (socket ??= createClient({
    url: API_URL.replace(/^http/, 'ws'),
    connectionParams: TOKEN ? { authorization: `Bearer ${TOKEN}` } : {},
    lazy: true,
  }));

/** Calls `next` with every event of the subscription until the returned function is called. */
export function subscribe<R, V>(
  document: TypedDocumentString<R, V>,
  variables: V,
  next: (data: R) => void,
): () => void {
  const { text } = documentOf(document);
  return wsClient().subscribe<R>(
    { query: text, variables: variables as Record<string, unknown> | null | undefined },
    {
      next: (value) => {
        if (value.data) next(value.data);
      },
      error: () => undefined,
      complete: () => undefined,
    },
  );
}
