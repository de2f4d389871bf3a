/**
 * An instance fed over Redis writes the feed probe (src/streams/feedProbe.ts) when its feed has
 * been silent a while: whichever reader reads the stream (consumers, the stream Lambda) answers
 * with a heartbeat naming the probe's write time, and every instance that hears it knows that
 * its invalidations are current up to then (redisFeed.ts).
 *
 * This is how an instance fed by the stream Lambda tells a live feed from a dead one: the
 * function holds no lease to check and is not invoked while the stream is idle, so silence
 * alone cannot tell an idle stream from a dead function, and the probe makes the stream not
 * idle. Consumers beat every second anyway, so where they run the feed is never silent long
 * enough for a probe.
 *
 * Cost: one small PutItem per instance per `afterMs` (plus jitter) while the feed is silent;
 * since every instance hears every echo, a fleet on an idle stream writes about one probe per
 * `afterMs` in all, and a little more when two instances race.
 */
import { PutCommand } from '@aws-sdk/lib-dynamodb';
import type { DynamoDBDocumentClient } from '@aws-sdk/lib-dynamodb';
import type { Logger } from 'pino';
import { RefusalCounter } from '../../events/signedEnvelope.js';
import { FEED_PROBE_KEY, FEED_PROBE_WRITTEN_AT } from '../../table/keys.js';
import type { InvalidationFeed } from './invalidationFeed.js';

/** Silence before an instance writes a probe (plus up to PROBE_JITTER_MS), and the least time between two of its probes. */
export const PROBE_AFTER_MS = 1500;
/** Spreads the instances' probes, so that one of them writes and the others hear its echo. */
export const PROBE_JITTER_MS = 1000;
const CHECK_INTERVAL_MS = 250;

export interface FeedProberOptions {
  doc: DynamoDBDocumentClient;
  tableName: string;
  feed: InvalidationFeed;
  /** Names this instance in the probe (for whoever reads the table). */
  writer: string;
  log: Pick<Logger, 'warn'>;
  afterMs?: number | undefined;
  jitterMs?: number | undefined;
}

export interface FeedProber {
  /** Probes written, and writes that failed. */
  readonly stats: { written: number; failed: number };
  stop(): void;
}

export function startFeedProber(options: FeedProberOptions): FeedProber {
  const afterMs = options.afterMs ?? PROBE_AFTER_MS;
  const jitterMs = options.jitterMs ?? PROBE_JITTER_MS;
  const failures = new RefusalCounter('feed probes not written', options.log);
  const stats = { written: 0, failed: 0 };
  let lastWrite = -Infinity;
  let writing = false;
  let wait = afterMs + Math.random() * jitterMs;

  const write = async () => {
    writing = true;
    lastWrite = performance.now();
    wait = afterMs + Math.random() * jitterMs;
    try {
      await options.doc.send(
        new PutCommand({
          TableName: options.tableName,
          Item: { ...FEED_PROBE_KEY, entityType: 'Meta', [FEED_PROBE_WRITTEN_AT]: Date.now(), writer: options.writer },
        }),
      );
      stats.written++;
    } catch (error) {
      stats.failed++;
      failures.count('write failed', { err: error });
    } finally {
      writing = false;
    }
  };
  const timer = setInterval(() => {
    if (writing || options.feed.silentForMs < wait || performance.now() - lastWrite < wait) return;
    void write();
  }, CHECK_INTERVAL_MS);
  timer.unref();
  return { stats, stop: () => clearInterval(timer) };
}
