/**
 * A real Redis cluster of three primaries (Debian's redis-server 7, cluster mode and sharded
 * pub/sub) on free ports, each a child process with its cluster state in a directory of its
 * own, joined with `redis-cli --cluster create`; like RedisServer, a test can kill a node
 * (SIGKILL), pause it (SIGSTOP) and start it again on its port, where it takes its slots back.
 * The node arguments and the create step are the fleet's (scripts/fleet/redisCluster.ts).
 */
import { mkdirSync, mkdtempSync, rmSync } from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { Redis } from 'ioredis';
import { freePort } from '../../src/db/local.js';
import type { RedisSettings } from '../../src/events/redisConnection.js';
import { clusterNodeArgs, createCluster, waitForCluster } from '../../scripts/fleet/redisCluster.js';
import { RedisProcess } from './redisServer.js';

const START_ATTEMPTS = 3;

export class RedisCluster {
  private constructor(
    readonly nodes: RedisProcess[],
    private readonly dir: string,
  ) {}

  /**
   * Starts three primaries on free ports and joins them; resolves once every slot is served. A
   * port found free can be taken before its node binds it (by another test's server, or by an
   * outgoing connection's ephemeral port: six ports are chosen), so a node that finds its port
   * in use makes the cluster start again on other ports, a few times at most.
   */
  static async start(): Promise<RedisCluster> {
    for (let attempt = 1; ; attempt++) {
      try {
        return await RedisCluster.startOnce();
      } catch (error) {
        if (attempt >= START_ATTEMPTS || !String(error).includes('Address already in use')) throw error;
      }
    }
  }

  private static async startOnce(): Promise<RedisCluster> {
    const dir = mkdtempSync(path.join(os.tmpdir(), 'tablegraph-redis-cluster-'));
    const nodes: RedisProcess[] = [];
    for (let i = 0; i < 3; i++) {
      const [port, busPort, home] = [await freePort(), await freePort(), path.join(dir, `node-${i}`)];
      // Each node's cluster state (nodes.conf) lives there, and survives a kill for restart().
      mkdirSync(home, { recursive: true });
      nodes.push(new RedisProcess(port, clusterNodeArgs(port, busPort, home)));
    }
    const cluster = new RedisCluster(nodes, dir);
    try {
      await Promise.all(nodes.map((node) => node.start()));
      await createCluster(nodes.map((node) => node.port));
    } catch (error) {
      await cluster.dispose();
      throw error;
    }
    return cluster;
  }

  readonly mode = 'cluster';

  /** REDIS_URL in cluster mode: every node as a seed. */
  get url(): string {
    return this.nodes.map((node) => `redis://${node.key}`).join(',');
  }

  get settings(): RedisSettings {
    return { url: this.url, mode: 'cluster' };
  }

  /** The variables of a process on this cluster. */
  get env(): Record<string, string> {
    return { REDIS_URL: this.url, REDIS_MODE: 'cluster' };
  }

  /** The slot of `name` (a key, or a sharded channel). */
  async slotOf(name: string): Promise<number> {
    const client = new Redis(this.nodes[0]?.port ?? 0, { lazyConnect: true, maxRetriesPerRequest: 1 });
    try {
      await client.connect();
      return (await client.call('CLUSTER', 'KEYSLOT', name)) as number;
    } finally {
      client.disconnect();
    }
  }

  /** The primary that serves `name` (a key, or a sharded channel) now. */
  async ownerOf(name: string): Promise<RedisProcess> {
    const slot = await this.slotOf(name);
    const client = new Redis(this.nodes[0]?.port ?? 0, { lazyConnect: true, maxRetriesPerRequest: 1 });
    try {
      await client.connect();
      const ranges = (await client.call('CLUSTER', 'SLOTS')) as [number, number, [string, number]][];
      const owner = ranges.find(([from, to]) => slot >= from && slot <= to)?.[2];
      if (!owner) throw new Error(`no primary serves slot ${slot}`);
      return this.node(`127.0.0.1:${owner[1]}`);
    } finally {
      client.disconnect();
    }
  }

  /** The keys matching `pattern` on each node, by its port. */
  async keysByNode(pattern: string): Promise<Map<number, string[]>> {
    const found = new Map<number, string[]>();
    for (const node of this.nodes) {
      const client = new Redis(node.port, { lazyConnect: true, maxRetriesPerRequest: 1 });
      try {
        await client.connect();
        found.set(node.port, await client.keys(pattern));
      } finally {
        client.disconnect();
      }
    }
    return found;
  }

  /** The node listening on `key` (`host:port`, as the cluster's slot map names it). */
  node(key: string): RedisProcess {
    const node = this.nodes.find((candidate) => candidate.key === key);
    if (!node) throw new Error(`no node ${key} in this cluster`);
    return node;
  }

  /** The whole cluster down at once (SIGKILL of every node); each keeps its state for restart(). */
  async kill(): Promise<void> {
    await Promise.all(this.nodes.map((node) => node.kill()));
  }

  /** Starts the killed nodes (all, or `node`) again on their ports; resolves once the cluster serves every slot. */
  async restart(node?: RedisProcess): Promise<void> {
    await Promise.all((node ? [node] : this.nodes).map((n) => n.start()));
    await waitForCluster(this.nodes.map((n) => n.port));
  }

  /** The whole cluster hangs (SIGSTOP of every node). */
  pause(): void {
    for (const node of this.nodes) node.pause();
  }

  resume(): void {
    for (const node of this.nodes) node.resume();
  }

  /** Kills every node and removes their state (a test's clean-up). */
  async dispose(): Promise<void> {
    await this.kill();
    rmSync(this.dir, { recursive: true, force: true });
  }
}
