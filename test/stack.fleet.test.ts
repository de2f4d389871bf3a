/**
 * The stack with the long-running tier (`-c fleet=true`), synthesized once offline as
 * `npm run synth` writes deploy/stack.fleet.template.json, cdk-nag included (an unacknowledged
 * finding throws in beforeAll and fails the file).
 */
import { readFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { Template } from 'aws-cdk-lib/assertions';
import { beforeAll, describe, expect, it } from 'vitest';
import { cachedContainerBundle } from '../deploy/containerImage.js';
import type { ContainerName } from '../deploy/containerImage.js';
import { API_PORT, FLEET_IDLE_TIMEOUT_SECONDS } from '../deploy/fleetLoadBalancer.js';
import { CONSUMER_PORT, FLEET_CPU_TARGET_PERCENT } from '../deploy/fleet.js';
import { MIN_CONSUMER_TASKS } from '../deploy/fleetParameters.js';
import { DYNAMODB_PERMISSIONS } from '../deploy/permissions.js';
import { REDIS_AND_FLEET } from '../deploy/stack.js';
import { createApp } from '../deploy/synth.js';
import { DEFAULT_HTTP_LIMITS, DEFAULT_WEBSOCKET_LIMITS } from '../src/config/index.js';
import { dynamoActionsCalled, streamActionsCalled } from './support/dynamoCalls.js';
import { PROJECT_ROOT } from './support/serverProcess.js';

type Resource = { Type: string; Properties: Record<string, any>; Condition?: string; DependsOn?: string[] };
type Statement = { Action: string | string[]; Resource: unknown; Effect: string };

let json: { Resources: Record<string, Resource>; Parameters: Record<string, any>; Outputs: Record<string, any> };
let template: Template;

beforeAll(() => {
  const { app, stack } = createApp({ fleet: true });
  json = app.synth().getStackArtifact(stack.artifactId).template as typeof json;
  template = Template.fromJSON(json);
}, 180_000);

const resources = (type: string) => Object.entries(json.Resources).filter(([, resource]) => resource.Type === type);
const asList = <T>(value: T | T[]): T[] => (Array.isArray(value) ? value : [value]);
const ref = (id: string) => ({ Ref: id });
/** The task definition whose container runs `node <name>.mjs`, and that container. */
function task(name: ContainerName): { id: string; task: Resource; container: Record<string, any> } {
  const found = resources('AWS::ECS::TaskDefinition').find(
    ([, def]) => def.Properties.ContainerDefinitions[0].Command[1] === `${name}.mjs`,
  );
  if (!found) throw new Error(`no task runs ${name}.mjs`);
  return { id: found[0], task: found[1], container: found[1].Properties.ContainerDefinitions[0] };
}
const serviceOf = (taskId: string): Resource =>
  (resources('AWS::ECS::Service').find(([, service]) => service.Properties.TaskDefinition.Ref === taskId) ??
    [])[1] as Resource;
const environment = (container: Record<string, any>): Record<string, unknown> =>
  Object.fromEntries((container.Environment as { Name: string; Value: unknown }[]).map((e) => [e.Name, e.Value]));
const secretNames = (container: Record<string, any>): string[] =>
  (container.Secrets as { Name: string }[]).map((secret) => secret.Name).sort();
const statementsOf = (roleId: string): Statement[] =>
  resources('AWS::IAM::Policy')
    .filter(([, policy]) => asList(policy.Properties.Roles).some((role: any) => role.Ref === roleId))
    .flatMap(([, policy]) => policy.Properties.PolicyDocument.Statement as Statement[]);
const idOf = (value: { 'Fn::GetAtt': [string, string] }) => value['Fn::GetAtt'][0];

/**
 * Calls in the container bundles that never run in the fleet's tasks. The stack creates the
 * table, `npm run migrate` (the operator's) migrates it, aws mode never seeds it, and the API
 * tasks run no stream consumer of their own (STREAM_CONSUMER=false).
 */
const NOT_IN_TASKS: Record<ContainerName, (module: string, action: string) => boolean> = {
  server: (module, action) =>
    (module === 'src/db/ensureTable.ts' && action === 'dynamodb:CreateTable') ||
    /^src\/(seed|streams)\//.test(module) ||
    /^src\/migrations\/(steps|m\d+\w+)\.ts$/.test(module) ||
    module === 'src/db/batchWrite.ts',
  consumer: (module, action) =>
    (module === 'src/db/ensureTable.ts' && action === 'dynamodb:CreateTable') ||
    /^src\/migrations\/(steps|m\d+\w+)\.ts$/.test(module),
};

describe('the fleet template', () => {
  it('is checked in as npm run synth writes it', () => {
    expect(readFileSync(path.join(PROJECT_ROOT, 'deploy', 'stack.fleet.template.json'), 'utf8')).toBe(
      `${JSON.stringify(json, null, 2)}\n`,
    );
  });

  it('holds no path of this machine, and no image built here: the image is an asset `cdk deploy` builds', () => {
    const text = JSON.stringify(json);
    expect(text).not.toContain(PROJECT_ROOT);
    expect(text).not.toContain(tmpdir());
    const images = new Set(
      resources('AWS::ECS::TaskDefinition').map(([, def]) =>
        JSON.stringify(def.Properties.ContainerDefinitions[0].Image),
      ),
    );
    expect(images.size).toBe(1);
    expect([...images][0]).toMatch(
      /cdk-hnb659fds-container-assets-\$\{AWS::AccountId\}-\$\{AWS::Region\}:[0-9a-f]{64}/,
    );
  });

  it('replaces the stream function by the consumer service, and keeps the GraphQL function outside the VPC', () => {
    const functions = resources('AWS::Lambda::Function');
    expect(functions.map(([, fn]) => fn.Properties.Description)).toEqual(['tablegraph GraphQL API']);
    expect(resources('AWS::Lambda::EventSourceMapping')).toEqual([]);
    expect(resources('AWS::SQS::Queue')).toEqual([]);
    expect(functions[0]?.[1].Properties.VpcConfig).toBeUndefined();
  });

  it('refuses -c redis=true with -c fleet=true, in one line', () => {
    expect(() => createApp({ redis: true, fleet: true })).toThrow(REDIS_AND_FLEET);
  });
});

describe('the API service', () => {
  it('runs the server bundle on Fargate arm64 in production, fed by the consumers over Valkey in cluster mode', () => {
    const { id, task: def, container } = task('server');
    expect(def.Properties).toMatchObject({
      RequiresCompatibilities: ['FARGATE'],
      RuntimePlatform: { CpuArchitecture: 'ARM64', OperatingSystemFamily: 'LINUX' },
    });
    expect(container.Command).toEqual(['node', 'server.mjs']);
    expect(environment(container)).toMatchObject({
      NODE_ENV: 'production',
      DYNAMODB_MODE: 'aws',
      TABLE_NAME: ref('Table'),
      HOST: '0.0.0.0',
      PORT: String(API_PORT),
      STREAM_CONSUMER: 'false',
      REDIS_MODE: 'cluster',
      REDIS_URL: {
        'Fn::Join': [
          '',
          [
            'rediss://',
            { 'Fn::GetAtt': ['Valkey', 'Endpoint.Address'] },
            ':',
            { 'Fn::GetAtt': ['Valkey', 'Endpoint.Port'] },
          ],
        ],
      },
      JWT_JWKS_URL: ref('JwtJwksUrl'),
    });
    expect(serviceOf(id).Properties).toMatchObject({
      LaunchType: 'FARGATE',
      NetworkConfiguration: { AwsvpcConfiguration: { AssignPublicIp: 'DISABLED' } },
    });
  });

  it('gets its secrets from Secrets Manager through ECS, never in its environment', () => {
    const { container } = task('server');
    expect(secretNames(container)).toEqual(['CURSOR_SECRET', 'JWT_SECRET', 'REDIS_SIGNING_SECRET']);
    for (const name of ['CURSOR_SECRET', 'JWT_SECRET', 'REDIS_SIGNING_SECRET'])
      expect(environment(container)).not.toHaveProperty(name);
    expect(resources('AWS::SecretsManager::Secret')).toHaveLength(3);
  });

  it('is behind the load balancer: ready on /readyz, alive on /healthz, draining before it stops', () => {
    const { id, container } = task('server');
    template.hasResourceProperties('AWS::ElasticLoadBalancingV2::TargetGroup', {
      HealthCheckPath: '/readyz',
      Port: API_PORT,
      TargetType: 'ip',
    });
    expect(container.HealthCheck.Command.join(' ')).toContain(`http://127.0.0.1:${API_PORT}/healthz`);
    const [targetGroupId] = resources('AWS::ElasticLoadBalancingV2::TargetGroup')[0] as [string, Resource];
    expect(serviceOf(id).Properties.LoadBalancers).toEqual([
      { ContainerName: 'server', ContainerPort: API_PORT, TargetGroupArn: ref(targetGroupId) },
    ]);
  });

  it('keeps quiet streams open: the idle timeout outlasts the keep-alive pings, and the server outlasts the idle timeout', () => {
    const [, balancer] = resources('AWS::ElasticLoadBalancingV2::LoadBalancer')[0] as [string, Resource];
    const attributes = Object.fromEntries(
      (balancer.Properties.LoadBalancerAttributes as { Key: string; Value: string }[]).map((a) => [a.Key, a.Value]),
    );
    const idleSeconds = Number(attributes['idle_timeout.timeout_seconds']);
    expect(idleSeconds).toBe(FLEET_IDLE_TIMEOUT_SECONDS);
    // At least two WebSocket pings (and SSE comments) fit in the idle timeout.
    expect(idleSeconds * 1000).toBeGreaterThanOrEqual(2 * DEFAULT_WEBSOCKET_LIMITS.keepAliveMs);
    // Otherwise the balancer would send a request on a connection the server has just closed (a 502).
    const serverKeepAlive = Number(environment(task('server').container).HTTP_KEEP_ALIVE_TIMEOUT_MS);
    expect(serverKeepAlive).toBeGreaterThan(idleSeconds * 1000);
    expect(serverKeepAlive).toBeGreaterThan(DEFAULT_HTTP_LIMITS.keepAliveTimeoutMs);
  });

  it('counts anonymous clients by their own address behind the balancer, not by the balancer’s', () => {
    // The balancer appends one X-Forwarded-For entry; the server trusts exactly that one.
    expect(environment(task('server').container).TRUST_PROXY_HOPS).toBe('1');
  });

  it('serves HTTPS with a certificate (80 redirects), plain HTTP on 80 without', () => {
    const listeners = resources('AWS::ElasticLoadBalancingV2::Listener');
    const forward = listeners.find(([, l]) => l.Properties.DefaultActions[0].Type === 'forward')?.[1] as Resource;
    expect(forward.Properties).toMatchObject({
      Port: { 'Fn::If': ['HasFleetCertificate', 443, 80] },
      Protocol: { 'Fn::If': ['HasFleetCertificate', 'HTTPS', 'HTTP'] },
      Certificates: {
        'Fn::If': ['HasFleetCertificate', [{ CertificateArn: ref('FleetCertificateArn') }], ref('AWS::NoValue')],
      },
    });
    expect(forward.Condition).toBeUndefined();
    const redirect = listeners.find(([, l]) => l.Properties.DefaultActions[0].Type === 'redirect')?.[1] as Resource;
    expect(redirect.Condition).toBe('HasFleetCertificate');
    expect(json.Parameters.FleetCertificateArn.Default).toBe('');
  });

  it('scales between FleetApiMinTasks and FleetApiMaxTasks on CPU and on requests per task, and deployments leave the count alone', () => {
    const { id } = task('server');
    expect(serviceOf(id).Properties.DesiredCount).toBeUndefined();
    const [targetId, target] = resources('AWS::ApplicationAutoScaling::ScalableTarget').find(
      ([, t]) => t.Properties.ScalableDimension === 'ecs:service:DesiredCount',
    ) as [string, Resource];
    expect(target.Properties).toMatchObject({
      MinCapacity: ref('FleetApiMinTasks'),
      MaxCapacity: ref('FleetApiMaxTasks'),
    });
    const policies = resources('AWS::ApplicationAutoScaling::ScalingPolicy')
      .filter(([, p]) => p.Properties.ScalingTargetId?.Ref === targetId)
      .map(([, p]) => p.Properties.TargetTrackingScalingPolicyConfiguration);
    expect(policies.map((p) => p.PredefinedMetricSpecification.PredefinedMetricType).sort()).toEqual([
      'ALBRequestCountPerTarget',
      'ECSServiceAverageCPUUtilization',
    ]);
    expect(
      policies.find((p) => p.PredefinedMetricSpecification.PredefinedMetricType.startsWith('ECS'))?.TargetValue,
    ).toBe(FLEET_CPU_TARGET_PERCENT);
  });
});

describe('the consumer service', () => {
  it('runs the consumer bundle on at least two tasks, on Valkey in cluster mode, with the signing key only', () => {
    const { id, container } = task('consumer');
    expect(container.Command).toEqual(['node', 'consumer.mjs']);
    expect(serviceOf(id).Properties.DesiredCount).toEqual(ref('FleetConsumerTasks'));
    expect(serviceOf(id).Properties.LoadBalancers).toBeUndefined();
    expect(json.Parameters.FleetConsumerTasks).toMatchObject({
      Default: MIN_CONSUMER_TASKS,
      MinValue: MIN_CONSUMER_TASKS,
    });
    expect(MIN_CONSUMER_TASKS).toBeGreaterThanOrEqual(2);
    expect(environment(container)).toMatchObject({
      REDIS_MODE: 'cluster',
      NODE_ENV: 'production',
      CONSUMER_PORT: String(CONSUMER_PORT),
    });
    expect(secretNames(container)).toEqual(['REDIS_SIGNING_SECRET']);
    expect(container.HealthCheck.Command.join(' ')).toContain(`http://127.0.0.1:${CONSUMER_PORT}/healthz`);
  });
});

describe('least privilege', () => {
  it.each(['server', 'consumer'] as const)(
    'grants the %s task role exactly the DynamoDB actions its bundle calls in a task, and no secret',
    (name) => {
      const bundle = readFileSync(path.join(cachedContainerBundle().dir, `${name}.mjs`), 'utf8');
      const called = dynamoActionsCalled(bundle, NOT_IN_TASKS[name]);
      const roleId = idOf(task(name).task.Properties.TaskRoleArn);
      const statements = statementsOf(roleId);
      const onTable = statements.filter(
        (s) => JSON.stringify(s.Resource) === JSON.stringify({ 'Fn::GetAtt': ['Table', 'Arn'] }),
      );
      expect(onTable.flatMap((s) => asList(s.Action)).sort()).toEqual(called);
      expect([...DYNAMODB_PERMISSIONS[name].table].sort()).toEqual(called);
      const onStream = statements.filter((s) => JSON.stringify(s.Resource).includes('StreamArn'));
      expect(onStream.flatMap((s) => asList(s.Action)).sort()).toEqual(
        name === 'consumer' ? streamActionsCalled(bundle) : [],
      );
      expect(JSON.stringify(statements)).not.toContain('secretsmanager:');
      expect(json.Resources[roleId]?.Properties.ManagedPolicyArns).toBeUndefined();
    },
  );

  it("lets each execution role read only its own service's secrets", () => {
    for (const [name, secrets] of [
      ['server', ['CursorSecret', 'JwtSecret', 'RedisSigningSecret']],
      ['consumer', ['RedisSigningSecret']],
    ] as const) {
      const roleId = idOf(task(name).task.Properties.ExecutionRoleArn);
      const read = statementsOf(roleId)
        .filter((s) => asList(s.Action).includes('secretsmanager:GetSecretValue'))
        .map((s) => (s.Resource as { Ref: string }).Ref.replace(/[0-9A-F]{8}$/, ''));
      expect(read.sort()).toEqual(secrets);
    }
  });

  it('opens Valkey to the two services only, and the API tasks to the load balancer only', () => {
    const groups = Object.fromEntries(
      resources('AWS::EC2::SecurityGroup').map(([id, group]) => [id, String(group.Properties.GroupDescription)]),
    );
    const owner = (value: unknown) => groups[idOf(value as { 'Fn::GetAtt': [string, string] })]?.split(':')[0];
    const ingress = resources('AWS::EC2::SecurityGroupIngress').map(([, rule]) => [
      owner(rule.Properties.GroupId),
      owner(rule.Properties.SourceSecurityGroupId),
      rule.Properties.FromPort,
    ]);
    expect(ingress.sort()).toEqual(
      [
        ['tablegraph API tasks', 'tablegraph load balancer', API_PORT],
        ['tablegraph Valkey', 'tablegraph API tasks', 6379],
        ['tablegraph Valkey', 'tablegraph consumer tasks', 6379],
      ].sort(),
    );
    template.hasResourceProperties('AWS::ElastiCache::ServerlessCache', { Engine: 'valkey' });
  });
});

describe("the fleet's alarms", () => {
  it.each([
    ['AWS/ApplicationELB', 'HTTPCode_Target_5XX_Count'],
    ['AWS/ApplicationELB', 'HTTPCode_ELB_5XX_Count'],
    ['AWS/ApplicationELB', 'UnHealthyHostCount'],
    ['ECS/ContainerInsights', 'RunningTaskCount'],
    ['AWS/ElastiCache', 'ThrottledCmds'],
  ])('watches %s %s, on the alarm topic', (namespace, metricName) => {
    const [topicId] = resources('AWS::SNS::Topic')[0] as [string, Resource];
    const alarms = resources('AWS::CloudWatch::Alarm').filter(
      ([, alarm]) => alarm.Properties.Namespace === namespace && alarm.Properties.MetricName === metricName,
    );
    expect(alarms).toHaveLength(1);
    expect(alarms[0]?.[1].Properties.AlarmActions).toEqual([ref(topicId)]);
  });

  it("finds Valkey's throttles under the dimension serverless caches publish them with (clusterId)", () => {
    template.hasResourceProperties('AWS::CloudWatch::Alarm', {
      MetricName: 'ThrottledCmds',
      Dimensions: [{ Name: 'clusterId', Value: ref('Valkey') }],
    });
  });

  it('turns Container Insights on, which the consumer count needs', () => {
    template.hasResourceProperties('AWS::ECS::Cluster', {
      ClusterSettings: [{ Name: 'containerInsights', Value: 'enabled' }],
    });
  });
});
