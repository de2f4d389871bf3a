/**
 * REDIS_URL and REDIS_MODE as a process reads them, and the options every connection gets:
 * one node's URL or a cluster's seed nodes, TLS and credentials carried to every node a
 * cluster connection opens, node names used as given.
 */
import { describe, expect, it } from 'vitest';
import { ConfigError, loadServerConfig } from '../../src/config/index.js';
import { parseRedisUrl } from '../../src/config/redisUrl.js';
import { clusterOptions, redisOptions } from '../../src/events/redisConnection.js';

describe('REDIS_URL with REDIS_MODE', () => {
  it('takes one node by default, and a cluster’s comma-separated seed nodes with REDIS_MODE=cluster', () => {
    expect(loadServerConfig({ REDIS_URL: 'redis://127.0.0.1:6379' })).toMatchObject({ redisMode: 'single' });
    const seeds = 'rediss://user:pa%40ss@a.example.com:6379, rediss://b.example.com';
    expect(loadServerConfig({ REDIS_URL: seeds, REDIS_MODE: 'cluster' })).toMatchObject({ redisMode: 'cluster' });
    expect(parseRedisUrl(seeds, 'cluster')).toEqual([
      { host: 'a.example.com', port: 6379, tls: true, username: 'user', password: 'pa@ss' },
      { host: 'b.example.com', port: 6379, tls: true },
    ]);
  });

  it.each([
    ['single', 'redis://a:6379,redis://b:6379', "a cluster's seed nodes need REDIS_MODE=cluster"],
    ['cluster', 'redis://a:6379/2', 'a cluster has no database number'],
    ['cluster', 'redis://a:6379,rediss://b:6379', 'TLS is all or nothing'],
    ['cluster', 'redis://a:6379,http://b:6379', 'seed node URLs with REDIS_MODE=cluster: got "http://"'],
    ['single', 'redis://:6379', 'got "redis://:6379"'],
  ])('refuses REDIS_MODE=%s with REDIS_URL=%s, naming what is wrong', (mode, url, message) => {
    const load = () => loadServerConfig({ REDIS_URL: url, REDIS_MODE: mode });
    expect(load).toThrow(ConfigError);
    expect(load).toThrow(message);
  });

  it('refuses a mode it does not know', () => {
    expect(() => loadServerConfig({ REDIS_URL: 'redis://a:6379', REDIS_MODE: 'sentinel' })).toThrow(
      'REDIS_MODE must be single, cluster, got "sentinel"',
    );
  });
});

describe('connection options', () => {
  it('fail a command at once while disconnected and after its timeout while Redis hangs; a subscriber queues', () => {
    expect(redisOptions({ role: 'publisher' })).toMatchObject({
      enableOfflineQueue: false,
      maxRetriesPerRequest: 0,
      commandTimeout: 1000,
      lazyConnect: true,
      connectionName: 'tablegraph-publisher',
    });
    const subscriber = redisOptions({ role: 'subscriber', subscriber: true });
    expect(subscriber).toMatchObject({ enableOfflineQueue: true, autoResubscribe: false });
    expect(subscriber.commandTimeout).toBeUndefined();
    const backoff = redisOptions({ role: 'x' }).retryStrategy as (times: number) => number;
    expect([1, 2, 3, 10, 1000].map(backoff)).toEqual([50, 100, 200, 2000, 2000]);
  });

  it('give a cluster connection the same per-node options, the seed’s TLS and credentials, and names as given', () => {
    const [seed] = parseRedisUrl('rediss://user:secret@cache.example.com:6379', 'cluster');
    const options = clusterOptions({ role: 'publisher', commandTimeoutMs: 250 }, seed!);
    expect(options).toMatchObject({ lazyConnect: true, enableOfflineQueue: false, slotsRefreshTimeout: 2000 });
    expect(options.redisOptions).toMatchObject({
      tls: {},
      username: 'user',
      password: 'secret',
      commandTimeout: 250,
      maxRetriesPerRequest: 0,
      connectionName: 'tablegraph-publisher',
    });
    expect((options.clusterRetryStrategy as (times: number) => number)(3)).toBe(200);
    let looked: string | undefined;
    options.dnsLookup?.('node-1.cache.example.com', (_error, address) => (looked = address));
    expect(looked).toBe('node-1.cache.example.com');
  });
});
