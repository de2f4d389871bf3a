/**
 * JSON Web Tokens: verification of incoming tokens with jose, and minting of local
 * development tokens (HS256 with JWT_SECRET) for `npm run token`, the start-up log and tests.
 */
import { createRemoteJWKSet, errors, jwtVerify, SignJWT } from 'jose';
import { LRUCache } from 'lru-cache';
import type { JWTVerifyGetKey } from 'jose';
import { defaultJwtMaxAgeSeconds } from '../config/index.js';
import type { AuthConfig } from '../config/index.js';
import { ID_PATTERN } from '../table/keys.js';

export const ROLES = ['customer', 'admin'] as const;
export type Role = (typeof ROLES)[number];

/** Who is asking: the token's `sub` (a userId) and `role`. */
export interface Viewer {
  userId: string;
  role: Role;
  /** The token's `exp` in epoch seconds: a subscription ends there (verified tokens always have one). */
  expiresAt?: number | undefined;
  /** The token's `email` claim, only when the token also says `email_verified: true`. */
  verifiedEmail?: string | undefined;
}

export type { AuthConfig } from '../config/index.js';

/** Why a token was refused; the message is safe to show a client. */
export class InvalidTokenError extends Error {
  override name = 'InvalidTokenError';
}

const ASYMMETRIC_ALGORITHMS = ['RS256', 'RS384', 'RS512', 'PS256', 'ES256', 'ES384', 'EdDSA'];

export type TokenVerifier = (token: string) => Promise<Viewer>;

/**
 * Bounds of the verified-token cache: the characters of the tokens it holds (hundreds of the
 * longest token context.ts accepts, thousands of typical ones) and how long an entry may live at
 * most, whatever its `exp`.
 */
export const TOKEN_CACHE_CHARS = 4_000_000;
export const TOKEN_CACHE_MAX_MS = 15 * 60_000;

export interface VerifierOptions {
  /** Remember verified tokens (default true): a repeat costs a map look-up, not a signature check. */
  cache?: boolean;
  /** The clock, in ms (tests move it). */
  now?: () => number;
}

/**
 * Builds the verifier for `config`. Only the expected algorithms are accepted (HS256 for a
 * secret, asymmetric ones for a JWKS), so `alg: none` and algorithm-confusion tokens fail;
 * `exp`, `nbf`, `iss` and `aud` are always checked, and `iat` is required: a token older than
 * `maxAgeSeconds` (JWT_MAX_AGE) is refused whatever its `exp` says (`exp` in year 9999 buys
 * nothing), and so is one issued in the future beyond the clock tolerance.
 *
 * A token that verified is remembered, by its exact text, until its `exp` or the end of its
 * maximum age, whichever comes first (and at most TOKEN_CACHE_MAX_MS), in an LRU bounded by
 * TOKEN_CACHE_CHARS: the same bearer token on every request of a session is checked once.
 * Refused tokens are never remembered, and a remembered one is refused from then on, as a
 * fresh verification would (a little earlier: the clock tolerance applies only to fresh
 * verifications).
 */
export function createVerifier(config: AuthConfig, options: VerifierOptions = {}): TokenVerifier {
  const verify = verifierFor(config);
  return options.cache === false ? async (token) => (await verify(token)).viewer : rememberVerified(verify, options);
}

/** Verifies a token and says until when (seconds since the epoch: `exp`, or earlier the end of its maximum age) it is valid. */
export type ExpiringVerifier = (token: string) => Promise<{ viewer: Viewer; exp: number }>;

/** The cache of createVerifier around any `verify`; exported for its tests. */
export function rememberVerified(verify: ExpiringVerifier, options: Pick<VerifierOptions, 'now'> = {}): TokenVerifier {
  const now = options.now ?? Date.now;
  const verified = new LRUCache<string, { viewer: Viewer; expiresAt: number }>({
    maxSize: TOKEN_CACHE_CHARS,
    sizeCalculation: (_value, token) => token.length,
  });
  return async (token) => {
    const hit = verified.get(token);
    if (hit) {
      if (now() < hit.expiresAt) return hit.viewer;
      verified.delete(token);
    }
    const { viewer, exp } = await verify(token);
    const expiresAt = Math.min(exp * 1000, now() + TOKEN_CACHE_MAX_MS);
    if (now() < expiresAt && token.length <= TOKEN_CACHE_CHARS) verified.set(token, { viewer, expiresAt });
    return viewer;
  };
}

function verifierFor(config: AuthConfig): ExpiringVerifier {
  let key: Uint8Array | JWTVerifyGetKey;
  let algorithms: string[];
  if (config.jwksUrl) {
    key = createRemoteJWKSet(new URL(config.jwksUrl), { timeoutDuration: 3000, cooldownDuration: 30_000 });
    algorithms = ASYMMETRIC_ALGORITHMS;
  } else if (config.secret) {
    key = new TextEncoder().encode(config.secret);
    algorithms = ['HS256'];
  } else {
    throw new Error('createVerifier needs JWT_SECRET or JWT_JWKS_URL');
  }
  const maxAge = config.maxAgeSeconds ?? defaultJwtMaxAgeSeconds();
  return async (token) => {
    let payload: Record<string, unknown>;
    try {
      ({ payload } = await jwtVerify(token, key as JWTVerifyGetKey, {
        algorithms,
        issuer: config.issuer,
        audience: config.audience,
        clockTolerance: CLOCK_TOLERANCE_SECONDS,
        maxTokenAge: maxAge,
        requiredClaims: ['sub', 'exp', 'iat'],
      }));
    } catch (error) {
      throw new InvalidTokenError(describe(error));
    }
    const { sub, role } = payload;
    if (typeof sub !== 'string' || !ID_PATTERN.test(sub))
      throw new InvalidTokenError('The token has no valid sub claim');
    if (typeof role !== 'string' || !(ROLES as readonly string[]).includes(role)) {
      throw new InvalidTokenError('The token has no valid role claim (customer or admin)');
    }
    const verifiedEmail =
      payload.email_verified === true && typeof payload.email === 'string' ? payload.email : undefined;
    // requiredClaims made jose check that exp and iat are numbers and the token is valid now.
    const exp = payload.exp as number;
    const iat = payload.iat as number;
    const viewer: Viewer = {
      userId: sub,
      role: role as Role,
      expiresAt: exp,
      ...(verifiedEmail ? { verifiedEmail } : {}),
    };
    return { viewer, exp: Math.min(exp, iat + maxAge) };
  };
}

/** How far the clocks of the token's issuer and this server may disagree. */
export const CLOCK_TOLERANCE_SECONDS = 5;

function describe(error: unknown): string {
  if (error instanceof errors.JWTExpired && error.claim === 'iat')
    return 'The token is older than the maximum token age';
  if (error instanceof errors.JWTExpired) return 'The token has expired';
  if (error instanceof errors.JWTClaimValidationFailed && error.claim === 'iat' && error.reason === 'check_failed') {
    return 'The token was issued in the future';
  }
  if (error instanceof errors.JWTClaimValidationFailed) return `The token's ${error.claim} claim is not accepted`;
  if (error instanceof errors.JOSEAlgNotAllowed) return "The token's algorithm is not accepted";
  if (error instanceof errors.JWKSNoMatchingKey || error instanceof errors.JWSSignatureVerificationFailed) {
    return "The token's signature is not valid";
  }
  return 'The token is not a valid JWT';
}

/** Mints an HS256 token for local use (`npm run token`, the start-up log, tests). */
export function signToken(
  viewer: Viewer,
  config: Pick<AuthConfig, 'secret' | 'issuer' | 'audience'>,
  expiresIn: string | number = '12h',
): Promise<string> {
  if (!config.secret)
    throw new Error('signToken needs JWT_SECRET: tokens for a JWKS setup come from your identity provider');
  return new SignJWT({ role: viewer.role })
    .setProtectedHeader({ alg: 'HS256', typ: 'JWT' })
    .setSubject(viewer.userId)
    .setIssuer(config.issuer)
    .setAudience(config.audience)
    .setIssuedAt()
    .setExpirationTime(expiresIn)
    .sign(new TextEncoder().encode(config.secret));
}
