/**
 * The feed probe as a stream reader sees it. An API instance whose invalidation feed has been
 * silent for a while writes the probe item (src/table/entities/meta.ts, FEED_PROBE) with the
 * time it wrote it; every reader of the stream that reads the record names that time in its
 * next heartbeat (streamOutputs.ts). A heartbeat for a probe written at T proves that the
 * reader had read that shard up to T and that the tags of what it read before went out, so an
 * instance that hears it knows its invalidations are current up to T, whoever the reader is.
 */
import { FEED_PROBE_KEY, FEED_PROBE_WRITTEN_AT } from '../table/keys.js';
import type { ChangeRecord } from './processor.js';

const stringOf = (value: unknown): string | undefined => {
  const text = (value as { S?: unknown } | undefined)?.S;
  return typeof text === 'string' ? text : undefined;
};

/** The write time of the newest probe among `records`, or undefined when none is a probe write. */
export function newestProbeIn(records: readonly ChangeRecord[]): number | undefined {
  let newest: number | undefined;
  for (const record of records) {
    const change = record.dynamodb;
    const keys = change?.Keys ?? change?.NewImage;
    if (stringOf(keys?.PK) !== FEED_PROBE_KEY.PK || stringOf(keys?.SK) !== FEED_PROBE_KEY.SK) continue;
    const written = Number((change?.NewImage?.[FEED_PROBE_WRITTEN_AT] as { N?: unknown } | undefined)?.N);
    if (Number.isSafeInteger(written) && (newest === undefined || written > newest)) newest = written;
  }
  return newest;
}
