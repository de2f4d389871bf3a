import type { VarSpec } from './varSpec.js';

/** How bearer tokens are verified (src/auth/tokens.ts). */
export const AUTH_SPEC = {
  JWT_SECRET: {
    type: 'secret',
    defaultText: 'a fixed development value outside production',
    description:
      'HS256 secret that verifies bearer tokens (and signs `npm run token`); at least 32 characters in production',
    readBy: ['server', 'graphql-lambda', 'scripts'],
  },
  JWT_JWKS_URL: {
    type: 'url',
    description: 'a JWKS URL: verify tokens with the issuer’s public keys instead of `JWT_SECRET`',
    readBy: ['server', 'graphql-lambda', 'scripts'],
  },
  JWT_ISSUER: {
    type: 'string',
    default: 'tablegraph-local',
    description: 'the `iss` every token must carry (required with `JWT_JWKS_URL`)',
    readBy: ['server', 'graphql-lambda', 'scripts'],
  },
  JWT_AUDIENCE: {
    type: 'string',
    default: 'tablegraph',
    description: 'the `aud` every token must carry (required with `JWT_JWKS_URL`)',
    readBy: ['server', 'graphql-lambda', 'scripts'],
  },
  DEV_SIGN_IN: {
    type: 'boolean',
    defaultText:
      '`true` when `NODE_ENV=development`, tokens are signed locally (no `JWT_JWKS_URL`) and the demo data is seeded (not in `aws` mode)',
    description:
      '`POST /auth/dev/token` signs in the demo users (alice, bob) and renews their tokens, for a development frontend (the storefront); refused in production, where an identity provider issues the tokens',
    readBy: ['server'],
  },
  JWT_MAX_AGE: {
    type: 'duration',
    default: '24h',
    description: 'a token older than this (by its `iat`) is refused whatever its `exp`: `3600`, `30m`, `24h`, `7d`',
    readBy: ['server', 'graphql-lambda', 'scripts'],
  },
} as const satisfies Record<string, VarSpec>;
