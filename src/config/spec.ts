/**
 * Every environment variable tablegraph reads, in one typed spec, grouped by section (./spec/):
 * docs/configuration.md is generated from it (`npm run docs`; `npm run docs -- --check` and a unit
 * test catch drift), and a unit test fails for a variable the code reads without an entry here.
 * To add a variable: add an entry to its section's spec, read it in that section's reader with
 * the reader of its type (./read.ts), then `npm run docs`.
 */
import { API_SPEC } from './spec/api.js';
import { AUTH_SPEC } from './spec/auth.js';
import { DATABASE_SPEC } from './spec/database.js';
import { LIMITS_SPEC } from './spec/limits.js';
import { PROCESS_SPEC } from './spec/process.js';
import { RESPONSE_CACHE_SPEC } from './spec/responseCache.js';
import { SERVER_SPEC } from './spec/server.js';
import { STREAMS_SPEC } from './spec/streams.js';
import { SUBSCRIPTIONS_SPEC } from './spec/subscriptions.js';
import { TELEMETRY_SPEC } from './spec/telemetry.js';
import { TOOLING_SPEC } from './spec/tooling.js';
import type { VarSpec } from './spec/varSpec.js';

export type { Reader, VarSpec } from './spec/varSpec.js';

/** The sections in the order docs/configuration.md lists them. */
export const SPEC_SECTIONS = {
  process: PROCESS_SPEC,
  server: SERVER_SPEC,
  database: DATABASE_SPEC,
  auth: AUTH_SPEC,
  limits: LIMITS_SPEC,
  api: API_SPEC,
  subscriptions: SUBSCRIPTIONS_SPEC,
  streams: STREAMS_SPEC,
  responseCache: RESPONSE_CACHE_SPEC,
  telemetry: TELEMETRY_SPEC,
  tooling: TOOLING_SPEC,
} as const;

export const ENV_SPEC = {
  ...PROCESS_SPEC,
  ...SERVER_SPEC,
  ...DATABASE_SPEC,
  ...AUTH_SPEC,
  ...LIMITS_SPEC,
  ...API_SPEC,
  ...SUBSCRIPTIONS_SPEC,
  ...STREAMS_SPEC,
  ...RESPONSE_CACHE_SPEC,
  ...TELEMETRY_SPEC,
  ...TOOLING_SPEC,
} as const satisfies Record<string, VarSpec>;

export type EnvName = keyof typeof ENV_SPEC;
