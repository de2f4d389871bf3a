/**
 * The processes `npm run bench:events` (eventsSoak.ts) measures, and how its phases act on them:
 * one DynamoDB Local (its JVM logging its garbage collection), a cluster of three Redis primaries,
 * 3 API instances and one standalone consumer as child processes, the users and products of the
 * orders, and the clients' side: placing an order, graphql-ws subscriptions, the instances'
 * metrics. The phases (eventsFanOut.ts, eventsResume.ts, eventsFaults.ts) share one rig.
 */
import { randomUUID } from 'node:crypto';
import { rmSync } from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { createClient } from 'graphql-ws';
import type { Client } from 'graphql-ws';
import WebSocket from 'ws';
import { signToken } from '../src/auth/tokens.js';
import type { ProductModel, UserModel } from '../src/table/models.js';
import { ChildServers } from '../test/support/childServers.js';
import type { ChildServer } from '../test/support/childServers.js';
import { aProduct, aUser, store } from '../test/support/factories.js';
import { metric as readMetric } from '../test/support/fanOut.js';
import { TEST_AUTH } from '../test/support/harness.js';
import { postGraphQL } from '../test/support/load.js';
import { RedisCluster } from '../test/support/redisCluster.js';
import { PLACE_ORDER } from '../test/support/writes.js';
import { startBenchTable } from './benchServer.js';
import type { BenchTable } from './benchServer.js';
import { MAX_IN_FLIGHT, measureCapacity } from './eventsPacing.js';
import type { Capacity } from './eventsPacing.js';
import { childPid } from './eventsTail.js';

/** The subscription every stream of the bench opens: the orders of its viewer. */
export const QUERY = 'subscription { orderEvents { type order { orderId } } }';

/** A line of the bench's output. */
export const out = (line: string): void => console.info(line);

/** What the rig is made of: the sizes given on the command line. */
export interface RigOptions {
  /** Users the subscriptions listen to (one more, the lonely one, is made besides). */
  users: number;
  /** Products the orders are spread over. */
  products: number;
  /** Whether to measure what DynamoDB Local alone sustains first (the fan-out's `auto` rate). */
  probeCapacity: boolean;
  /** Where the profiled instance writes its CPU profile, if one is. */
  cpuProfDir: string | undefined;
}

/** The instance profiled: the mutations all go to apis[0], so another one shows the fan-out alone. */
const PROFILED = 1;

/** Each instance's bounds raised so that the bench's thousands of sockets and subscriptions fit. */
const BOUNDS = {
  WS_MAX_SOCKETS: '20000',
  WS_MAX_OPERATIONS_PER_SOCKET: '200',
  CLIENT_MAX_CONNECTIONS: '20000',
  CLIENT_MAX_SUBSCRIPTIONS: '20000',
  SUBSCRIBE_READS_PER_INSTANCE: '1000000',
  SUBSCRIBE_READS_PER_VIEWER: '1000000',
  // Hundreds of sockets open at once on a busy machine: their connection_init may come late.
  WS_CONNECTION_INIT_TIMEOUT_MS: '30000',
};

/**
 * A metric of a child, read again once when the read fails: on a loaded machine a kept-alive
 * connection the server is closing at that moment resets (ECONNRESET).
 */
export const metric = (server: ChildServer, name: string): Promise<number> =>
  readMetric(server, name).catch(() => readMetric(server, name));

/** Closes a client's socket; one that never connected has nothing to close (its dispose() rejects). */
export const dispose = (client: Client): void => void Promise.resolve(client.dispose()).catch(() => undefined);

export class EventsRig {
  /** The graphql-ws clients opened so far (a phase that closes its own takes them out). */
  readonly clients: Client[] = [];
  /** Orders placed again after a conflict, so far. */
  orderRetries = 0;

  private constructor(
    readonly table: BenchTable,
    readonly redis: RedisCluster,
    private readonly children: ChildServers,
    /** DynamoDB Local's GC log. */
    readonly gcLog: string,
    /** DynamoDB Local's JVM. */
    readonly javaPid: number | undefined,
    /** Each user's orders are of product (its index mod their number). */
    readonly products: ProductModel[],
    readonly users: UserModel[],
    /** A user no subscription of the fan-out listens to. */
    readonly lonely: UserModel,
    readonly capacity: Capacity | undefined,
    readonly apis: ChildServer[],
    readonly consumer: ChildServer,
    private readonly admin: string,
    private readonly tokens: Map<string, string>,
    private readonly profileDir: string | undefined,
  ) {}

  /** Starts every process and stores the users and products; the capacity probe runs before the servers start. */
  static async start(options: RigOptions): Promise<EventsRig> {
    // DynamoDB Local's JVM logs its garbage collection (JAVA_TOOL_OPTIONS reaches only that java child).
    const gcLog = path.join(os.tmpdir(), `bench-events-gc-${process.pid}.log`);
    const javaOptions = process.env.JAVA_TOOL_OPTIONS;
    process.env.JAVA_TOOL_OPTIONS = `${javaOptions ?? ''} -Xlog:gc:file=${gcLog}:time`.trim();
    const table = await startBenchTable('BenchEvents');
    if (javaOptions === undefined) delete process.env.JAVA_TOOL_OPTIONS;
    else process.env.JAVA_TOOL_OPTIONS = javaOptions;
    const javaPid = childPid('java');
    const redis = await RedisCluster.start();
    const children = new ChildServers();
    // Each product is one item that every order of it and its soldCount update write: orders of one
    // product placed together conflict (retried), which is not what the fan-out measures.
    const products = Array.from({ length: options.products }, () => aProduct({ stock: 10_000_000 }));
    const users = Array.from({ length: options.users + 1 }, () => aUser());
    const lonely = users.pop()!;
    // The capacity probe's own customers and products, so that no order of a measured user precedes it.
    const probeUsers = Array.from({ length: MAX_IN_FLIGHT }, () => aUser());
    const probeProducts = Array.from({ length: MAX_IN_FLIGHT }, () => aProduct({ stock: 10_000_000 }));
    await store(table.dynamo.doc, table.tableName, {
      users: [...users, lonely, ...probeUsers],
      products: [...products, ...probeProducts],
    });
    // What DynamoDB Local alone sustains of placeOrder's work, before anything else of the bench
    // runs (for the fan-out's rounds only).
    const capacity = options.probeCapacity
      ? await measureCapacity(
          table.dynamo,
          table.tableName,
          probeUsers.map((user, i) => ({ userId: user.userId, productId: probeProducts[i]!.productId })),
        )
      : undefined;
    const apiEnv = { ...redis.env, STREAM_CONSUMER: 'false', ...BOUNDS };
    const profileDir = options.cpuProfDir;
    const apis: ChildServer[] = await Promise.all(
      [0, 1, 2].map((i) =>
        children.start(table.endpoint, table.tableName, {
          ...apiEnv,
          ...(i === PROFILED && profileDir ? { NODE_OPTIONS: `--cpu-prof --cpu-prof-dir=${profileDir}` } : {}),
        }),
      ),
    );
    // At debug, the consumer logs when each page was read and each event published (eventStages.ts).
    const consumer = await children.startConsumer(table.endpoint, table.tableName, {
      ...redis.env,
      STREAM_POLL_MS: '50',
      LOG_LEVEL: 'debug',
    });
    const admin = `Bearer ${await signToken({ userId: 'bench-admin', role: 'admin' }, TEST_AUTH)}`;
    const tokens = new Map<string, string>();
    for (const user of [...users, lonely])
      tokens.set(user.userId, await signToken({ userId: user.userId, role: 'customer' }, TEST_AUTH));
    return new EventsRig(
      table,
      redis,
      children,
      gcLog,
      javaPid,
      products,
      users,
      lonely,
      capacity,
      apis,
      consumer,
      admin,
      tokens,
      profileDir,
    );
  }

  /** A customer's token. */
  token(userId: string): string {
    return this.tokens.get(userId)!;
  }

  /** Places an order for `userId` (of its product); a conflict (orders placed at once) is tried again. */
  async placeOrder(userId: string, attempt = 1): Promise<string> {
    const u = this.users.findIndex((user) => user.userId === userId);
    const product = this.products[Math.max(0, u) % this.products.length]!;
    const result = await postGraphQL(this.apis[0]!.url, this.admin, PLACE_ORDER, {
      input: { userId, idempotencyKey: randomUUID(), items: [{ productId: product.productId, quantity: 1 }] },
    });
    const orderId = (result.body?.data as { placeOrder?: { order?: { orderId: string } } } | undefined)?.placeOrder
      ?.order?.orderId;
    if (orderId) return orderId;
    this.orderRetries++;
    if (attempt < 10) return this.placeOrder(userId, attempt + 1);
    throw new Error(`placeOrder failed: ${JSON.stringify(result.body ?? result.failure)}`);
  }

  /** Subscribes `count` times over one graphql-ws socket of `userId` at `api`; `heard` is told each order id. */
  wsSubscriptions(
    api: ChildServer,
    userId: string,
    count: number,
    heard: (orderId: string) => void,
    ended: (code: string) => void,
  ): Client {
    const client = createClient({
      url: api.url.replace(/^http/, 'ws'),
      webSocketImpl: WebSocket,
      connectionParams: { authorization: `Bearer ${this.tokens.get(userId)}` },
      retryAttempts: 0,
    });
    this.clients.push(client);
    for (let i = 0; i < count; i++)
      client.subscribe<{ orderEvents: { order: { orderId: string } } }>(
        { query: QUERY },
        {
          next: (result) => {
            const orderId = result.data?.orderEvents.order.orderId;
            if (orderId) heard(orderId);
          },
          error: (error) =>
            ended(
              (Array.isArray(error) ? (error[0] as { extensions?: { code?: string } })?.extensions?.code : undefined) ??
                'error',
            ),
          complete: () => ended('complete'),
        },
      );
    return client;
  }

  /** The subscriptions open over the 3 instances. */
  async activeSubscriptions(): Promise<number> {
    return (await Promise.all(this.apis.map((api) => metric(api, 'graphql_subscriptions_active')))).reduce(
      (a, b) => a + b,
      0,
    );
  }

  /** What each child that died said on its stderr (for a phase that failed). */
  reportExits(): void {
    for (const [i, child] of [...this.apis, this.consumer].entries()) {
      if (child.node.child.exitCode !== null || child.node.child.signalCode !== null)
        out(`${i < this.apis.length ? `api ${i}` : 'consumer'} exited: ${child.node.stderr().slice(-2000)}`);
    }
  }

  /** Closes the clients and stops every process; the profiled instance is stopped, so that it writes its profile. */
  async stop(): Promise<void> {
    for (const client of this.clients) dispose(client);
    // Stopped, not killed: node writes the CPU profile on its way out.
    if (this.profileDir && this.apis[PROFILED]) await this.children.stop(this.apis[PROFILED]);
    await this.children.killAll();
    await this.redis.dispose();
    await this.table.stop();
    rmSync(this.gcLog, { force: true });
  }
}
