import type { VarSpec } from './varSpec.js';

/** The process itself: its mode and how much it logs. */
export const PROCESS_SPEC = {
  NODE_ENV: {
    type: ['development', 'production', 'test'],
    default: 'development',
    description:
      '`production` refuses development secrets and turns introspection and the playground off; `test` silences the logs',
    readBy: ['server', 'graphql-lambda', 'stream-lambda', 'consumer', 'scripts'],
  },
  LOG_LEVEL: {
    type: ['fatal', 'error', 'warn', 'info', 'debug', 'trace', 'silent'],
    defaultText: '`info` (`silent` when `NODE_ENV=test`)',
    description: 'pino log level',
    readBy: ['server', 'graphql-lambda', 'stream-lambda', 'consumer', 'scripts'],
  },
} as const satisfies Record<string, VarSpec>;
