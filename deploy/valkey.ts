/**
 * The fleet's Redis: ElastiCache Serverless for Valkey, which runs in cluster mode only, always
 * with TLS and encryption at rest. It carries the change events, the invalidations and their
 * heartbeats, and the response cache's shared tier, so its clients run with `REDIS_MODE=cluster`.
 * Only the API and consumer tasks' security groups reach it. Its usage limits bound what it
 * stores and how fast it works, and so its bill: past the storage limit it evicts keys that have
 * a TTL (every cache entry has one), past the ECPU limit it throttles (an alarm, fleetAlarms.ts).
 */
import { Aws, Fn } from 'aws-cdk-lib';
import { Port, SecurityGroup } from 'aws-cdk-lib/aws-ec2';
import type { ISecurityGroup, IVpc } from 'aws-cdk-lib/aws-ec2';
import { CfnServerlessCache } from 'aws-cdk-lib/aws-elasticache';
import type { Construct } from 'constructs';
import type { FleetParameters } from './fleetParameters.js';
import { PRIVATE_SUBNETS } from './network.js';

/** The endpoint's port (6379) and the reader endpoint's (6380), which cluster clients may be sent to. */
export const VALKEY_PORTS = { from: 6379, to: 6380 } as const;
export const VALKEY_MAJOR_VERSION = '8';

export interface Valkey {
  cache: CfnServerlessCache;
  /** The cache's name, which is also its CloudWatch metrics' `clusterId` dimension. */
  name: string;
  /** `rediss://host:port`: the seed a cluster client starts from. */
  redisUrl: string;
}

export function createValkey(
  scope: Construct,
  { vpc, params, clients }: { vpc: IVpc; params: FleetParameters; clients: ISecurityGroup[] },
): Valkey {
  const securityGroup = new SecurityGroup(scope, 'ValkeySecurityGroup', {
    vpc,
    description: 'tablegraph Valkey: only the API and consumer tasks may connect',
    allowAllOutbound: false,
  });
  for (const client of clients) {
    securityGroup.addIngressRule(
      client,
      Port.tcpRange(VALKEY_PORTS.from, VALKEY_PORTS.to),
      `Valkey from ${client.node.id}`,
    );
  }
  // Names are unique per account and region: the stack id's first block keeps two stacks apart.
  const serverlessCacheName = Fn.join('-', [
    'tablegraph',
    Fn.select(0, Fn.split('-', Fn.select(2, Fn.split('/', Aws.STACK_ID)))),
  ]);
  const cache = new CfnServerlessCache(scope, 'Valkey', {
    serverlessCacheName,
    description: 'tablegraph events, invalidations and shared response cache (cluster mode)',
    engine: 'valkey',
    majorEngineVersion: VALKEY_MAJOR_VERSION,
    subnetIds: vpc.selectSubnets(PRIVATE_SUBNETS).subnetIds,
    securityGroupIds: [securityGroup.securityGroupId],
    cacheUsageLimits: {
      dataStorage: { unit: 'GB', maximum: params.cacheMaxGb.valueAsNumber },
      ecpuPerSecond: { maximum: params.cacheMaxEcpuPerSecond.valueAsNumber },
    },
  });
  return {
    cache,
    name: cache.ref,
    redisUrl: `rediss://${cache.attrEndpointAddress}:${cache.attrEndpointPort}`,
  };
}
