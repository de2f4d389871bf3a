/**
 * The process's logger: JSON lines, or pino-pretty's coloured lines for a person at a terminal.
 *
 * Pretty, each operation's "graphql request" line is one line (operation, transport, duration,
 * DynamoDB requests and capacity, errors, viewer); its fields follow it only at LOG_LEVEL=debug
 * or trace. JSON lines always carry every field (log collectors, the benchmark and the tests read
 * them).
 */
import { pino } from 'pino';
import type { DestinationStream, Logger } from 'pino';
import { prettyFactory } from 'pino-pretty';
import type { PrettyOptions } from 'pino-pretty';
import type { Config } from './config/index.js';

/** Tokens never reach the logs through a header. */
const REDACT = ['authorization', '*.authorization', 'headers.authorization', '*.headers.authorization'];

/** pino's numeric level of `debug`: at it and below, a request line shows its fields too. */
const DEBUG = 20;

export function createLogger(
  config: Pick<Config, 'logLevel' | 'logFormat' | 'nodeEnv'>,
  isTTY = process.stdout.isTTY === true,
  // Synchronous, in this thread: the last lines before an exit are never lost.
  out: Pick<DestinationStream, 'write'> = pino.destination({ fd: 1, sync: true }),
): Logger {
  const format = config.logFormat ?? (isTTY && config.nodeEnv !== 'production' ? 'pretty' : 'json');
  const options = { level: config.logLevel, redact: REDACT };
  if (format === 'json') return pino(options, out);
  const details = pino.levels.values[config.logLevel] !== undefined && pino.levels.values[config.logLevel]! <= DEBUG;
  return pino(
    options,
    prettyLines({ colorize: isTTY, translateTime: 'SYS:HH:MM:ss.l', ignore: 'pid,hostname' }, details, out),
  );
}

/** One JSON line of pino, as written. */
type Entry = Record<string, unknown> & { msg?: unknown };

/**
 * Lines pino-pretty would print with their fields, except the request lines: one line each
 * (their fields too when `details`).
 */
export function prettyLines(
  options: PrettyOptions,
  details: boolean,
  out: Pick<DestinationStream, 'write'>,
): DestinationStream {
  const full = prettyFactory(options);
  const oneLine = prettyFactory({ ...options, hideObject: true });
  return {
    write(line: string) {
      let entry: Entry;
      try {
        entry = JSON.parse(line) as Entry;
      } catch {
        return void out.write(line);
      }
      if (entry.msg !== 'graphql request') return void out.write(full(entry));
      const summarized = { ...entry, msg: requestSummary(entry) };
      out.write(details ? full(summarized) : oneLine(summarized));
    },
  };
}

/** `graphql Catalog (http) 12.3 ms · 2 DynamoDB requests, 1.5 RCU · alice`, from a request line's fields. */
export function requestSummary(entry: Entry): string {
  const dynamodb = (entry.dynamodb ?? {}) as {
    requests?: number;
    readCapacityUnits?: number;
    writeCapacityUnits?: number;
  };
  const requests = dynamodb.requests ?? 0;
  const units = [
    dynamodb.readCapacityUnits ? `${dynamodb.readCapacityUnits} RCU` : '',
    dynamodb.writeCapacityUnits ? `${dynamodb.writeCapacityUnits} WCU` : '',
  ].filter(Boolean);
  const errors = typeof entry.errors === 'number' ? entry.errors : 0;
  const text = (value: unknown) => (typeof value === 'string' || typeof value === 'number' ? String(value) : '?');
  return [
    `graphql ${typeof entry.operationName === 'string' ? entry.operationName : '(anonymous)'} (${text(entry.transport)}) ${text(entry.durationMs)} ms`,
    [`${requests} DynamoDB request${requests === 1 ? '' : 's'}`, ...units].join(', '),
    ...(errors > 0 ? [`${errors} error${errors === 1 ? '' : 's'}`] : []),
    ...(typeof entry.viewer === 'string' ? [entry.viewer] : []),
  ].join(' · ');
}
