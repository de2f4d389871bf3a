/**
 * REDIS_URL as REDIS_MODE reads it: one node's URL, or a cluster's seed nodes. Checked once,
 * when the configuration loads, and again by every connection (src/events/redisConnection.ts)
 * with the same rules, so that a bad value is one clear line at start-up.
 */
import { ConfigError } from './read.js';

export type RedisMode = 'single' | 'cluster';

/** One node of REDIS_URL, as a connection needs it. */
export interface RedisNode {
  host: string;
  port: number;
  tls: boolean;
  username?: string | undefined;
  password?: string | undefined;
  /** The database number (one node only: a cluster has database 0 alone). */
  db?: number | undefined;
}

const problem = (mode: RedisMode, detail: string) =>
  new ConfigError(
    mode === 'cluster'
      ? `REDIS_URL must be a comma-separated list of redis:// or rediss:// seed node URLs with REDIS_MODE=cluster: ${detail}`
      : `REDIS_URL must be a redis:// or rediss:// URL (e.g. redis://127.0.0.1:6379): ${detail}`,
  );

/**
 * The nodes `url` names: one URL in single mode; in cluster mode one or more, all with TLS or
 * none, without a database number. Throws ConfigError naming what was expected.
 */
export function parseRedisUrl(url: string, mode: RedisMode = 'single'): RedisNode[] {
  const parts = url.split(',').map((part) => part.trim());
  if (mode === 'single' && parts.length > 1) {
    throw problem(mode, `got ${parts.length} URLs (a cluster's seed nodes need REDIS_MODE=cluster)`);
  }
  const nodes = parts.map((part): RedisNode => {
    let parsed: URL;
    try {
      parsed = new URL(part);
    } catch {
      throw problem(mode, `got "${part}"`);
    }
    if (parsed.protocol !== 'redis:' && parsed.protocol !== 'rediss:') {
      throw problem(mode, `got "${parsed.protocol}//"`);
    }
    if (parsed.hostname === '') throw problem(mode, `no host in "${part}"`);
    const db = parsed.pathname.replace(/^\//, '');
    if (db !== '' && (mode === 'cluster' || !/^\d+$/.test(db))) {
      throw problem(mode, mode === 'cluster' ? `a cluster has no database number ("${part}")` : `bad database "${db}"`);
    }
    return {
      host: parsed.hostname.replace(/^\[(.*)\]$/, '$1'),
      port: parsed.port ? Number(parsed.port) : 6379,
      tls: parsed.protocol === 'rediss:',
      ...(parsed.username ? { username: decodeURIComponent(parsed.username) } : {}),
      ...(parsed.password ? { password: decodeURIComponent(parsed.password) } : {}),
      ...(db !== '' ? { db: Number(db) } : {}),
    };
  });
  if (nodes.some((node) => node.tls !== nodes[0]?.tls)) {
    throw problem(mode, 'it mixes redis:// and rediss:// (TLS is all or nothing)');
  }
  return nodes;
}
