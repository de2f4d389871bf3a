/**
 * The start-up the single-server benches share: DynamoDB Local in memory with one table, and the
 * server in front of it as the tests start it (loopback, a free port, no playground), its log
 * lines handed to the bench as parsed JSON, so a bench reads the server's own account of each
 * request.
 */
import { Writable } from 'node:stream';
import { pino } from 'pino';
import type { LevelWithSilent } from 'pino';
import { createDynamo } from '../src/db/client.js';
import type { Dynamo } from '../src/db/client.js';
import { CursorCodec } from '../src/db/cursor.js';
import { ensureTable } from '../src/db/ensureTable.js';
import { startLocalDynamo } from '../src/db/local.js';
import { startApp } from '../test/support/app.js';
import type { AppOptions, RunningApp } from '../test/support/app.js';

export const BENCH_AUTH = { secret: 'bench-jwt-secret', issuer: 'tablegraph-local', audience: 'tablegraph' };

export interface BenchTable {
  endpoint: string;
  tableName: string;
  /** A client of the table, for seeding and for a server that needs no middleware of its own. */
  dynamo: Dynamo;
  /** Destroys the client and stops DynamoDB Local. */
  stop(): Promise<void>;
}

/** Starts DynamoDB Local (in memory) and creates `tableName` in it. */
export async function startBenchTable(tableName: string): Promise<BenchTable> {
  const local = await startLocalDynamo();
  const dynamo = createDynamo({ endpoint: local.endpoint, region: 'us-east-1' });
  await ensureTable(dynamo.client, tableName, local.endpoint);
  return {
    endpoint: local.endpoint,
    tableName,
    dynamo,
    async stop() {
      dynamo.client.destroy();
      await local.stop();
    },
  };
}

export type LogEntry = Record<string, unknown> & { msg?: string };

export interface BenchServerOptions extends Pick<AppOptions, 'limits' | 'streams' | 'websocket'> {
  /** The server's DynamoDB client; the table's own when absent. */
  dynamo?: Dynamo;
  /** The lowest log level handed to `onLog`. */
  level: LevelWithSilent;
  onLog?: (entry: LogEntry) => void;
}

/** The server in front of `table`. Stop it with `app.stop()`; a `dynamo` given stays the caller's. */
export function startBenchServer(table: BenchTable, options: BenchServerOptions): Promise<RunningApp> {
  const sink = new Writable({
    write(chunk: Buffer, _encoding, done) {
      for (const line of chunk.toString().split('\n').filter(Boolean)) options.onLog?.(JSON.parse(line) as LogEntry);
      done();
    },
  });
  return startApp({
    host: '127.0.0.1',
    port: 0,
    data: {
      dynamo: options.dynamo ?? table.dynamo,
      tableName: table.tableName,
      cursors: new CursorCodec('bench-cursor-secret'),
    },
    log: pino({ level: options.level }, sink),
    auth: BENCH_AUTH,
    playground: false,
    ...(options.limits ? { limits: options.limits } : {}),
    ...(options.streams ? { streams: options.streams } : {}),
    ...(options.websocket ? { websocket: options.websocket } : {}),
  });
}
