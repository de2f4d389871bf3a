/**
 * The table's bookkeeping: the stream consumers' checkpoints, leases and heartbeats, the demo
 * marker, the migrations' records and the trusted-documents registry. No answer of the API reads
 * them (a point read of one makes an answer uncacheable), so they name no tags; their modules
 * (src/streams/, src/seed/, src/migrations/, src/db/documentRegistry.ts and
 * documentRegistryWrites.ts) write and read their attributes.
 */
import { assertAppName, assertAppVersion, describe, InvalidKeyError } from '../ids.js';
import { defineEntity } from './entity.js';
import { checked, id, key, text } from './template.js';

/** Shard ids come from DynamoDB (`shardId-00000001796221861662-1f9b9f29`), consumer names from configuration. */
const SHARD_ID_PATTERN = /^[A-Za-z0-9_.-]{1,128}$/;
/** A lease owner: host, pid and a random part. */
const WORKER_PATTERN = /^[A-Za-z0-9_.:-]{1,200}$/;

// Not user input, but a '#' in one would still address another consumer's item.
const shardId = () =>
  text(
    'shardId',
    SHARD_ID_PATTERN,
    'shardId-00000001796221861662-1f9b9f29',
    (value) => new Error(`unexpected shard id ${describe(value)}`),
  );
const consumer = () => id('consumerName');

/** The partition of the stream consumers' checkpoints, leases and heartbeats. */
export const STREAM_PK = key`META#stream`;

export const STREAM_CHECKPOINT = defineEntity({
  type: 'Meta',
  item: 'stream checkpoint',
  holds: "a consumer's position in one shard (src/streams/checkpoints.ts)",
  key: { PK: STREAM_PK, SK: key`CONSUMER#${consumer()}#SHARD#${shardId()}` },
  visibility: 'admin',
  tags: [],
});

/** The one consumer (of those that share `consumerName`) that may read a shard now (src/streams/leases.ts). */
export const STREAM_LEASE = defineEntity({
  type: 'Meta',
  item: 'shard lease',
  holds: 'owner, epoch (the fence of every side effect), expiry',
  key: { PK: STREAM_PK, SK: key`LEASE#${consumer()}#SHARD#${shardId()}` },
  visibility: 'admin',
  tags: [],
});

/** A running consumer, renewed with its leases: how the consumers count each other (src/streams/shardLeases.ts). */
export const STREAM_WORKER = defineEntity({
  type: 'Meta',
  item: 'consumer heartbeat',
  holds: 'owner, expiry',
  key: {
    PK: STREAM_PK,
    SK: key`WORKER#${consumer()}#${text('worker', WORKER_PATTERN, 'host-1:4242:a1b2', (value) => new Error(`unexpected consumer owner ${describe(value)}`))}`,
  },
  visibility: 'admin',
  tags: [],
});

/**
 * Written by an API instance whose invalidation feed fell silent, and read back from the stream:
 * a stream reader that reads it names its write time in a heartbeat, which proves to every
 * instance that changes reach its cache through the reader (src/pipeline/responseCache/feedProber.ts).
 * One item, overwritten by every probe: each write is a stream record of its own.
 */
export const FEED_PROBE_WRITTEN_AT = 'writtenAt';

export const FEED_PROBE = defineEntity({
  type: 'Meta',
  item: 'feed probe',
  holds: `${FEED_PROBE_WRITTEN_AT} (epoch ms), writer`,
  key: { PK: STREAM_PK, SK: key`FEED_PROBE` },
  visibility: 'admin',
  tags: [],
});

/** Records that the demo data was written (src/seed/). */
export const SEED_MARKER = defineEntity({
  type: 'Meta',
  item: 'demo marker',
  holds: 'when the demo data was written',
  key: { PK: key`META#seed`, SK: key`DEMO` },
  visibility: 'admin',
  tags: [],
});

/** The partition of the migrations' records: one item per migration, version and history. */
export const MIGRATIONS_PK = key`META#migrations`;

export const MIGRATION = defineEntity({
  type: 'Meta',
  item: 'migration record',
  holds: 'state, started/applied at, runs, checkpoint ([migrations.md](migrations.md))',
  key: { PK: MIGRATIONS_PK, SK: key`MIGRATION#${id('id', 'migration')}` },
  visibility: 'admin',
  tags: [],
});

/**
 * The trusted-documents registry: one partition holds its head (a revision every change
 * increments, and the totals the bounds are checked against) and one item per app manifest;
 * each manifest's documents live in a partition of their own, one item per document, so a
 * manifest is read with one paginated Query and retired without touching the others.
 */
export const DOCUMENT_REGISTRY_PK = key`META#documents`;

export const DOCUMENT_REGISTRY_HEAD = defineEntity({
  type: 'Meta',
  item: 'trusted-documents registry head',
  holds: 'revision, documentCount, bytes',
  key: { PK: DOCUMENT_REGISTRY_PK, SK: key`HEAD` },
  visibility: 'admin',
  tags: [],
});

const appName = () => checked('app', assertAppName, 'storefront');
const appVersion = () => checked('version', assertAppVersion, '1.4.0');

export const APP_MANIFEST = defineEntity({
  type: 'AppManifest',
  item: 'app manifest',
  holds: 'app, version, documentCount, bytes, contentId, publishedAt',
  key: { PK: DOCUMENT_REGISTRY_PK, SK: key`MANIFEST#${appName()}#${appVersion()}` },
  visibility: 'admin',
  tags: [],
});

const SHA256_HEX = /^[0-9a-f]{64}$/;
const CONTENT_ID = /^[0-9a-f]{16}$/;

/** The partition of one manifest's documents; `contentId` (hex) names its content. */
export const MANIFEST_DOCUMENTS_PK = key`DOCUMENTS#${appName()}#${appVersion()}#${text(
  'contentId',
  CONTENT_ID,
  '0123456789abcdef',
  (value) => new Error(`unexpected manifest content id ${describe(value)}`),
)}`;

/** A document's item, by the sha256 of its text (whatever id the client sends for it). */
export const TRUSTED_DOCUMENT = defineEntity({
  type: 'TrustedDocument',
  item: 'trusted document',
  holds: 'id, sha256, document',
  key: {
    PK: MANIFEST_DOCUMENTS_PK,
    SK: key`DOC#${text('sha256', SHA256_HEX, 'ab'.repeat(32), (value) => new InvalidKeyError(`not a sha256 hex digest: ${describe(value)}`, 'hash'))}`,
  },
  visibility: 'admin',
  tags: [],
});

/**
 * One part of a manifest's index (the ids and sha256 of its documents, without their texts, a
 * line each), beside its documents: a process learns what is trusted without reading every text.
 */
export const MANIFEST_INDEX_PART = defineEntity({
  type: 'Meta',
  item: 'manifest index part',
  holds: 'entries (one line per document: its sha256, and its id when that differs)',
  key: {
    PK: MANIFEST_DOCUMENTS_PK,
    SK: key`INDEX#${text('part', /^[0-9]{4}$/, '0000')}`,
  },
  visibility: 'admin',
  tags: [],
});
