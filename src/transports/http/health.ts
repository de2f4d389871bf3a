/**
 * /healthz: the process is alive and serving HTTP. /readyz: DynamoDB answers and the table is
 * ACTIVE; load balancers stop routing to an instance that is not ready. The readiness probe is
 * cached for a second so that frequent probes cost at most one DescribeTable per second.
 * /readyz `details` also report the change event bus (Redis when REDIS_URL is set), which never
 * makes an instance unready: queries and mutations do not depend on it.
 *
 * The API server and the standalone stream consumer serve these same two routes; the consumer
 * adds its own details (owner, leases held) and is not ready once it has stopped.
 */
import { DescribeTableCommand, ResourceNotFoundException } from '@aws-sdk/client-dynamodb';
import type { DynamoDBClient } from '@aws-sdk/client-dynamodb';
import type { IncomingMessage, ServerResponse } from 'node:http';
import type { EventBusHealth } from '../../events/eventBus.js';
import { sendJson } from './send.js';

type Handler = (req: IncomingMessage, res: ServerResponse) => Promise<void>;

export interface HealthOptions {
  /** Reported in /readyz `details.eventBus`. */
  eventBus?: () => EventBusHealth;
  /** More of /readyz `details` (the consumer: its owner and leases held). */
  details?: () => Record<string, unknown>;
  /** Why the process is not ready besides DynamoDB (the consumer: it has stopped); undefined when it is. */
  notReady?: () => string | undefined;
}

const READY_CACHE_MS = 1000;
// Long enough that a busy DynamoDB (or a busy machine: DynamoDB Local shares it) is not taken
// for a dead one; a dead one refuses the connection at once and is reported without waiting.
const PROBE_TIMEOUT_MS = 3000;

/** GET /healthz and GET /readyz as node:http handlers. */
export function healthRoutes(
  client: DynamoDBClient,
  tableName: string,
  {
    eventBus = () => ({ kind: 'in-process', status: 'up' }),
    details: moreDetails = () => ({}),
    notReady = () => undefined,
  }: HealthOptions = {},
): { healthz: Handler; readyz: Handler } {
  let cached: { at: number; ready: boolean; reason?: string } | undefined;
  // Probes asked for while one is under way share it: a slow DynamoDB gets one DescribeTable, not one per probe.
  let pending: Promise<{ ready: boolean; reason?: string }> | undefined;

  async function probe(): Promise<{ ready: boolean; reason?: string }> {
    try {
      const { Table } = await client.send(new DescribeTableCommand({ TableName: tableName }), {
        abortSignal: AbortSignal.timeout(PROBE_TIMEOUT_MS),
      });
      return Table?.TableStatus === 'ACTIVE'
        ? { ready: true }
        : { ready: false, reason: `table is ${Table?.TableStatus}` };
    } catch (error) {
      if (error instanceof ResourceNotFoundException) return { ready: false, reason: 'the table does not exist' };
      return { ready: false, reason: 'DynamoDB is unreachable' };
    }
  }

  const noStore = { 'cache-control': 'no-store' };
  return {
    healthz: (req, res) => sendJson(req, res, 200, { status: 'ok' }, noStore),
    readyz: async (req, res) => {
      if (!cached || Date.now() - cached.at > READY_CACHE_MS) {
        pending ??= probe().finally(() => {
          pending = undefined;
        });
        cached = { at: Date.now(), ...(await pending) };
      }
      const details = { eventBus: eventBus(), ...moreDetails() };
      const reason = cached.ready ? notReady() : cached.reason;
      await sendJson(
        req,
        res,
        reason === undefined ? 200 : 503,
        reason === undefined ? { status: 'ready', details } : { status: 'not ready', reason, details },
        noStore,
      );
    },
  };
}
