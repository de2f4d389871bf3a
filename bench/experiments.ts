/**
 * Measurements behind the optimization notes: where a request's time goes (HTTP + GraphQL with
 * no DynamoDB call; one DynamoDB round trip on its own), what keep-alive is worth, and whether
 * projecting only the shown attributes pays off.
 */
import { BatchGetCommand, GetCommand, QueryCommand } from '@aws-sdk/lib-dynamodb';
import { createDynamo } from '../src/db/client.js';
import { orderKey, productKey, userPK } from '../src/table/keys.js';
import type { Dataset } from './dataset.js';
import { percentiles, postGraphQL, runLoadWhenQuiet, warmUp } from './load.js';
import type { LoadResult, LoadTarget } from './load.js';
import { microCosts } from './microCosts.js';
import type { MicroCost } from './microCosts.js';
import { PING_QUERY } from './operations.js';
import type { Operation } from './operations.js';
import { waitUntilIdle } from './procs.js';
import { mergeProfiles, profileSystem } from './profile.js';
import type { ServerProfile } from './profile.js';
import type { Child } from './procs.js';
import { startSystem, SYSTEMS } from './systems.js';
import type { SystemId } from './systems.js';

export interface ExperimentRow {
  experiment: string;
  variant: string;
  op: string;
  connections: number;
  result: Pick<
    LoadResult,
    | 'requests'
    | 'requestsPerSecond'
    | 'latencyMs'
    | 'cpuMsPerRequest'
    | 'dbCpuMsPerRequest'
    | 'responseBytes'
    | 'backgroundCores'
  >;
}

export interface ExperimentContext {
  dbPid: number;
  headers: Record<string, string>;
  seconds: number;
  warmupSeconds: number;
  seed: number;
  settle: () => Promise<void>;
  progress: (message: string) => void;
}

export async function measure(
  context: ExperimentContext,
  experiment: string,
  variant: string,
  target: LoadTarget,
  op: Pick<Operation, 'id' | 'operationName' | 'query' | 'variables'>,
  connections: number,
  headers: Record<string, string> = context.headers,
): Promise<ExperimentRow> {
  const spec = { target, dbPid: context.dbPid, operationName: op.operationName, query: op.query, connections, headers };
  await context.settle();
  await warmUp({
    ...spec,
    variables: op.variables(context.seed + 7, `xw-${variant}-${connections}`),
    seconds: context.warmupSeconds,
  });
  await context.settle();
  const result = await runLoadWhenQuiet(
    { ...spec, variables: op.variables(context.seed, `x-${variant}-${connections}`), seconds: context.seconds },
    context.settle,
  );
  if (result.failures > 0)
    throw new Error(`${experiment} / ${variant}: ${result.failures} failed requests, e.g. ${result.failureSample}`);
  context.progress(
    `  ${experiment} | ${variant} | ${op.id} c=${connections}: p50 ${result.latencyMs.p50.toFixed(2)} ms, ${result.requestsPerSecond.toFixed(0)} req/s, CPU ${result.cpuMsPerRequest.toFixed(2)} ms/req`,
  );
  const { requests, requestsPerSecond, latencyMs, cpuMsPerRequest, dbCpuMsPerRequest, responseBytes, backgroundCores } =
    result;
  return {
    experiment,
    variant,
    op: op.id,
    connections,
    result: {
      requests,
      requestsPerSecond,
      latencyMs,
      cpuMsPerRequest,
      dbCpuMsPerRequest,
      responseBytes,
      backgroundCores,
    },
  };
}

export const pingOperation: Pick<Operation, 'id' | 'operationName' | 'query' | 'variables'> = {
  id: 'ping',
  operationName: 'Ping',
  query: PING_QUERY,
  variables: () => () => ({}),
};

export interface RoundTrip {
  call: string;
  samples: number;
  p50: number;
  p95: number;
  mean: number;
}

/** One DynamoDB call at a time from this process (keep-alive client): the unit every plan multiplies. */
export async function dynamoRoundTrips(
  endpoint: string,
  tableName: string,
  data: Dataset,
  samples = 300,
): Promise<RoundTrip[]> {
  const { client, doc } = createDynamo({ endpoint, region: 'us-east-1' });
  const user = data.users[0];
  const order = data.orders[0];
  if (!user || !order) throw new Error('empty dataset');
  const productKeys = data.products.slice(0, 20).map((product) => productKey(product.productId));
  const calls: [string, () => Promise<unknown>][] = [
    [
      'GetItem (order, strongly consistent)',
      () => doc.send(new GetCommand({ TableName: tableName, Key: orderKey(order.orderId), ConsistentRead: true })),
    ],
    [
      'BatchGetItem, 20 products',
      () =>
        doc.send(new BatchGetCommand({ RequestItems: { [tableName]: { Keys: productKeys, ConsistentRead: true } } })),
    ],
    [
      'Query, 21 orders of a user',
      () =>
        doc.send(
          new QueryCommand({
            TableName: tableName,
            KeyConditionExpression: 'PK = :pk AND begins_with(SK, :p)',
            ExpressionAttributeValues: { ':pk': userPK(user.userId), ':p': 'ORDER#' },
            ScanIndexForward: false,
            ConsistentRead: true,
            Limit: 21,
          }),
        ),
    ],
  ];
  const rows: RoundTrip[] = [];
  for (const [call, send] of calls) {
    for (let i = 0; i < 30; i++) await send();
    const times: number[] = [];
    for (let i = 0; i < samples; i++) {
      const started = performance.now();
      await send();
      times.push(performance.now() - started);
    }
    const { p50, p95, mean } = percentiles(times);
    rows.push({ call, samples, p50, p95, mean });
  }
  client.destroy();
  return rows;
}

export interface ExperimentOptions {
  context: ExperimentContext;
  endpoint: string;
  tableName: string;
  data: Dataset;
  ops: Operation[];
  children: Map<SystemId, Child>;
  highConnections: number;
  /** Registers how to stop a process started here, should the run be interrupted. */
  onStart: (stop: () => Promise<void>) => void;
}

export interface ExperimentResults {
  roundTrips: RoundTrip[];
  rows: ExperimentRow[];
  profile: ServerProfile | undefined;
  micro: MicroCost[];
}

export async function runExperiments(options: ExperimentOptions): Promise<ExperimentResults> {
  const { context, endpoint, tableName, data, ops, children, highConnections } = options;
  const rows: ExperimentRow[] = [];
  const targetOf = (child: Child, query = '') => ({ url: child.url + query, pid: child.pid });
  const levels = [...new Set([1, highConnections])];
  /** Starts another instance and warms it up like the long-running ones (JIT, sockets). */
  const start = async (
    id: SystemId,
    extraEnv: Record<string, string>,
    warmOps: Operation[],
    headers = context.headers,
  ) => {
    const child = await startSystem(SYSTEMS[id], { endpoint, tableName, headers, extraEnv });
    options.onStart(() => child.stop());
    await waitUntilIdle(child.pid);
    for (const op of warmOps) {
      await warmUp({
        target: targetOf(child),
        dbPid: context.dbPid,
        operationName: op.operationName,
        query: op.query,
        variables: op.variables(context.seed + 11, `xs-${id}`),
        connections: 4,
        seconds: 2,
        headers,
      });
    }
    return child;
  };

  const roundTrips = await dynamoRoundTrips(endpoint, tableName, data);
  for (const trip of roundTrips) context.progress(`  ${trip.call}: p50 ${trip.p50.toFixed(2)} ms`);

  // The fixed cost of a request: HTTP, JSON, GraphQL and the server's plugins, no DynamoDB call.
  for (const [id, child] of children) {
    rows.push(await measure(context, 'no DynamoDB call', `${SYSTEMS[id].label}`, targetOf(child), pingOperation, 1));
  }
  const server = children.get('server');
  if (server) {
    // `{ __typename }` needs no sign-in: without the header the server skips verifying the JWT.
    rows.push(
      await measure(
        context,
        'no DynamoDB call',
        'tablegraph, no Authorization header',
        targetOf(server),
        pingOperation,
        1,
        {},
      ),
    );
  }

  // The GraphQL stack on a one-request operation: what each layer adds over the raw chain.
  const categoryPage = ops.find((op) => op.id === 'categoryPage');
  const raw = children.get('raw');
  const naive = children.get('naive');
  if (categoryPage) {
    const stack = 'GraphQL stack (1 Query)';
    if (raw) rows.push(await measure(context, stack, 'raw chain (no GraphQL)', targetOf(raw), categoryPage, 1));
    if (naive) {
      rows.push(await measure(context, stack, 'Apollo + Express, NODE_ENV unset', targetOf(naive), categoryPage, 1));
      const lean = await start('naive', { NODE_ENV: 'production', NAIVE_CACHE_CONTROL: 'off' }, [categoryPage]);
      rows.push(
        await measure(
          context,
          stack,
          'Apollo + Express, production, cache-control plugin off',
          targetOf(lean),
          categoryPage,
          1,
        ),
      );
      await lean.stop();
    }
    if (server) {
      // Both modes from a fresh process with the same warm-up: the long-running server has served
      // every load cell by now, and a process in its first thousand requests still spends CPU on
      // compiling (on other threads, charged to it), which made production look the dearer mode.
      // No playground: a bundled server in development would serve it from client/, which the bundle's folder lacks.
      const development = await start('server', { NODE_ENV: 'development', PLAYGROUND: 'false' }, [categoryPage]);
      rows.push(
        await measure(context, stack, 'tablegraph, NODE_ENV=development', targetOf(development), categoryPage, 1),
      );
      await development.stop();
      const production = await start('server', {}, [categoryPage]);
      rows.push(
        await measure(context, stack, 'tablegraph, NODE_ENV=production', targetOf(production), categoryPage, 1),
      );
      await production.stop();
    }
  }

  const userOrders = ops.find((op) => op.id === 'userOrders');

  // Where the CPU goes, by layer, from V8's sampling profiler: tablegraph and the raw chain on
  // every operation (the same DynamoDB requests, so the difference between two columns is what
  // the GraphQL server adds), and the plain Apollo + Express stack of the naive peer on the
  // operation where it makes the same call.
  let profile: ServerProfile | undefined;
  const profiled: { system: SystemId; ops: Operation[]; ping: boolean }[] = [];
  if (server) profiled.push({ system: 'server', ops, ping: true });
  if (naive && categoryPage) profiled.push({ system: 'naive', ops: [categoryPage], ping: true });
  if (raw) profiled.push({ system: 'raw', ops, ping: false });
  if (profiled.length > 0) {
    const profiles: ServerProfile[] = [];
    for (const { system, ops: profiledOps, ping } of profiled) {
      context.progress(`  profiling ${SYSTEMS[system].label} (--cpu-prof)`);
      profiles.push(
        await profileSystem({
          system,
          systemEnv: { endpoint, tableName, headers: context.headers },
          dbPid: context.dbPid,
          headers: context.headers,
          ops: ping ? [pingOperation, ...profiledOps] : profiledOps,
          // Twice a load cell: the per-layer figures are differences of small numbers.
          seconds: context.seconds * 2,
          warmupSeconds: context.warmupSeconds,
          seed: context.seed,
          settle: context.settle,
          onStart: options.onStart,
        }),
      );
    }
    profile = mergeProfiles(profiles);
    for (const op of profile.operations) {
      context.progress(
        `    ${op.id}: ${op.msPerRequest.toFixed(2)} ms per request (profiled, ${op.requests} requests)`,
      );
    }
  }

  if (raw && userOrders) {
    // What keep-alive is worth: the same raw chain opening a new connection for every call.
    const noKeepAlive = await start('raw', { BENCH_KEEPALIVE: 'false' }, [userOrders]);
    for (const connections of levels) {
      rows.push(await measure(context, 'keep-alive', 'raw chain, keep-alive', targetOf(raw), userOrders, connections));
      rows.push(
        await measure(
          context,
          'keep-alive',
          'raw chain, new connection per call',
          targetOf(noKeepAlive),
          userOrders,
          connections,
        ),
      );
    }
    await noKeepAlive.stop();
    // Whether projecting only the shown attributes pays off (it saves bytes and parsing; RCU are billed on whole items).
    for (const connections of levels) {
      rows.push(await measure(context, 'projection', 'raw chain, whole items', targetOf(raw), userOrders, connections));
      rows.push(
        await measure(
          context,
          'projection',
          'raw chain, projected',
          targetOf(raw, '?plan=projected'),
          userOrders,
          connections,
        ),
      );
    }
  }
  let userOrdersBody: string | undefined;
  if (server && userOrders) {
    const body = await postGraphQL(
      server.url,
      context.headers,
      userOrders.operationName,
      userOrders.query,
      userOrders.variables(context.seed, 'micro')(),
    );
    userOrdersBody = JSON.stringify(body);
  }
  const micro = await microCosts(data, userOrdersBody);
  for (const row of micro) context.progress(`  ${row.piece}: ${row.microseconds.toFixed(1)} µs`);
  return { roundTrips, rows, profile, micro };
}
