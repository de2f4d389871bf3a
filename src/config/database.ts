import path from 'node:path';
import type { ProcessConfig } from './process.js';
import { ConfigError, oneOf, port, text } from './read.js';
import type { Env } from './read.js';

/** Where DynamoDB is (DYNAMODB_MODE). */
export type DynamoMode = 'embedded' | 'endpoint' | 'aws';

/** The table and how to reach it: read by every process. */
export interface DatabaseConfig {
  tableName: string;
  mode: DynamoMode;
  /** Set in `endpoint` mode; the embedded mode fills it in once DynamoDB Local listens. */
  endpoint: string | undefined;
  region: string;
}

export function readDatabase(env: Env, { nodeEnv }: Pick<ProcessConfig, 'nodeEnv'>): DatabaseConfig {
  const tableName = text(env, 'TABLE_NAME');
  if (!/^[A-Za-z0-9_.-]{3,255}$/.test(tableName)) {
    throw new ConfigError(`TABLE_NAME must be 3-255 characters of A-Z a-z 0-9 _ . -, got "${tableName}"`);
  }
  const endpoint = text(env, 'DYNAMODB_ENDPOINT');
  const mode = oneOf(env, 'DYNAMODB_MODE') ?? (endpoint ? 'endpoint' : 'embedded');
  if (mode === 'embedded' && nodeEnv === 'production') {
    // DynamoDB Local has no authentication and no durability guarantees: never a production store.
    throw new ConfigError(
      'NODE_ENV=production refuses the embedded DynamoDB Local: set DYNAMODB_MODE=aws, or DYNAMODB_ENDPOINT=http://host:port',
    );
  }
  if (mode === 'endpoint' && !endpoint) {
    throw new ConfigError('DYNAMODB_MODE=endpoint needs DYNAMODB_ENDPOINT=http://host:port');
  }
  return {
    tableName,
    mode,
    endpoint: mode === 'aws' ? undefined : endpoint,
    region: text(env, 'AWS_REGION') ?? text(env, 'AWS_DEFAULT_REGION') ?? 'us-east-1',
  };
}

/** The embedded DynamoDB Local: the processes that may start it (the server, the consumer, the scripts). */
export interface LocalDatabaseConfig {
  dataDir: string;
  /** Port of the embedded DynamoDB Local (undefined: a free one). */
  localPort: number | undefined;
}

export function readLocalDatabase(env: Env): LocalDatabaseConfig {
  return { dataDir: path.resolve(text(env, 'DATA_DIR')), localPort: port(env, 'DYNAMODB_LOCAL_PORT') };
}
