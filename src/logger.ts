/** The process's logger: JSON lines, or pino-pretty's coloured lines for a person at a terminal. */
import { pino } from 'pino';
import type { Logger } from 'pino';
import pretty from 'pino-pretty';
import type { Config } from './config/index.js';

/** Tokens never reach the logs through a header. */
const REDACT = ['authorization', '*.authorization', 'headers.authorization', '*.headers.authorization'];

export function createLogger(
  config: Pick<Config, 'logLevel' | 'logFormat' | 'nodeEnv'>,
  isTTY = process.stdout.isTTY === true,
): Logger {
  const format = config.logFormat ?? (isTTY && config.nodeEnv !== 'production' ? 'pretty' : 'json');
  const options = { level: config.logLevel, redact: REDACT };
  if (format === 'json') return pino(options);
  // Synchronous, in this thread: the last lines before an exit are never lost.
  return pino(
    options,
    pretty({ colorize: isTTY, sync: true, translateTime: 'SYS:HH:MM:ss.l', ignore: 'pid,hostname' }),
  );
}
