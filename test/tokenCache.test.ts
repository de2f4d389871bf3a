import { describe, expect, it } from 'vitest';
import {
  createVerifier,
  InvalidTokenError,
  rememberVerified,
  signToken,
  TOKEN_CACHE_CHARS,
} from '../src/auth/tokens.js';
import type { ExpiringVerifier, Viewer } from '../src/auth/tokens.js';

const AUTH = { secret: 'token-cache-test-secret', issuer: 'tablegraph-local', audience: 'tablegraph' };
const T0 = Date.parse('2026-12-02T12:00:00Z');

/** A verifier that accepts tokens named `ok-<userId>-<exp seconds>` and counts its calls. */
function countingVerifier() {
  const calls: string[] = [];
  const verify: ExpiringVerifier = async (token) => {
    calls.push(token);
    const match = /^ok-([a-z]+)-(\d+)(?:-pad.*)?$/.exec(token);
    if (!match) throw new InvalidTokenError('The token is not a valid JWT');
    return { viewer: { userId: match[1]!, role: 'customer' } satisfies Viewer, exp: Number(match[2]) };
  };
  return { verify, calls };
}

describe('the verified-token cache', () => {
  const exp = T0 / 1000 + 600;

  it('verifies a token once and answers its repeats from the cache', async () => {
    const { verify, calls } = countingVerifier();
    const cached = rememberVerified(verify, { now: () => T0 });
    const token = `ok-alice-${exp}`;
    expect(await cached(token)).toEqual({ userId: 'alice', role: 'customer' });
    expect(await cached(token)).toEqual({ userId: 'alice', role: 'customer' });
    expect(calls).toEqual([token]);
  });

  it('verifies again from the token’s exp on', async () => {
    const { verify, calls } = countingVerifier();
    let now = T0;
    const cached = rememberVerified(verify, { now: () => now });
    const token = `ok-alice-${exp}`;
    await cached(token);
    now = exp * 1000 - 1;
    await cached(token);
    expect(calls).toHaveLength(1);
    now = exp * 1000;
    await cached(token);
    expect(calls).toHaveLength(2);
  });

  it('never remembers a refused token', async () => {
    const { verify, calls } = countingVerifier();
    const cached = rememberVerified(verify, { now: () => T0 });
    await expect(cached('forged')).rejects.toThrow(InvalidTokenError);
    await expect(cached('forged')).rejects.toThrow(InvalidTokenError);
    expect(calls).toEqual(['forged', 'forged']);
  });

  it('keeps at most TOKEN_CACHE_CHARS characters of tokens, dropping the least recently used', async () => {
    const { verify, calls } = countingVerifier();
    const cached = rememberVerified(verify, { now: () => T0 });
    const big = (n: number) => `ok-bob-${exp}-pad${n}-${'x'.repeat(TOKEN_CACHE_CHARS / 4)}`;
    for (let n = 0; n < 5; n++) await cached(big(n));
    calls.length = 0;
    await cached(big(4)); // recent: still there
    await cached(big(0)); // the oldest: pushed out by the fifth
    expect(calls).toEqual([big(0)]);
  });

  it('checks real tokens: a changed signature is refused even after the original was cached', async () => {
    const verify = createVerifier(AUTH);
    const token = await signToken({ userId: 'alice', role: 'admin' }, AUTH);
    expect(await verify(token)).toEqual({ userId: 'alice', role: 'admin', expiresAt: expect.any(Number) });
    const forged = token.slice(0, -2) + (token.endsWith('AA') ? 'BB' : 'AA');
    await expect(verify(forged)).rejects.toThrow(InvalidTokenError);
    expect(await verify(token)).toEqual({ userId: 'alice', role: 'admin', expiresAt: expect.any(Number) });
  });
});
