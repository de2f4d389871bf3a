/**
 * A Redis cluster on this machine, as `npm run fleet -- --redis-cluster` runs it and the tests
 * do (test/support/redisCluster.ts): three primaries, no replicas, each with its own port, its
 * own cluster bus port and its own directory for the cluster state (`nodes.conf`), no
 * persistence; `redis-cli --cluster create` spreads the slots over them.
 */
import { execFile } from 'node:child_process';
import { promisify } from 'node:util';

const run = promisify(execFile);

/** How long the cluster may take to serve every slot (a node is reachable at once; agreeing takes a moment). */
const READY_TIMEOUT_MS = 30_000;

/** The arguments of one primary: `dir` must exist, and keeps its cluster state across restarts. */
export const clusterNodeArgs = (port: number, busPort: number, dir: string): string[] => [
  '--port',
  String(port),
  '--bind',
  '127.0.0.1',
  '--cluster-enabled',
  'yes',
  '--cluster-port',
  String(busPort),
  '--cluster-config-file',
  'nodes.conf',
  // Short enough that a killed primary is noticed in a test, long enough for a loaded machine.
  '--cluster-node-timeout',
  '3000',
  '--dir',
  dir,
  '--save',
  '',
  '--appendonly',
  'no',
];

/** Joins running primaries into one cluster (the slots spread evenly); resolves once it serves every slot. */
export async function createCluster(ports: readonly number[]): Promise<void> {
  await run('redis-cli', [
    '--cluster',
    'create',
    ...ports.map((port) => `127.0.0.1:${port}`),
    '--cluster-replicas',
    '0',
    '--cluster-yes',
  ]);
  await waitForCluster(ports);
}

/** Resolves once every node says the cluster is ok and serves all 16384 slots; rejects after READY_TIMEOUT_MS. */
export async function waitForCluster(ports: readonly number[]): Promise<void> {
  const deadline = performance.now() + READY_TIMEOUT_MS;
  for (;;) {
    const states = await Promise.all(
      ports.map(async (port) => {
        try {
          return (await run('redis-cli', ['-p', String(port), 'cluster', 'info'])).stdout;
        } catch {
          return '';
        }
      }),
    );
    if (states.every((info) => info.includes('cluster_state:ok') && info.includes('cluster_slots_ok:16384'))) return;
    if (performance.now() > deadline) {
      throw new Error(`the redis cluster on ports ${ports.join(', ')} did not become ready within 30 s`);
    }
    await new Promise((resolve) => setTimeout(resolve, 100));
  }
}
