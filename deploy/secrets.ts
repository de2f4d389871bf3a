/**
 * The API's secrets in Secrets Manager, generated at creation: the function gets their ARNs
 * (`CURSOR_SECRET_ARN`, `JWT_SECRET_ARN`) and reads the values at cold start
 * (src/lambda/secrets.ts); no secret value is ever in the template or the environment.
 */
import { PolicyStatement } from 'aws-cdk-lib/aws-iam';
import type { IRole } from 'aws-cdk-lib/aws-iam';
import { Secret } from 'aws-cdk-lib/aws-secretsmanager';
import { Validations } from 'aws-cdk-lib';
import type { Construct } from 'constructs';

export interface ApiSecrets {
  cursorSecret: Secret;
  jwtSecret: Secret;
}

/** 64 letters and digits: far above the 32 characters production requires, and safe in any shell. */
const GENERATED = { passwordLength: 64, excludePunctuation: true, includeSpace: false };

export function createSecrets(scope: Construct): ApiSecrets {
  const secrets = {
    cursorSecret: new Secret(scope, 'CursorSecret', {
      description: 'tablegraph CURSOR_SECRET: signs page cursors',
      generateSecretString: GENERATED,
    }),
    jwtSecret: new Secret(scope, 'JwtSecret', {
      description: 'tablegraph JWT_SECRET: signs and checks HS256 tokens (unused with JwtJwksUrl)',
      generateSecretString: GENERATED,
    }),
  };
  for (const secret of Object.values(secrets)) {
    Validations.of(secret).acknowledge({
      id: 'AwsSolutions::AwsSolutions-SMG4',
      reason:
        'No scheduled rotation: a new CURSOR_SECRET invalidates every cursor a client holds and a new JWT_SECRET ' +
        'every token, and functions read the value at cold start only, so warm ones would keep the old value. ' +
        'Rotate by hand with a deploy (docs/deploy.md, "Rotating the secrets").',
    });
  }
  return secrets;
}

/**
 * REDIS_SIGNING_SECRET: the HMAC key of everything the stack's processes write to Redis (order
 * events, invalidations, heartbeats, shared cache entries), the fleet's on Valkey, or the
 * stream function's on the `-c redis=true` node.
 */
export function createRedisSigningSecret(scope: Construct): Secret {
  const secret = new Secret(scope, 'RedisSigningSecret', {
    description:
      'tablegraph REDIS_SIGNING_SECRET: signs change events, invalidations, heartbeats and shared cache entries on Redis',
    generateSecretString: GENERATED,
  });
  Validations.of(secret).acknowledge({
    id: 'AwsSolutions::AwsSolutions-SMG4',
    reason:
      'No scheduled rotation: every process on the Redis must hold the same key, and each reads it when it ' +
      'starts; rotate by hand, then redeploy all of them (docs/deploy.md, "Rotating the secrets").',
  });
  return secret;
}

/** The environment that names the secrets (ARNs, never values). */
export const secretEnvironment = (secrets: ApiSecrets): Record<string, string> => ({
  CURSOR_SECRET_ARN: secrets.cursorSecret.secretArn,
  JWT_SECRET_ARN: secrets.jwtSecret.secretArn,
});

/** Read access to exactly those two secrets, and only the call the loader makes (GetSecretValue). */
export function grantSecrets(secrets: ApiSecrets, role: IRole): void {
  role.addToPrincipalPolicy(
    new PolicyStatement({
      actions: ['secretsmanager:GetSecretValue'],
      resources: [secrets.cursorSecret.secretArn, secrets.jwtSecret.secretArn],
    }),
  );
}
