/**
 * The `readBy` column of the spec (and so of docs/configuration.md) is derived, not kept by hand:
 * each process's loader runs over a recording environment, and the variables it looked at must
 * be exactly those whose `readBy` names the process.
 */
import { describe, expect, it } from 'vitest';
import {
  ENV_SPEC,
  SPEC_SECTIONS,
  loadConsumerConfig,
  loadGraphQLLambdaConfig,
  loadScriptConfig,
  loadServerConfig,
  loadStreamLambdaConfig,
} from '../../src/config/index.js';
import type { Reader, VarSpec } from '../../src/config/index.js';

const LOADERS: [Reader, (env: NodeJS.ProcessEnv) => unknown][] = [
  ['server', loadServerConfig],
  ['graphql-lambda', loadGraphQLLambdaConfig],
  ['stream-lambda', loadStreamLambdaConfig],
  ['consumer', loadConsumerConfig],
  ['scripts', loadScriptConfig],
];

/** Environments that take each branch a rule has: development defaults, production, every option on. */
const ENVIRONMENTS: NodeJS.ProcessEnv[] = [
  {},
  {
    NODE_ENV: 'production',
    DYNAMODB_MODE: 'aws',
    CURSOR_SECRET: 'c'.repeat(40),
    JWT_SECRET: 'j'.repeat(40),
  },
  {
    DYNAMODB_ENDPOINT: 'http://localhost:8000',
    JWT_JWKS_URL: 'https://issuer.example.com/jwks.json',
    JWT_ISSUER: 'https://issuer.example.com/',
    JWT_AUDIENCE: 'tablegraph',
    REDIS_URL: 'redis://127.0.0.1:6379',
    REDIS_SIGNING_SECRET: 's'.repeat(40),
    CDN_PURGE_URL: 'https://cdn.example.com/purge',
    OTEL_EXPORTER_OTLP_ENDPOINT: 'http://localhost:4318',
    OTEL_TRACES_SAMPLER: 'traceidratio',
    OTEL_TRACES_SAMPLER_ARG: '0.5',
  },
];

/** The names a loader looks up in any of the environments. */
function readBy(load: (env: NodeJS.ProcessEnv) => unknown): string[] {
  const names = new Set<string>();
  for (const env of ENVIRONMENTS) {
    load(
      new Proxy(env, {
        get(target, name) {
          if (typeof name === 'string') names.add(name);
          return target[name as string];
        },
      }),
    );
  }
  return [...names].sort();
}

const listedFor = (reader: Reader): string[] =>
  Object.entries(ENV_SPEC as Record<string, VarSpec>)
    .filter(([, spec]) => spec.readBy.includes(reader))
    .map(([name]) => name)
    .sort();

describe('the readBy column', () => {
  it.each(LOADERS)('lists the %s for exactly the variables its loader reads', (reader, load) => {
    expect(listedFor(reader)).toEqual(readBy(load));
  });

  it.each(LOADERS)('the %s reads no variable the spec does not describe', (_, load) => {
    expect(readBy(load).filter((name) => !(name in ENV_SPEC))).toEqual([]);
  });

  it('names each variable in one section only', () => {
    const sections = Object.values(SPEC_SECTIONS).flatMap((section) => Object.keys(section));
    expect(sections.length).toBe(Object.keys(ENV_SPEC).length);
  });
});
