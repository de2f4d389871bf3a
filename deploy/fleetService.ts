/**
 * One service of the fleet: a Fargate task definition running one command of the fleet's image
 * (containerImage.ts) on arm64, a task role of its own with no managed policy (its DynamoDB
 * actions are granted by the caller), secrets injected by ECS from Secrets Manager (the
 * execution role reads them; the task role cannot), logs in a log group of its own, and a
 * container health check on its `/healthz`, so ECS replaces a task whose process stopped
 * serving.
 */
import { Duration, RemovalPolicy, Validations } from 'aws-cdk-lib';
import type { ISecurityGroup } from 'aws-cdk-lib/aws-ec2';
import {
  CpuArchitecture,
  FargateService,
  FargateTaskDefinition,
  LogDrivers,
  OperatingSystemFamily,
} from 'aws-cdk-lib/aws-ecs';
import type { Cluster, ContainerDefinition, ContainerImage, Secret as EcsSecret } from 'aws-cdk-lib/aws-ecs';
import { Role, ServicePrincipal } from 'aws-cdk-lib/aws-iam';
import { LogGroup, RetentionDays } from 'aws-cdk-lib/aws-logs';
import type { Construct } from 'constructs';
import { containerCommand } from './containerImage.js';
import type { ContainerName } from './containerImage.js';
import { PRIVATE_SUBNETS } from './network.js';

export interface FleetServiceOptions {
  name: ContainerName;
  description: string;
  cluster: Cluster;
  image: ContainerImage;
  /** Fargate CPU units (1024 = one vCPU) and MiB, one of Fargate's combinations. */
  cpu: number;
  memoryLimitMiB: number;
  /** The port the process serves `/healthz` on. */
  healthPort: number;
  environment: Record<string, string>;
  secrets: Record<string, EcsSecret>;
  securityGroup: ISecurityGroup;
  /** Between SIGTERM and SIGKILL: what the process needs to finish and hand over (Fargate allows 120 s). */
  stopTimeout: Duration;
  /** Tasks to run; unset where auto scaling owns the count. */
  desiredCount?: number | undefined;
  /** Time a new task has before the load balancer's failed health checks count. */
  healthCheckGracePeriod?: Duration | undefined;
}

export interface FleetService {
  service: FargateService;
  taskRole: Role;
  container: ContainerDefinition;
}

/** `node -e` is the one program the image is sure to have (it has no curl). */
export const healthCheckCommand = (port: number): string[] => [
  'CMD',
  'node',
  '-e',
  `fetch('http://127.0.0.1:${port}/healthz').then((r) => process.exit(r.ok ? 0 : 1), () => process.exit(1))`,
];

export function createFleetService(scope: Construct, id: string, options: FleetServiceOptions): FleetService {
  const taskRole = new Role(scope, `${id}TaskRole`, {
    assumedBy: new ServicePrincipal('ecs-tasks.amazonaws.com'),
    description: `${options.description}: its DynamoDB actions, nothing else`,
  });
  const task = new FargateTaskDefinition(scope, `${id}Task`, {
    cpu: options.cpu,
    memoryLimitMiB: options.memoryLimitMiB,
    runtimePlatform: { cpuArchitecture: CpuArchitecture.ARM64, operatingSystemFamily: OperatingSystemFamily.LINUX },
    taskRole,
  });
  const logGroup = new LogGroup(scope, `${id}Logs`, {
    retention: RetentionDays.ONE_MONTH,
    removalPolicy: RemovalPolicy.DESTROY,
  });
  const container = task.addContainer(options.name, {
    image: options.image,
    command: containerCommand(options.name),
    environment: options.environment,
    secrets: options.secrets,
    logging: LogDrivers.awsLogs({ logGroup, streamPrefix: options.name }),
    portMappings: [{ containerPort: options.healthPort }],
    healthCheck: {
      command: healthCheckCommand(options.healthPort),
      interval: Duration.seconds(30),
      timeout: Duration.seconds(5),
      retries: 3,
      startPeriod: Duration.seconds(60),
    },
    stopTimeout: options.stopTimeout,
    readonlyRootFilesystem: true,
  });
  Validations.of(task).acknowledge({
    id: 'AwsSolutions::AwsSolutions-ECS2',
    reason:
      'The environment holds settings only (table, mode, ports, endpoints, the JWT issuer); every secret ' +
      "comes from Secrets Manager through the container definition's secrets.",
  });
  if (task.executionRole) {
    Validations.of(task.executionRole).acknowledge({
      id: 'AwsSolutions::AwsSolutions-IAM5[Resource::*]',
      reason:
        'ecr:GetAuthorizationToken, which pulls the image, takes no resource ARN; every other action of the ' +
        'execution role names its repository, log group or secret.',
    });
  }
  const service = new FargateService(scope, `${id}Service`, {
    cluster: options.cluster,
    taskDefinition: task,
    securityGroups: [options.securityGroup],
    vpcSubnets: PRIVATE_SUBNETS,
    assignPublicIp: false,
    minHealthyPercent: 100,
    maxHealthyPercent: 200,
    // A release whose tasks never get healthy is rolled back instead of retried forever.
    circuitBreaker: { enable: true, rollback: true },
    ...(options.desiredCount === undefined ? {} : { desiredCount: options.desiredCount }),
    ...(options.healthCheckGracePeriod ? { healthCheckGracePeriod: options.healthCheckGracePeriod } : {}),
  });
  return { service, taskRole, container };
}
