import type { VarSpec } from './varSpec.js';

/** Reading the table's stream, and where what it finds goes: change events on Redis, CDN purges. */
export const STREAMS_SPEC = {
  STREAM_CONSUMER: {
    type: 'boolean',
    defaultText: '`true`; `false` with `REDIS_URL` (standalone consumers) or in `aws` mode (the stream Lambda)',
    description: 'run the in-process stream consumer (soldCount, subscriptions fed by every write)',
    readBy: ['server'],
  },
  STREAM_CONSUMER_NAME: {
    type: 'string',
    defaultText: 'the host name (server); `processor` (`npm run consumer`)',
    description:
      'names the stream consumer’s checkpoints: one name per server instance; the consumers of `npm run consumer` that share a name share the work through shard leases',
    readBy: ['server', 'consumer'],
  },
  STREAM_POLL_MS: {
    type: 'integer',
    default: '200',
    description: 'pause between polls of an idle stream shard',
    readBy: ['server', 'consumer'],
  },
  CONSUMER_PORT: {
    type: 'port',
    default: '9464',
    description: 'port of `npm run consumer`’s `/healthz`, `/readyz` and `/metrics` (`0` picks a free one)',
    readBy: ['consumer'],
  },
  LEASE_TTL_MS: {
    type: 'integer',
    default: '10000',
    description: 'how long a consumer’s shard lease lasts without a heartbeat',
    readBy: ['consumer'],
  },
  REDIS_URL: {
    type: 'url',
    description:
      '`redis://` or `rediss://`: change events, invalidations and heartbeats travel over Redis pub/sub between instances (and the in-process consumer is off by default: run `npm run consumer` or the stream Lambda); with `REDIS_MODE=cluster`, a comma-separated list of seed nodes',
    readBy: ['server', 'stream-lambda', 'consumer'],
  },
  REDIS_MODE: {
    type: ['single', 'cluster'],
    default: 'single',
    description:
      '`cluster`: `REDIS_URL` names the seed nodes of a Redis or Valkey cluster (ElastiCache Serverless is one): channels use sharded pub/sub and the shared cache tier hash-tagged keys, each script in one slot',
    readBy: ['server', 'stream-lambda', 'consumer'],
  },
  REDIS_SIGNING_SECRET: {
    type: 'secret',
    description:
      'HMAC-SHA256 key (at least 32 characters) of everything written to Redis: change events, invalidations, heartbeats and shared cache entries are signed, and what is read there unsigned, forged, replayed or too old is refused and counted; set the same on every instance, consumer and stream Lambda. Required with `REDIS_URL` in production unless `REDIS_TRUSTED=true`',
    readBy: ['server', 'stream-lambda', 'consumer'],
  },
  REDIS_TRUSTED: {
    type: 'boolean',
    default: 'false',
    description:
      '`true`: in production, run on Redis without `REDIS_SIGNING_SECRET`, because only trusted processes can reach it (the network is the boundary); whoever can write there can then change what users see',
    readBy: ['server', 'stream-lambda', 'consumer'],
  },
  CDN_PURGE_URL: {
    type: 'url',
    description:
      'receives a POST `{"tags":[...]}` with the public dependency tags of every change read from the stream (batched, retried a bounded number of times), to purge a CDN by tag; sent by the process that reads the stream. A URL with credentials (`user:pass@`) is refused: put them in `CDN_PURGE_HEADERS`',
    readBy: ['server', 'stream-lambda', 'consumer'],
  },
  CDN_PURGE_HEADERS: {
    type: 'secret',
    description:
      'headers of every purge POST, `name=value` pairs with percent-encoded values (`Authorization=Bearer%20<token>`, `Fastly-Key=<key>`): how the purge hook carries credentials, which `CDN_PURGE_URL` may not',
    readBy: ['server', 'stream-lambda', 'consumer'],
  },
} as const satisfies Record<string, VarSpec>;
