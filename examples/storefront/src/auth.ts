/**
 * The session: who is signed in, with which token, until when, renewed before it expires.
 *
 * Development signs in at the API's own development sign-in (`POST /auth/dev/token`, the demo
 * users only), which answers like an OAuth 2.0 token endpoint. A shop in production signs in at
 * its identity provider instead: replace `requestToken` with the provider's client (a redirect to
 * sign in, its refresh token or silent renewal to renew) and keep the rest. The API verifies the
 * provider's tokens with JWT_JWKS_URL.
 *
 * The session lives in sessionStorage (this tab, kept across a reload). A token is renewed when
 * four fifths of its lifetime have passed; a renewal that is refused, or a request the API answers
 * with UNAUTHENTICATED, ends the session, and the pages say so.
 */
import { useSyncExternalStore } from 'react';
import { timeout } from './timeout';

export interface Session {
  userId: string;
  token: string;
  /** When the token expires, in ms since the epoch. */
  expiresAt: number;
  /** Its lifetime in ms, which times the renewal. */
  lifetimeMs: number;
}

/** Why there is no session: never signed in, signed out, or the API refused the token. */
export type SessionEnd = 'none' | 'signed-out' | 'refused';

interface State {
  session: Session | undefined;
  ended: SessionEnd;
}

export const SIGN_IN_URL: string =
  import.meta.env.VITE_SIGN_IN_URL ||
  new URL('/auth/dev/token', import.meta.env.VITE_GRAPHQL_URL || `${location.origin}/graphql`).toString();

const STORAGE_KEY = 'storefront-session';
/** The share of a token's lifetime after which it is renewed. */
const RENEW_AT = 0.8;

export class SignInError extends Error {
  override name = 'SignInError';
}

/** Asks the token endpoint for a token: for `userId`, or (renewal) for the holder of `token`. */
async function requestToken(body: { userId: string } | { token: string }): Promise<Session> {
  const limit = timeout(15_000);
  let response: Response;
  try {
    response = await fetch(SIGN_IN_URL, {
      method: 'POST',
      headers: {
        'content-type': 'application/json',
        ...('token' in body ? { authorization: `Bearer ${body.token}` } : {}),
      },
      body: 'userId' in body ? JSON.stringify({ userId: body.userId }) : '',
      signal: limit.signal,
    });
  } catch {
    limit.done();
    throw new SignInError("The sign-in service can't be reached right now. Try again.");
  }
  const answer = (await response
    .json()
    .catch(() => ({}))
    .finally(limit.done)) as {
    access_token?: string;
    expires_in?: number;
    error_description?: string;
  };
  if (!response.ok || !answer.access_token || !answer.expires_in) {
    throw new SignInError(answer.error_description ?? `Sign-in failed (HTTP ${response.status}).`);
  }
  const claims = JSON.parse(atob(answer.access_token.split('.')[1]!.replace(/-/g, '+').replace(/_/g, '/'))) as {
    sub: string;
  };
  const lifetimeMs = answer.expires_in * 1000;
  return { userId: claims.sub, token: answer.access_token, expiresAt: Date.now() + lifetimeMs, lifetimeMs };
}

const listeners = new Set<() => void>();
let state: State = { session: undefined, ended: 'none' };
let renewal: ReturnType<typeof setTimeout> | undefined;

function set(next: State): void {
  state = next;
  if (next.session) sessionStorage.setItem(STORAGE_KEY, JSON.stringify(next.session));
  else sessionStorage.removeItem(STORAGE_KEY);
  clearTimeout(renewal);
  if (next.session) {
    const { expiresAt, lifetimeMs } = next.session;
    const wait = Math.max(expiresAt - lifetimeMs * (1 - RENEW_AT) - Date.now(), 0);
    renewal = setTimeout(() => void renew(), wait);
  }
  for (const listener of listeners) listener();
}

async function renew(): Promise<void> {
  const session = state.session;
  if (!session) return;
  try {
    set({ session: await requestToken({ token: session.token }), ended: 'none' });
  } catch (error) {
    // Refused: the session is over. Out of reach: try again while the token still lasts.
    if (error instanceof SignInError && /can't be reached/.test(error.message) && session.expiresAt > Date.now()) {
      renewal = setTimeout(() => void renew(), Math.min(10_000, session.expiresAt - Date.now()));
    } else if (state.session === session) {
      endSession('refused');
    }
  }
}

export async function signIn(userId: string): Promise<void> {
  set({ session: await requestToken({ userId }), ended: 'none' });
}

export function signOut(): void {
  set({ session: undefined, ended: 'signed-out' });
}

/** Ends the session because the API refused its token (or it expired unrenewed). */
export function endSession(reason: Exclude<SessionEnd, 'none'>): void {
  if (state.session) set({ session: undefined, ended: reason });
}

/** The token to send now, if a session is on. */
export const currentToken = (): string | undefined =>
  state.session && state.session.expiresAt > Date.now() ? state.session.token : undefined;

/** The session as React sees it: re-renders on sign-in, renewal and sign-out. */
export function useSession(): State {
  return useSyncExternalStore(
    (listener) => {
      listeners.add(listener);
      return () => listeners.delete(listener);
    },
    () => state,
  );
}

/** The session kept by this tab before a reload, if its token has not expired. */
function restore(): void {
  try {
    const stored = JSON.parse(sessionStorage.getItem(STORAGE_KEY) ?? 'null') as Session | null;
    if (stored && stored.expiresAt > Date.now()) set({ session: stored, ended: 'none' });
    else if (stored) set({ session: undefined, ended: 'refused' });
  } catch {
    sessionStorage.removeItem(STORAGE_KEY);
  }
}
restore();
