/**
 * Secrets of a Lambda function, read once at cold start from AWS Secrets Manager. The stack
 * (deploy/secrets.ts) puts `<NAME>_ARN` in the environment, never a value: `CURSOR_SECRET_ARN`
 * and `JWT_SECRET_ARN`, `OTEL_EXPORTER_OTLP_HEADERS_ARN` when a collector wants a key, and
 * `REDIS_SIGNING_SECRET_ARN` for the stream Lambda on a signed Redis, `CDN_PURGE_HEADERS_ARN` when the CDN's purge API
 * wants credentials. resolveSecrets() returns an environment in which each `<NAME>` holds
 * its secret's value, and the Lambda's loader (src/config/load.ts) reads that as it reads any environment.
 */
import { GetSecretValueCommand, SecretsManagerClient } from '@aws-sdk/client-secrets-manager';
import { ConfigError } from '../config/index.js';

/** The variables that may come from Secrets Manager. */
export const SECRET_VARIABLES = [
  'CURSOR_SECRET',
  'JWT_SECRET',
  'OTEL_EXPORTER_OTLP_HEADERS',
  'REDIS_SIGNING_SECRET',
  'CDN_PURGE_HEADERS',
] as const;

/** Reads one secret's string value; throws when it cannot. */
export type SecretReader = (secretId: string) => Promise<string>;

/** A SecretReader on Secrets Manager: GetSecretValue (the one action the functions are granted). */
export function secretsManagerReader(client: SecretsManagerClient = new SecretsManagerClient({})): SecretReader {
  return async (secretId) => {
    const result = await client.send(new GetSecretValueCommand({ SecretId: secretId }));
    if (typeof result.SecretString !== 'string' || result.SecretString === '') {
      throw new ConfigError(`secret ${secretId} has no string value (a binary secret cannot be used)`);
    }
    return result.SecretString;
  };
}

/**
 * A copy of `env` where `<NAME>` holds the value of the secret `<NAME>_ARN` names, for each of
 * SECRET_VARIABLES. Variables without `_ARN` are left as they are. Throws ConfigError when both
 * `<NAME>` and `<NAME>_ARN` are set (which one would win is a surprise either way), and the
 * reader's error, prefixed with the variable, when a secret cannot be read.
 */
export async function resolveSecrets(env: NodeJS.ProcessEnv, read: SecretReader): Promise<NodeJS.ProcessEnv> {
  const resolved: NodeJS.ProcessEnv = { ...env };
  await Promise.all(
    SECRET_VARIABLES.map(async (name) => {
      const arn = env[`${name}_ARN`];
      if (!arn) return;
      if (env[name]) throw new ConfigError(`set ${name} or ${name}_ARN, not both`);
      try {
        resolved[name] = await read(arn);
      } catch (error) {
        throw new ConfigError(`${name}_ARN: cannot read ${arn}: ${(error as Error).message}`, { cause: error });
      }
    }),
  );
  return resolved;
}

/**
 * Builds a value once and shares it, for a Lambda handler's cold start. A failed build is not
 * kept: the next call tries again (a throttled Secrets Manager must not break the environment
 * for good).
 */
export function coldStart<T>(build: () => Promise<T>): () => Promise<T> {
  let value: Promise<T> | undefined;
  return () => {
    value ??= build().catch((error: unknown) => {
      value = undefined;
      throw error;
    });
    return value;
  };
}
