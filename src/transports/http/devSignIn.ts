/**
 * `POST /auth/dev/token`: the development sign-in (DEV_SIGN_IN). A frontend in development (the
 * storefront) signs a demo user in and renews the token before it expires, without an identity
 * provider; production has no such route, and its tokens come from the provider (JWT_JWKS_URL).
 *
 * - Sign-in: `{"userId": "alice"}` (a demo user) gets a customer token for that user.
 * - Renewal: no body, or `{}`, with `Authorization: Bearer <token>` (a token this API accepts
 *   now) gets a fresh token for the same user; the current token is the proof, where an identity
 *   provider would take a refresh token.
 *
 * Answers are shaped as an OAuth 2.0 token endpoint's (RFC 6749 5.1, 5.2), so that a frontend
 * moving to a provider keeps its code: `{access_token, token_type: "Bearer", expires_in}`, or
 * `{error, error_description}` with 400 (`invalid_request`, `invalid_grant`), 405 or 413, and
 * `cache-control: no-store` either way.
 */
import type { IncomingMessage, ServerResponse } from 'node:http';
import { signToken } from '../../auth/tokens.js';
import type { AuthConfig, Viewer } from '../../auth/tokens.js';
import { sendJson } from './send.js';

export const DEV_SIGN_IN_PATH = '/auth/dev/token';
/** A sign-in body is a few dozen bytes; more is refused unread. */
export const DEV_SIGN_IN_MAX_BODY_BYTES = 1024;
/** How long a development token lasts: short, so that a frontend's renewal is exercised every session. */
export const DEV_TOKEN_SECONDS = 15 * 60;

export interface DevSignInOptions {
  /** The users who may sign in (the demo users). */
  users: readonly string[];
  /** Lifetime of each token (default DEV_TOKEN_SECONDS). */
  tokenSeconds?: number | undefined;
  /** Signs the tokens: the server's own issuer, audience and secret. */
  auth: Pick<AuthConfig, 'secret' | 'issuer' | 'audience'>;
}

type Answer = [status: number, body: Record<string, unknown>, headers?: Record<string, string>];

const refusal = (status: number, error: string, description: string, headers?: Record<string, string>): Answer => [
  status,
  { error, error_description: description },
  headers,
];

/** Reads at most `limit` bytes of the body; undefined when there are more. */
async function boundedBody(req: IncomingMessage, limit: number): Promise<string | undefined> {
  if (Number(req.headers['content-length'] ?? 0) > limit) return undefined;
  const chunks: Buffer[] = [];
  let size = 0;
  for await (const chunk of req as AsyncIterable<Buffer>) {
    size += chunk.length;
    if (size > limit) return undefined;
    chunks.push(chunk);
  }
  return Buffer.concat(chunks).toString('utf8');
}

/**
 * The route. `viewerOf` is the API's own check of an Authorization header (null without one;
 * it throws for a token the API refuses), so a renewal accepts exactly what a request would.
 */
export function devSignInRoute(
  options: DevSignInOptions,
  viewerOf: (authorization: string | undefined) => Promise<Viewer | null>,
) {
  const seconds = options.tokenSeconds ?? DEV_TOKEN_SECONDS;
  const issue = async (userId: string): Promise<Answer> => [
    200,
    {
      access_token: await signToken({ userId, role: 'customer' }, options.auth, `${seconds}s`),
      token_type: 'Bearer',
      expires_in: seconds,
    },
  ];

  async function answer(req: IncomingMessage): Promise<Answer> {
    if (req.method !== 'POST') return refusal(405, 'invalid_request', 'Use POST', { allow: 'POST' });
    const text = await boundedBody(req, DEV_SIGN_IN_MAX_BODY_BYTES);
    if (text === undefined) {
      return refusal(413, 'invalid_request', `The body is over ${DEV_SIGN_IN_MAX_BODY_BYTES} bytes`);
    }
    let body: unknown = {};
    if (text.trim() !== '') {
      try {
        body = JSON.parse(text);
      } catch {
        return refusal(400, 'invalid_request', 'The body is not JSON: send {"userId": "alice"}');
      }
    }
    if (typeof body !== 'object' || body === null || Array.isArray(body)) {
      return refusal(400, 'invalid_request', 'The body must be a JSON object: {"userId": "alice"}');
    }
    const { userId } = body as { userId?: unknown };
    if (userId !== undefined) {
      if (typeof userId !== 'string' || !options.users.includes(userId)) {
        return refusal(400, 'invalid_grant', `Only the demo users sign in here: ${options.users.join(', ')}`);
      }
      return issue(userId);
    }
    // A renewal: the token the API accepts now stands for the user.
    let viewer: Viewer | null;
    try {
      viewer = await viewerOf(req.headers.authorization);
    } catch (error) {
      return refusal(400, 'invalid_grant', `The token cannot be renewed: ${(error as Error).message}`);
    }
    if (!viewer) return refusal(400, 'invalid_request', 'Send {"userId": "<a demo user>"}, or a token to renew');
    if (!options.users.includes(viewer.userId) || viewer.role !== 'customer') {
      return refusal(400, 'invalid_grant', 'Only the demo users’ tokens are renewed here');
    }
    return issue(viewer.userId);
  }

  return async (req: IncomingMessage, res: ServerResponse): Promise<void> => {
    const [status, body, headers = {}] = await answer(req);
    await sendJson(req, res, status, body, { ...headers, 'cache-control': 'no-store' });
  };
}
