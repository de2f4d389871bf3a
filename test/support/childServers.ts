/**
 * The real server (`src/main.ts`) as child processes against a DynamoDB endpoint the test
 * chose, so a test can kill the server, or the database under it. Every child is tracked and
 * killed by killAll(), which a test file calls in afterAll whatever happened.
 */
import { freePort } from '../../src/db/local.js';
import { runNode } from './serverProcess.js';
import type { NodeProcess } from './serverProcess.js';
import { TEST_AUTH } from './harness.js';

export interface ChildServer {
  node: NodeProcess;
  port: number;
  /** `http://127.0.0.1:<port>` */
  origin: string;
  /** `<origin>/graphql` */
  url: string;
}

const READY = (line: { msg: string }) => line.msg.startsWith('tablegraph ready at');
const CONSUMER_READY = (line: { msg: string }) => line.msg.startsWith('tablegraph consumer ready');

export class ChildServers {
  private readonly running = new Set<NodeProcess>();

  /**
   * Starts `node --import tsx src/main.ts` on a free port against `endpoint` / `tableName`
   * (no demo data; tokens of the test issuer accepted) and waits for its ready line.
   */
  async start(endpoint: string, tableName: string, env: Record<string, string> = {}): Promise<ChildServer> {
    const port = await freePort();
    const node = runNode('src/main.ts', {
      DYNAMODB_ENDPOINT: endpoint,
      TABLE_NAME: tableName,
      HOST: '127.0.0.1',
      PORT: String(port),
      SEED_DEMO_DATA: 'false',
      LOG_LEVEL: 'info',
      JWT_SECRET: TEST_AUTH.secret as string,
      PLAYGROUND: 'false',
      ...env,
    });
    this.running.add(node);
    void node.exited.then(() => this.running.delete(node));
    await node.waitForLog(READY, 'the ready line');
    const origin = `http://127.0.0.1:${port}`;
    return { node, port, origin, url: `${origin}/graphql` };
  }

  /**
   * Starts `npm run consumer`'s entry (src/consumer/main.ts) against `endpoint` / `tableName`,
   * its /healthz, /readyz and /metrics on a free port, and waits for its ready line.
   */
  async startConsumer(
    endpoint: string,
    tableName: string,
    env: Record<string, string> = {},
    // test/support/faultyConsumer.ts: the same consumer with SDK faults injected (SOAK_FAULTS).
    entry = 'src/consumer/main.ts',
  ): Promise<ChildServer> {
    const node = runNode(entry, {
      DYNAMODB_ENDPOINT: endpoint,
      TABLE_NAME: tableName,
      HOST: '127.0.0.1',
      CONSUMER_PORT: '0',
      LOG_LEVEL: 'info',
      ...env,
    });
    this.running.add(node);
    void node.exited.then(() => this.running.delete(node));
    const ready = await node.waitForLog(CONSUMER_READY, 'the consumer ready line');
    const port = ready.port as number;
    const origin = `http://127.0.0.1:${port}`;
    return { node, port, origin, url: origin };
  }

  /** SIGKILL, the way a crash or an OOM kill ends a process; resolves once it has exited. */
  async kill(server: ChildServer): Promise<void> {
    server.node.child.kill('SIGKILL');
    await server.node.exited;
  }

  /** SIGTERM, the way an orchestrator stops a process (a consumer releases its leases); resolves once it has exited. */
  async stop(server: ChildServer): Promise<void> {
    server.node.child.kill('SIGTERM');
    await server.node.exited;
  }

  /** Kills every child still running (they own no other process: the database is the test's). */
  async killAll(): Promise<void> {
    await Promise.all(
      [...this.running].map((node) => {
        node.child.kill('SIGKILL');
        return node.exited;
      }),
    );
  }
}
