/**
 * Optional Redis for subscription fan-out (`-c redis=true`; off by default, and then none of
 * this is in the template): the stack's VPC (network.ts), an ElastiCache replication group with
 * TLS and at-rest encryption that only the functions' security group may reach, and REDIS_URL
 * for the functions.
 */
import { CfnReplicationGroup, CfnSubnetGroup } from 'aws-cdk-lib/aws-elasticache';
import { Port, SecurityGroup } from 'aws-cdk-lib/aws-ec2';
import { Validations } from 'aws-cdk-lib';
import type { Construct } from 'constructs';
import type { FunctionNetwork } from './lambdaFunction.js';
import { createVpc, PRIVATE_SUBNETS } from './network.js';

export const REDIS_PORT = 6379;
export const REDIS_NODE_TYPE = 'cache.t4g.micro';

export interface RedisResources {
  network: FunctionNetwork;
  /** rediss://host:port (TLS); the cluster has no password: the security group is the gate. */
  redisUrl: string;
}

export function createRedis(scope: Construct): RedisResources {
  const vpc = createVpc(scope);
  const functions = new SecurityGroup(scope, 'FunctionsSecurityGroup', {
    vpc,
    description: 'tablegraph functions: out to DynamoDB, Secrets Manager, Redis and a JWKS URL',
    allowAllOutbound: true,
  });
  const redis = new SecurityGroup(scope, 'RedisSecurityGroup', {
    vpc,
    description: 'tablegraph Redis: only the functions may connect',
    allowAllOutbound: false,
  });
  redis.addIngressRule(functions, Port.tcp(REDIS_PORT), 'Redis from the tablegraph functions');
  const privateSubnets = vpc.selectSubnets(PRIVATE_SUBNETS);
  const subnets = new CfnSubnetGroup(scope, 'RedisSubnets', {
    description: 'tablegraph Redis: private subnets',
    subnetIds: privateSubnets.subnetIds,
  });
  const group = new CfnReplicationGroup(scope, 'Redis', {
    replicationGroupDescription: 'tablegraph subscription fan-out (pub/sub only, no data)',
    engine: 'redis',
    engineVersion: '7.1',
    cacheNodeType: REDIS_NODE_TYPE,
    numCacheClusters: 1,
    automaticFailoverEnabled: false,
    port: REDIS_PORT,
    transitEncryptionEnabled: true,
    atRestEncryptionEnabled: true,
    cacheSubnetGroupName: subnets.ref,
    securityGroupIds: [redis.securityGroupId],
  });
  Validations.of(group).acknowledge(
    {
      id: 'AwsSolutions::AwsSolutions-AEC4',
      reason:
        'One node: Redis only relays subscription events (no data lives there), an event published while it ' +
        'is replaced may be lost either way, and a second node doubles the cost of an optional feature.',
    },
    {
      id: 'AwsSolutions::AwsSolutions-AEC5',
      reason: "The port is not a control: only the functions' security group may reach the node, in private subnets.",
    },
    {
      id: 'AwsSolutions::AwsSolutions-AEC6',
      reason:
        'No AUTH token: the security group admits only the functions, traffic is TLS, and the node holds no ' +
        'data; a token would turn REDIS_URL into a secret the event bus does not read from Secrets Manager.',
    },
  );
  return {
    network: { vpc, subnets: PRIVATE_SUBNETS, securityGroups: [functions] },
    redisUrl: `rediss://${group.attrPrimaryEndPointAddress}:${group.attrPrimaryEndPointPort}`,
  };
}
