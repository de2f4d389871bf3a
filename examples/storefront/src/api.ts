/**
 * The storefront's GraphQL client: trusted documents only. A query or mutation is sent by its id
 * (`documentId: sha256:<hex>`, from codegen's manifest); a server that does not know the id yet
 * (development, without the manifest published) answers PERSISTED_QUERY_NOT_FOUND, and the
 * document goes once with its text. Subscriptions run over graphql-ws on the same endpoint with
 * the manifest's text, which a server under PERSISTED_ONLY admits as identical to a trusted one.
 *
 * The public catalogue is asked for without a token, so an expired or refused token never stands
 * between a visitor and the shop. Every failure becomes an ApiError a page can explain: the API
 * out of reach (no answer, not JSON, too slow), the token refused (the session ends), or the
 * API's own error message.
 */
import { createClient } from 'graphql-ws';
import type { Client } from 'graphql-ws';
import { currentToken, endSession } from './auth';
import type { TypedDocumentString } from './gql/graphql';
import manifest from './gql/persisted-documents.json';
import { timeout } from './timeout';

/** Where the API is: the build's setting, or this origin's /graphql (Vite's dev proxy). */
export const API_URL: string = import.meta.env.VITE_GRAPHQL_URL || `${location.origin}/graphql`;

/** An answer that takes longer than this is given up on: the page says so instead of waiting forever. */
export const REQUEST_TIMEOUT_MS = 15_000;

export type ApiErrorKind = 'unreachable' | 'signed-out' | 'refused' | 'failed';

export class ApiError extends Error {
  override name = 'ApiError';
  constructor(
    readonly kind: ApiErrorKind,
    message: string,
    readonly code?: string,
  ) {
    super(message);
  }
}

export interface UserError {
  code: string;
  field: string[] | null;
  message: string;
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

const UNREACHABLE = "The shop can't be reached right now. Check your connection and try again.";

async function post(body: Record<string, unknown>, token: string | undefined): Promise<GraphQLResponse> {
  const limit = timeout(REQUEST_TIMEOUT_MS);
  let response: Response;
  try {
    response = await fetch(API_URL, {
      method: 'POST',
      headers: {
        'content-type': 'application/json',
        accept: 'application/graphql-response+json, application/json',
        ...(token ? { authorization: `Bearer ${token}` } : {}),
      },
      body: JSON.stringify(body),
      signal: limit.signal,
    });
    // A proxy's error page, an empty answer: not the API speaking.
    if (!(response.headers.get('content-type') ?? '').includes('json')) throw new ApiError('unreachable', UNREACHABLE);
    return (await response.json()) as GraphQLResponse;
  } catch (error) {
    if (error instanceof ApiError) throw error;
    const timedOut = limit.signal.aborted;
    throw new ApiError('unreachable', timedOut ? 'The shop is taking too long to answer. Try again.' : UNREACHABLE);
  } finally {
    limit.done();
  }
}

export interface RequestOptions {
  /** Send the signed-in user's token (default false: the catalogue is public). */
  auth?: boolean;
}

/** Runs a query or mutation; rejects with an ApiError. */
export async function request<R, V>(
  document: TypedDocumentString<R, V>,
  variables: V,
  { auth = false }: RequestOptions = {},
): Promise<R> {
  const token = auth ? currentToken() : undefined;
  if (auth && !token) throw new ApiError('signed-out', 'Sign in to continue.');
  const { id, text } = documentOf(document);
  let result = await post({ documentId: id, variables }, token);
  if (result.errors?.[0]?.extensions?.code === 'PERSISTED_QUERY_NOT_FOUND') {
    result = await post({ documentId: id, query: text, variables }, token);
  }
  const error = result.errors?.[0];
  if (error?.extensions?.code === 'UNAUTHENTICATED') {
    endSession('refused');
    throw new ApiError('refused', 'Your session has ended. Sign in again to continue.', error.extensions.code);
  }
  if (error) throw new ApiError('failed', error.message, error.extensions?.code);
  return result.data as R;
}

let socket: Client | undefined;
const wsClient = (): Client =>
  (socket ??= createClient({
    url: API_URL.replace(/^http/, 'ws'),
    // Read at every (re)connection: a renewed token is the one sent.
    connectionParams: () => {
      const token = currentToken();
      return token ? { authorization: `Bearer ${token}` } : {};
    },
    lazy: true,
  }));

/**
 * Calls `next` with every event of the subscription until the returned function is called, and
 * `failed` once if it ends on an error (a refused token, the API gone).
 */
export function subscribe<R, V>(
  document: TypedDocumentString<R, V>,
  variables: V,
  next: (data: R) => void,
  failed: (error: ApiError) => void,
): () => void {
  const { text } = documentOf(document);
  return wsClient().subscribe<R>(
    { query: text, variables: variables as Record<string, unknown> | null | undefined },
    {
      next: (value) => {
        if (value.data) next(value.data);
      },
      error: (error: unknown) => {
        // An array: the API refused the subscription itself (a GraphQL error).
        if (Array.isArray(error)) {
          const message = (error[0] as { message?: string } | undefined)?.message ?? 'The subscription was refused.';
          return failed(new ApiError('failed', message));
        }
        const code = (error as { code?: number }).code;
        if (code === 4401 || code === 4403) {
          endSession('refused');
          failed(new ApiError('refused', 'Your session has ended. Sign in again to continue.'));
        } else {
          failed(new ApiError('unreachable', 'Live updates are paused: the shop cannot be reached.'));
        }
      },
      complete: () => undefined,
    },
  );
}
