/**
 * The configuration spec is the one list of environment variables: every variable the code
 * reads has an entry, every entry is read, docs/configuration.md is what the spec renders, and
 * a value the server cannot use stops it with a message naming the variable.
 */
import { readdirSync, readFileSync } from 'node:fs';
import path from 'node:path';
import { describe, expect, it } from 'vitest';
import { ConfigError, DEFAULT_LIMITS, ENV_SPEC, loadServerConfig } from '../../src/config/index.js';
import { projectRoot } from '../../src/projectRoot.js';
import { generatedDocs } from '../../scripts/docs/generated.js';

/** Set by the platform or for a child process, not settings of ours; VITE_* are the storefront's build-time values. */
const PLATFORM = new Set(['PATH', 'HOME', 'CI', 'NODE_NO_WARNINGS', 'NODE_OPTIONS']);
const isPlatform = (name: string) => PLATFORM.has(name) || /^(AWS_LAMBDA_|VITEST|VITE_|npm_)/.test(name);

/** bench/ has its own BENCH_* settings (docs/configuration.md says so). */
const SCANNED = ['src', 'scripts', 'resolvers', 'client', 'test', 'infra'];

function sourceFiles(dir: string): string[] {
  let entries;
  try {
    entries = readdirSync(dir, { withFileTypes: true });
  } catch {
    return [];
  }
  return entries.flatMap((entry) => {
    const full = path.join(dir, entry.name);
    if (entry.isDirectory())
      return entry.name === 'node_modules' || entry.name === 'generated' ? [] : sourceFiles(full);
    return /\.(ts|tsx|js|mjs)$/.test(entry.name) ? [full] : [];
  });
}

const ROOT = projectRoot();
const files = SCANNED.flatMap((dir) => sourceFiles(path.join(ROOT, dir)));
const READ = /\benv(?:\.([A-Z][A-Z0-9_]*)\b|\[\s*['"]([A-Z][A-Z0-9_]*)['"]\s*\])/g;
/** The names src/config/ hands to its readers: integer(env, 'MAX_QUERY_DEPTH'). */
const READER_CALL =
  /\b(?:integer|count|seconds|duration|flag|port|oneOf|text|httpUrl|list|pairs|origins|given)\(env, '([A-Z][A-Z0-9_]*)'/g;

function readsIn(file: string): string[] {
  const source = readFileSync(file, 'utf8');
  const names = [...source.matchAll(READ)].map((match) => match[1] ?? match[2]);
  return names.filter((name): name is string => name !== undefined && !isPlatform(name));
}

describe('configuration spec', () => {
  it('has an entry for every variable the code reads', () => {
    const missing = files.flatMap((file) =>
      readsIn(file)
        .filter((name) => !(name in ENV_SPEC))
        .map((name) => `${path.relative(ROOT, file)} reads ${name}`),
    );
    expect(files.length).toBeGreaterThan(50);
    expect(missing).toEqual([]);
  });

  it('has no entry that nothing reads', () => {
    const configDir = path.join(ROOT, 'src', 'config');
    const config = sourceFiles(configDir)
      .map((file) => readFileSync(file, 'utf8'))
      .join('\n');
    const read = new Set([
      ...files.flatMap(readsIn),
      ...[...config.matchAll(READER_CALL)].map((match) => match[1] as string),
    ]);
    expect(Object.keys(ENV_SPEC).filter((name) => !read.has(name))).toEqual([]);
  });

  it('renders docs/configuration.md (npm run docs writes it)', async () => {
    for (const { file, text } of await generatedDocs()) {
      expect(readFileSync(file, 'utf8'), `${path.relative(ROOT, file)} is stale: npm run docs`).toBe(text);
    }
  });

  it('reads the documented defaults from an empty environment', () => {
    const config = loadServerConfig({});
    expect(config).toMatchObject({
      host: '127.0.0.1',
      port: Number(ENV_SPEC.PORT.default),
      tableName: ENV_SPEC.TABLE_NAME.default,
      mode: 'embedded',
      nodeEnv: 'development',
      logLevel: 'info',
      seedDemoData: true,
      introspection: true,
      playground: true,
      persistedOnly: false,
      limits: DEFAULT_LIMITS,
    });
    expect(config.limits.maxDepth).toBe(12);
    expect(config.cacheMaxAgeSeconds).toBe(60);
    expect(config.corsOrigins).toEqual([]);
  });

  it('reads a list of origins', () => {
    const config = loadServerConfig({
      CORS_ORIGINS: ' https://shop.example.com, http://localhost:5173 ,',
      CACHE_MAX_AGE: '0',
    });
    expect(config.corsOrigins).toEqual(['https://shop.example.com', 'http://localhost:5173']);
    expect(config.cacheMaxAgeSeconds).toBe(0);
  });

  it.each([
    [{ PORT: '70000' }, /PORT must be an integer between 0 and 65535/],
    [{ PLAYGROUND: 'maybe' }, /PLAYGROUND must be true or false, got "maybe"/],
    [{ MAX_QUERY_COST: '-1' }, /MAX_QUERY_COST must be a positive integer/],
    [{ DYNAMODB_MODE: 'cloud' }, /DYNAMODB_MODE must be embedded, endpoint, aws, got "cloud"/],
    [{ LOG_LEVEL: 'loud' }, /LOG_LEVEL must be fatal, error/],
    [{ NODE_ENV: 'staging' }, /NODE_ENV must be development, production, test/],
    [{ DYNAMODB_LOCAL_PORT: 'x' }, /DYNAMODB_LOCAL_PORT must be an integer/],
    [{ CACHE_MAX_AGE: '1.5' }, /CACHE_MAX_AGE must be a whole number of seconds/],
    [{ CORS_ORIGINS: 'https://shop.example.com/' }, /CORS_ORIGINS lists origins like/],
    [{ CORS_ORIGINS: 'shop.example.com' }, /CORS_ORIGINS lists origins like/],
    [{ CDN_PURGE_URL: 'https://user:secret@purge.example.com/' }, /must not carry credentials.*CDN_PURGE_HEADERS/],
    [{ CDN_PURGE_HEADERS: 'Authorization' }, /CDN_PURGE_HEADERS must be key=value pairs/],
    [{ TRUST_PROXY_HOPS: '-1' }, /TRUST_PROXY_HOPS must be a whole number/],
  ])('refuses %o', (env, message) => {
    expect(() => loadServerConfig(env)).toThrow(ConfigError);
    expect(() => loadServerConfig(env)).toThrow(message);
  });

  it('signs in the demo users in development only, where it signs its own tokens', () => {
    expect(loadServerConfig({}).devSignIn).toBe(true);
    expect(loadServerConfig({ DEV_SIGN_IN: 'false' }).devSignIn).toBe(false);
    expect(loadServerConfig({ NODE_ENV: 'test' }).devSignIn).toBe(false);
    expect(loadServerConfig({ DYNAMODB_MODE: 'aws' }).devSignIn).toBe(false);
    const jwks = {
      JWT_JWKS_URL: 'https://id.example.com/jwks',
      JWT_ISSUER: 'https://id.example.com/',
      JWT_AUDIENCE: 'shop',
    };
    expect(loadServerConfig(jwks).devSignIn).toBe(false);
    expect(() => loadServerConfig({ ...jwks, DEV_SIGN_IN: 'true' })).toThrow(/cannot with JWT_JWKS_URL/);
    const production = {
      NODE_ENV: 'production',
      JWT_SECRET: 'x'.repeat(40),
      CURSOR_SECRET: 'y'.repeat(40),
      DYNAMODB_MODE: 'aws',
    };
    expect(loadServerConfig(production).devSignIn).toBe(false);
    expect(() => loadServerConfig({ ...production, DEV_SIGN_IN: 'true' })).toThrow(
      /DEV_SIGN_IN is for development: in production an identity provider issues the tokens/,
    );
  });
});
