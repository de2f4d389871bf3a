import type { ProcessConfig } from './process.js';
import { ConfigError, duration, flag, given, text } from './read.js';
import type { Env } from './read.js';

/** How tokens are verified (src/auth/tokens.ts). */
export interface AuthConfig {
  /** HS256 shared secret (local use). */
  secret?: string | undefined;
  /** JWKS URL (production): asymmetric keys, issuer and audience required. */
  jwksUrl?: string | undefined;
  issuer: string;
  audience: string;
  /** A token older than this (by its `iat`) is refused, whatever its `exp`; unset: JWT_MAX_AGE's default. */
  maxAgeSeconds?: number | undefined;
}

/** Signs local tokens outside production; printed nowhere, and refused by production mode. */
export const DEV_JWT_SECRET = 'tablegraph-development-jwt-secret';

/**
 * DEV_SIGN_IN: whether the server signs in the demo users itself (src/transports/http/devSignIn.ts).
 * Never in production, and never without a local secret to sign with; by default only where the
 * demo users are seeded (not in aws mode).
 */
export function readDevSignIn(
  env: Env,
  { nodeEnv, mode }: Pick<ProcessConfig, 'nodeEnv'> & { mode: string },
): { devSignIn: boolean } {
  const asked = flag(env, 'DEV_SIGN_IN');
  const jwks = given(env, 'JWT_JWKS_URL');
  if (asked && nodeEnv === 'production') {
    throw new ConfigError('DEV_SIGN_IN is for development: in production an identity provider issues the tokens');
  }
  if (asked && jwks) throw new ConfigError('DEV_SIGN_IN signs tokens with JWT_SECRET: it cannot with JWT_JWKS_URL');
  return { devSignIn: asked ?? (nodeEnv === 'development' && !jwks && mode !== 'aws') };
}

/** JWT_MAX_AGE as the spec defaults it, for an AuthConfig built without one. */
export const defaultJwtMaxAgeSeconds = (): number => duration({}, 'JWT_MAX_AGE');

export function readAuth(env: Env, { nodeEnv }: Pick<ProcessConfig, 'nodeEnv'>): { auth: AuthConfig } {
  const production = nodeEnv === 'production';
  const jwksUrl = text(env, 'JWT_JWKS_URL');
  const jwtSecret = text(env, 'JWT_SECRET') ?? (production || jwksUrl ? undefined : DEV_JWT_SECRET);
  if (production && !jwtSecret && !jwksUrl) {
    throw new ConfigError('NODE_ENV=production needs JWT_SECRET or JWT_JWKS_URL (with JWT_ISSUER and JWT_AUDIENCE)');
  }
  const issuer = text(env, 'JWT_ISSUER');
  const audience = text(env, 'JWT_AUDIENCE');
  // The defaults name the local issuer: a JWKS issuer's tokens must be checked against its own.
  if (jwksUrl && (!given(env, 'JWT_ISSUER') || !given(env, 'JWT_AUDIENCE'))) {
    throw new ConfigError('JWT_JWKS_URL needs JWT_ISSUER and JWT_AUDIENCE: tokens are checked against both');
  }
  if (production && jwtSecret && (jwtSecret.length < 32 || jwtSecret === DEV_JWT_SECRET)) {
    throw new ConfigError('JWT_SECRET must be at least 32 characters in production, and not the development secret');
  }
  return {
    auth: {
      secret: jwksUrl ? undefined : jwtSecret,
      jwksUrl,
      issuer,
      audience,
      maxAgeSeconds: duration(env, 'JWT_MAX_AGE'),
    },
  };
}
