/**
 * What an answer carries besides its data and errors (report.ts writes them in): the DynamoDB
 * cost in `extensions.cost.dynamodb` as the viewer may see it (capacity units only for those
 * allowed to see them, COST_DETAILS), its JSON written from its numbers, and `extensions.cache`,
 * what the response cache did (development only).
 */
import { roundUnits } from '../../db/capacity.js';
import type { RequestCost } from '../../db/capacity.js';
import type { CacheOutcome } from '../responseCache/cacheOutcome.js';

/**
 * COST_DETAILS: who sees capacity units. They depend on the data read, not only on the query
 * (DynamoDB reports 0 for a missing key and 0.5-1 for another user's item that access control
 * then hides), so they would tell "not yours" from "missing"; `requests` depends on the query's
 * shape alone and is shown to everyone.
 */
export type CostDetails = 'admin' | 'all';

export interface CostExtension {
  dynamodb: { requests: number; readCapacityUnits: number; writeCapacityUnits: number };
}

export const costExtension = (cost: RequestCost): CostExtension => ({
  dynamodb: {
    requests: cost.requests,
    readCapacityUnits: roundUnits(cost.readCapacityUnits),
    writeCapacityUnits: roundUnits(cost.writeCapacityUnits),
  },
});

/** The cost extension as `viewerRole` may see it (the log line always has it in full). */
export const visibleCost = (
  cost: RequestCost,
  costDetails: CostDetails,
  viewerRole: string | undefined,
): CostExtension | { dynamodb: { requests: number } } =>
  costDetails === 'all' || viewerRole === 'admin' ? costExtension(cost) : { dynamodb: { requests: cost.requests } };

/**
 * `{ cost }` as JSON, written from its numbers: what `JSON.stringify` gives for the same object
 * (the counts and rounded units are finite numbers, which JSON writes as `String` does).
 */
export function costExtensionsJson(cost: CostExtension | { dynamodb: { requests: number } }): string {
  const { dynamodb } = cost;
  return 'readCapacityUnits' in dynamodb
    ? `{"cost":{"dynamodb":{"requests":${dynamodb.requests},"readCapacityUnits":${dynamodb.readCapacityUnits},"writeCapacityUnits":${dynamodb.writeCapacityUnits}}}}`
    : `{"cost":{"dynamodb":{"requests":${dynamodb.requests}}}}`;
}

/** `extensions.cache`: what the cache did for this answer (development only). */
export const explainOf = (outcome: CacheOutcome): Record<string, unknown> => ({
  status: outcome.status,
  ...(outcome.ageMs === undefined ? {} : { age: Math.round(outcome.ageMs) / 1000 }),
  ...(outcome.tier ? { tier: outcome.tier } : {}),
  ...(outcome.reason ? { reason: outcome.reason } : {}),
});
