/** The Lambda functions' secrets loader: Secrets Manager values in, at cold start, never in the environment. */
import { SecretsManagerClient } from '@aws-sdk/client-secrets-manager';
import { describe, expect, it } from 'vitest';
import { ConfigError } from '../src/config/index.js';
import { coldStart, resolveSecrets, secretsManagerReader } from '../src/lambda/secrets.js';

const CURSOR_ARN = 'arn:aws:secretsmanager:eu-west-1:123456789012:secret:CursorSecret-AbCdEf';
const JWT_ARN = 'arn:aws:secretsmanager:eu-west-1:123456789012:secret:JwtSecret-GhIjKl';

/**
 * A real Secrets Manager client whose requests stop at a middleware: it records each command's
 * input and answers as the service would (there is no Secrets Manager to run offline).
 */
function clientAnswering(answer: (secretId: string) => { SecretString?: string }) {
  const asked: { command: string; secretId: string }[] = [];
  const client = new SecretsManagerClient({
    region: 'eu-west-1',
    credentials: { accessKeyId: 'test', secretAccessKey: 'test' },
  });
  client.middlewareStack.add(
    (_next, context) => async (args) => {
      const secretId = (args.input as { SecretId: string }).SecretId;
      asked.push({ command: context.commandName ?? '', secretId });
      return { output: { $metadata: {}, ...answer(secretId) }, response: {} };
    },
    { step: 'initialize', name: 'answerLikeSecretsManager' },
  );
  return { client, asked };
}

const values: Record<string, string> = { [CURSOR_ARN]: 'cursor-secret-value', [JWT_ARN]: 'jwt-secret-value' };

describe('resolveSecrets', () => {
  it('puts each named secret into its variable with one GetSecretValue per secret', async () => {
    const { client, asked } = clientAnswering((id) => ({ SecretString: values[id] }));
    const env = { TABLE_NAME: 'Shop', CURSOR_SECRET_ARN: CURSOR_ARN, JWT_SECRET_ARN: JWT_ARN };
    const resolved = await resolveSecrets(env, secretsManagerReader(client));
    expect(resolved).toMatchObject({ CURSOR_SECRET: 'cursor-secret-value', JWT_SECRET: 'jwt-secret-value' });
    expect(resolved.TABLE_NAME).toBe('Shop');
    expect(asked.sort((a, b) => a.secretId.localeCompare(b.secretId))).toEqual([
      { command: 'GetSecretValueCommand', secretId: CURSOR_ARN },
      { command: 'GetSecretValueCommand', secretId: JWT_ARN },
    ]);
    // The caller's environment is left alone: the values live only in the returned copy.
    expect(env).not.toHaveProperty('CURSOR_SECRET');
  });

  it('reads nothing when no variable names a secret', async () => {
    const { client, asked } = clientAnswering(() => ({ SecretString: 'unused' }));
    expect(await resolveSecrets({ CURSOR_SECRET: 'plain' }, secretsManagerReader(client))).toEqual({
      CURSOR_SECRET: 'plain',
    });
    expect(asked).toEqual([]);
  });

  it('refuses a variable set both as a value and as a secret', async () => {
    const { client } = clientAnswering(() => ({ SecretString: 'x' }));
    const resolving = resolveSecrets({ JWT_SECRET: 'plain', JWT_SECRET_ARN: JWT_ARN }, secretsManagerReader(client));
    await expect(resolving).rejects.toThrow(ConfigError);
    await expect(resolving).rejects.toThrow('set JWT_SECRET or JWT_SECRET_ARN, not both');
  });

  it('names the variable and the secret when a secret has no string value', async () => {
    const { client } = clientAnswering(() => ({}));
    await expect(resolveSecrets({ CURSOR_SECRET_ARN: CURSOR_ARN }, secretsManagerReader(client))).rejects.toThrow(
      `CURSOR_SECRET_ARN: cannot read ${CURSOR_ARN}: secret ${CURSOR_ARN} has no string value`,
    );
  });
});

describe('coldStart', () => {
  it('builds once for every call, and builds again after a failed build', async () => {
    let builds = 0;
    const get = coldStart(async () => {
      builds += 1;
      if (builds === 1) throw new Error('throttled');
      return `handler ${builds}`;
    });
    await expect(get()).rejects.toThrow('throttled');
    expect(await Promise.all([get(), get()])).toEqual(['handler 2', 'handler 2']);
    expect(await get()).toBe('handler 2');
    expect(builds).toBe(2);
  });
});
