/**
 * The long-running tier (`-c fleet=true`): what the functions cannot serve. An ECS cluster on
 * Fargate in the stack's VPC runs
 * - the API service (`node server.mjs`: GraphQL over HTTP, WebSocket and SSE subscriptions, the
 *   response cache) behind the load balancer (fleetLoadBalancer.ts), scaled between
 *   FleetApiMinTasks and FleetApiMaxTasks on CPU and on requests per task;
 * - the consumer service (`node consumer.mjs`, what `npm run consumer` runs): FleetConsumerTasks
 *   stream consumers, at least two, sharing the shards through leases in the table;
 * - and ElastiCache Serverless for Valkey between them (valkey.ts).
 * Both services run the one image of containerImage.ts, with `REDIS_MODE=cluster`, and sign
 * what they write to Valkey with a generated REDIS_SIGNING_SECRET.
 */
import { Aws, Duration } from 'aws-cdk-lib';
import { Port, SecurityGroup } from 'aws-cdk-lib/aws-ec2';
import type { IVpc } from 'aws-cdk-lib/aws-ec2';
import type { CfnService } from 'aws-cdk-lib/aws-ecs';
import { Cluster, ContainerInsights, Secret as EcsSecret } from 'aws-cdk-lib/aws-ecs';
import type { Secret } from 'aws-cdk-lib/aws-secretsmanager';
import type { Construct } from 'constructs';
import { fleetImage } from './containerImage.js';
import { API_PORT, createFleetLoadBalancer, FLEET_IDLE_TIMEOUT_SECONDS } from './fleetLoadBalancer.js';
import type { FleetLoadBalancer } from './fleetLoadBalancer.js';
import type { FleetParameters } from './fleetParameters.js';
import { createFleetService } from './fleetService.js';
import type { FleetService } from './fleetService.js';
import { grantDynamo } from './permissions.js';
import type { TableArns } from './permissions.js';
import type { ApiSecrets } from './secrets.js';
import { createValkey } from './valkey.js';
import type { Valkey } from './valkey.js';

/** Half a vCPU and 1 GB per API task; a quarter and 512 MB per consumer (it mostly waits on DynamoDB). */
export const API_TASK = { cpu: 512, memoryLimitMiB: 1024 } as const;
export const CONSUMER_TASK = { cpu: 256, memoryLimitMiB: 512 } as const;
/** The consumer's `/healthz`, `/readyz` and `/metrics` (CONSUMER_PORT's default). */
export const CONSUMER_PORT = 9464;
/** Auto scaling keeps the API's average CPU near this. */
export const FLEET_CPU_TARGET_PERCENT = 60;
/** ...and each task's requests per minute near this (50 a second: a starting point, not a measurement). */
export const FLEET_REQUESTS_PER_TASK_PER_MINUTE = 3000;
/**
 * What REDIS_MODE says to the services: Valkey Serverless is a cluster (sharded pub/sub, the
 * shared cache tier's keys hash-tagged into partitions; src/events/redisConnection.ts).
 */
export const FLEET_REDIS_MODE = 'cluster';

export interface FleetOptions {
  vpc: IVpc;
  params: FleetParameters;
  arns: TableArns;
  /** What every process of the stack gets (DYNAMODB_MODE, TABLE_NAME, LOG_LEVEL). */
  shared: Record<string, string>;
  /** The API's own settings (the JWT verification, telemetry). */
  apiEnvironment: Record<string, string>;
  /** The consumer's own settings (telemetry). */
  consumerEnvironment: Record<string, string>;
  secrets: ApiSecrets;
  redisSigningSecret: Secret;
}

export interface Fleet {
  cluster: Cluster;
  front: FleetLoadBalancer;
  api: FleetService;
  consumer: FleetService;
  valkey: Valkey;
  redisSigningSecret: Secret;
}

export function createFleet(scope: Construct, options: FleetOptions): Fleet {
  const { vpc, params, arns, secrets } = options;
  const cluster = new Cluster(scope, 'FleetCluster', { vpc, containerInsightsV2: ContainerInsights.ENABLED });
  const front = createFleetLoadBalancer(scope, vpc, params);
  const apiGroup = new SecurityGroup(scope, 'FleetApiSecurityGroup', {
    vpc,
    description: 'tablegraph API tasks: in from the load balancer only; out to DynamoDB, Valkey, ECR and a JWKS URL',
    allowAllOutbound: true,
  });
  const consumerGroup = new SecurityGroup(scope, 'FleetConsumerSecurityGroup', {
    vpc,
    description: 'tablegraph consumer tasks: nothing in; out to DynamoDB and its stream, Valkey and ECR',
    allowAllOutbound: true,
  });
  front.loadBalancer.connections.allowTo(apiGroup, Port.tcp(API_PORT), 'the API tasks');
  const valkey = createValkey(scope, { vpc, params, clients: [apiGroup, consumerGroup] });

  const image = fleetImage();
  const signing = { REDIS_SIGNING_SECRET: EcsSecret.fromSecretsManager(options.redisSigningSecret) };
  const common = {
    ...options.shared,
    NODE_ENV: 'production',
    AWS_REGION: Aws.REGION,
    REDIS_URL: valkey.redisUrl,
    REDIS_MODE: FLEET_REDIS_MODE,
  };
  const api = createFleetService(scope, 'FleetApi', {
    name: 'server',
    description: 'tablegraph API service',
    cluster,
    image,
    ...API_TASK,
    healthPort: API_PORT,
    environment: {
      ...common,
      HOST: '0.0.0.0',
      PORT: String(API_PORT),
      // The consumer service reads the stream; an API task that did too would publish each event again.
      STREAM_CONSUMER: 'false',
      // Longer than the balancer's idle timeout: the balancer closes an idle connection first.
      HTTP_KEEP_ALIVE_TIMEOUT_MS: String((FLEET_IDLE_TIMEOUT_SECONDS + 5) * 1000),
      // The balancer appends the client's address to X-Forwarded-For: the per-client bounds count
      // anonymous clients by it, not by the balancer's own address.
      TRUST_PROXY_HOPS: '1',
      CORS_ORIGINS: params.corsOrigins.valueAsString,
      ...options.apiEnvironment,
    },
    secrets: {
      CURSOR_SECRET: EcsSecret.fromSecretsManager(secrets.cursorSecret),
      JWT_SECRET: EcsSecret.fromSecretsManager(secrets.jwtSecret),
      ...signing,
    },
    securityGroup: apiGroup,
    // SHUTDOWN_GRACE_MS (10 s) for requests in flight, and the subscriptions' close frames.
    stopTimeout: Duration.seconds(30),
    healthCheckGracePeriod: Duration.seconds(60),
  });
  // Auto scaling owns the count: a deployment must not reset it to a number in the template.
  (api.service.node.defaultChild as CfnService).addPropertyDeletionOverride('DesiredCount');
  front.targetGroup.addTarget(api.service.loadBalancerTarget({ containerName: 'server', containerPort: API_PORT }));
  const scaling = api.service.autoScaleTaskCount({
    minCapacity: params.apiMinTasks.valueAsNumber,
    maxCapacity: params.apiMaxTasks.valueAsNumber,
  });
  scaling.scaleOnCpuUtilization('FleetApiCpuScaling', {
    targetUtilizationPercent: FLEET_CPU_TARGET_PERCENT,
    scaleOutCooldown: Duration.minutes(1),
    scaleInCooldown: Duration.minutes(5),
  });
  scaling.scaleOnRequestCount('FleetApiRequestScaling', {
    requestsPerTarget: FLEET_REQUESTS_PER_TASK_PER_MINUTE,
    targetGroup: front.targetGroup,
    scaleOutCooldown: Duration.minutes(1),
    scaleInCooldown: Duration.minutes(5),
  });

  const consumer = createFleetService(scope, 'FleetConsumer', {
    name: 'consumer',
    description: 'tablegraph stream consumers',
    cluster,
    image,
    ...CONSUMER_TASK,
    healthPort: CONSUMER_PORT,
    environment: { ...common, CONSUMER_PORT: String(CONSUMER_PORT), ...options.consumerEnvironment },
    secrets: signing,
    securityGroup: consumerGroup,
    // SIGTERM finishes and checkpoints the batch under way and releases the leases: a successor
    // takes the shards at once instead of after LEASE_TTL_MS.
    stopTimeout: Duration.seconds(30),
    desiredCount: params.consumerTasks.valueAsNumber,
  });
  grantDynamo(api.taskRole, 'server', arns);
  grantDynamo(consumer.taskRole, 'consumer', arns);
  return { cluster, front, api, consumer, valkey, redisSigningSecret: options.redisSigningSecret };
}
