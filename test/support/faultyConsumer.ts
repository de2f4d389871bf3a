/**
 * `npm run consumer`'s entry with faults where they happen: every DynamoDB and DynamoDB Streams
 * client the process creates gets the Faults middleware (faults.ts), with the rules and seed of
 * the `SOAK_FAULTS` variable (JSON: `{ "seed": 1, "rules": [FaultRule, ...] }`, client labels
 * `dynamodb` and `streams`). Each injected fault is logged as a JSON line (`fault injected`), so
 * the parent process counts them. Test-only: the soak starts consumers with it.
 */
import { DynamoDBClient } from '@aws-sdk/client-dynamodb';
import { DynamoDBStreamsClient } from '@aws-sdk/client-dynamodb-streams';
import { seededRandom } from '../../src/seed/seededRandom.js';
import { Faults } from './faults.js';
import type { FaultRule } from './faults.js';

const { seed = 1, rules = [] } = JSON.parse(process.env.SOAK_FAULTS ?? '{}') as { seed?: number; rules?: FaultRule[] };
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

await import('../../src/consumer/main.js');
