/**
 * `npm run consumer`'s entry with faults where they happen: every DynamoDB and DynamoDB Streams
 * client the process creates gets the Faults middleware (faults.ts), with the rules and seed of
 * the `SOAK_FAULTS` variable (JSON: `{ "seed": 1, "rules": [FaultRule, ...], "loseInvalidations": 0.5 }`,
 * client labels `dynamodb` and `streams`). `loseInvalidations` is the share of invalidation
 * messages it never publishes (a lost invalidation, as a bug or a network would lose it; its
 * heartbeats still go out). Each injected fault is logged as a JSON line (`fault injected`), so
 * the parent process counts them. Test-only: the soaks start consumers with it.
 */
import { DynamoDBClient } from '@aws-sdk/client-dynamodb';
import { DynamoDBStreamsClient } from '@aws-sdk/client-dynamodb-streams';
import { RedisInvalidationBus } from '../../src/events/invalidationBus.js';
import { seededRandom } from '../../src/seed/seededRandom.js';
import { Faults } from './faults.js';
import type { FaultRule } from './faults.js';

const {
  seed = 1,
  rules = [],
  loseInvalidations = 0,
} = JSON.parse(process.env.SOAK_FAULTS ?? '{}') as { seed?: number; rules?: FaultRule[]; loseInvalidations?: number };
// Each process its own sequence: the same seed in every consumer would fault them in lockstep.
const faults = new Faults(seededRandom(seed * 7919 + process.pid));
for (const rule of rules) faults.inject(rule);
faults.onInjected = (kind, label, command) =>
  process.stdout.write(
    `${JSON.stringify({ level: 40, time: Date.now(), msg: 'fault injected', kind, label, command })}\n`,
  );

const attached = new WeakSet<object>();
for (const [Client, label] of [
  [DynamoDBClient, 'dynamodb'],
  [DynamoDBStreamsClient, 'streams'],
] as const) {
  const prototype = Client.prototype as unknown as { send: (...args: unknown[]) => unknown };
  const send = prototype.send;
  prototype.send = function (this: DynamoDBClient, ...args: unknown[]) {
    if (!attached.has(this)) {
      attached.add(this);
      faults.attach(this, label);
    }
    return send.apply(this, args);
  };
}

if (loseInvalidations > 0) {
  const lose = seededRandom(seed * 104_729 + process.pid);
  const bus = RedisInvalidationBus.prototype;
  const publishTags = Object.getOwnPropertyDescriptor(bus, 'publishTags')?.value as RedisInvalidationBus['publishTags'];
  bus.publishTags = function (this: RedisInvalidationBus, ...args: Parameters<typeof publishTags>) {
    if (lose() >= loseInvalidations) return publishTags.apply(this, args);
    process.stdout.write(
      `${JSON.stringify({ level: 40, time: Date.now(), msg: 'fault injected', kind: 'lost invalidation', tags: args[0].tags.length })}\n`,
    );
    // Lost without the publisher knowing (a bug, a network): it goes on beating.
    return Promise.resolve(true);
  };
}

await import('../../src/consumer/main.js');
