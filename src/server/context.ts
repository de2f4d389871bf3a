/** The per-request GraphQL context: fresh loaders (so no cache outlives a request) and the cost record. */
import type { Logger } from 'pino';
import type { RequestCost } from '../db/capacity.js';
import { createLoaders } from '../db/loaders.js';
import type { DataSources, Loaders } from '../db/loaders.js';

export interface GraphQLContext {
  requestId: string;
  loaders: Loaders;
  data: DataSources;
  cost: RequestCost;
  log: Logger;
}

export function createContext(data: DataSources, cost: RequestCost, requestId: string, log: Logger): GraphQLContext {
  return { requestId, loaders: createLoaders(data), data, cost, log: log.child({ requestId }) };
}
