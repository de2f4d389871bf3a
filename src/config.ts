import path from 'node:path';

/** Where the server finds DynamoDB: see the README's configuration table. */
export type DynamoMode = 'embedded' | 'endpoint' | 'aws';

export interface Config {
  host: string;
  port: number;
  dataDir: string;
  tableName: string;
  mode: DynamoMode;
  /** Set in `endpoint` mode; the embedded mode fills it in once DynamoDB Local listens. */
  endpoint: string | undefined;
  region: string;
  cursorSecret: string;
  nodeEnv: string;
  logLevel: string;
}

/** Thrown for a configuration the server refuses to start with; main prints only its message. */
export class ConfigError extends Error {
  override name = 'ConfigError';
}

const DEV_CURSOR_SECRET = 'tablegraph-development-cursor-secret';

function parsePort(raw: string | undefined, fallback: number, name: string): number {
  if (raw === undefined || raw === '') return fallback;
  const port = Number(raw);
  if (!Number.isInteger(port) || port < 0 || port > 65535) {
    throw new ConfigError(`${name} must be an integer between 0 and 65535, got "${raw}"`);
  }
  return port;
}

/**
 * Reads the configuration from the environment. Throws ConfigError for a value it cannot
 * use (a bad port, an unknown DYNAMODB_MODE, production without CURSOR_SECRET).
 */
export function loadConfig(env: NodeJS.ProcessEnv = process.env): Config {
  const nodeEnv = env.NODE_ENV ?? 'development';
  const endpoint = env.DYNAMODB_ENDPOINT || undefined;
  const rawMode = env.DYNAMODB_MODE || (endpoint ? 'endpoint' : 'embedded');
  if (rawMode !== 'embedded' && rawMode !== 'endpoint' && rawMode !== 'aws') {
    throw new ConfigError(`DYNAMODB_MODE must be embedded, endpoint or aws, got "${rawMode}"`);
  }
  if (rawMode === 'endpoint' && !endpoint) {
    throw new ConfigError('DYNAMODB_MODE=endpoint needs DYNAMODB_ENDPOINT=http://host:port');
  }
  const cursorSecret = env.CURSOR_SECRET || (nodeEnv === 'production' ? '' : DEV_CURSOR_SECRET);
  if (!cursorSecret) {
    throw new ConfigError('NODE_ENV=production needs CURSOR_SECRET (a long random string that signs page cursors)');
  }
  const tableName = env.TABLE_NAME || 'MainTable';
  if (!/^[A-Za-z0-9_.-]{3,255}$/.test(tableName)) {
    throw new ConfigError(`TABLE_NAME must be 3-255 characters of A-Z a-z 0-9 _ . -, got "${tableName}"`);
  }
  return {
    host: env.HOST || '0.0.0.0',
    port: parsePort(env.PORT, 4000, 'PORT'),
    dataDir: path.resolve(env.DATA_DIR || '.data'),
    tableName,
    mode: rawMode,
    endpoint: rawMode === 'aws' ? undefined : endpoint,
    region: env.AWS_REGION || env.AWS_DEFAULT_REGION || 'us-east-1',
    cursorSecret,
    nodeEnv,
    logLevel: env.LOG_LEVEL || (nodeEnv === 'test' ? 'silent' : 'info'),
  };
}
