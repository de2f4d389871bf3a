import { oneOf } from './read.js';
import type { Env } from './read.js';

/** NODE_ENV and LOG_LEVEL: read by every process. */
export interface ProcessConfig {
  nodeEnv: 'development' | 'production' | 'test';
  logLevel: 'fatal' | 'error' | 'warn' | 'info' | 'debug' | 'trace' | 'silent';
}

export function readProcess(env: Env): ProcessConfig {
  const nodeEnv = oneOf(env, 'NODE_ENV');
  // The test suite's servers log nothing unless a test asks.
  return { nodeEnv, logLevel: oneOf(env, 'LOG_LEVEL') ?? (nodeEnv === 'test' ? 'silent' : 'info') };
}

export const isProduction = (config: Pick<ProcessConfig, 'nodeEnv'>): boolean => config.nodeEnv === 'production';
