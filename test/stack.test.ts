/**
 * The CDK stack, synthesized once offline exactly as `npm run synth` does (cdk-nag's AwsSolutions
 * pack included: an unacknowledged finding throws in beforeAll and fails the file).
 */
import { readFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { Match, Template } from 'aws-cdk-lib/assertions';
import { beforeAll, describe, expect, it } from 'vitest';
import { cachedBundle } from '../deploy/bundle.js';
import { DYNAMODB_PERMISSIONS } from '../deploy/permissions.js';
import { STREAM_MAX_RETRIES } from '../deploy/streamProcessor.js';
import { createApp } from '../deploy/synth.js';
import { GRAPHQL_LAMBDA_SERVICE } from '../src/lambda/graphql.js';
import { STREAM_LAMBDA_SERVICE } from '../src/lambda/streams.js';
import { tableDefinition } from '../src/table/definition.js';
import { dynamoActionsCalled } from './support/dynamoCalls.js';
import { PROJECT_ROOT } from './support/serverProcess.js';

type Resource = { Type: string; Properties: Record<string, any>; Condition?: string; [key: string]: unknown };
type Statement = { Action: string | string[]; Resource: unknown; Effect: string };

let template: Template;
let json: { Resources: Record<string, Resource>; [key: string]: unknown };
const definition = tableDefinition('any');
const globalIndexes = (definition.GlobalSecondaryIndexes ?? []).map((index) => index.IndexName ?? '');
const allIndexes = [...globalIndexes, ...(definition.LocalSecondaryIndexes ?? []).map((index) => index.IndexName)];

beforeAll(() => {
  const { app, stack } = createApp({ redis: false });
  json = app.synth().getStackArtifact(stack.artifactId).template as typeof json;
  template = Template.fromJSON(json);
}, 120_000);

const resources = (type: string) => Object.entries(json.Resources).filter(([, resource]) => resource.Type === type);
const only = (type: string): [string, Resource] => {
  const found = resources(type);
  expect(found).toHaveLength(1);
  return found[0] as [string, Resource];
};
const functionNamed = (description: string): [string, Resource] => {
  const found = resources('AWS::Lambda::Function').find(([, fn]) => fn.Properties.Description === description);
  if (!found) throw new Error(`no function described "${description}"`);
  return found;
};
const asList = <T>(value: T | T[]): T[] => (Array.isArray(value) ? value : [value]);
/** Every statement of the role `roleId`'s policies. */
const statementsOf = (roleId: string): Statement[] =>
  resources('AWS::IAM::Policy')
    .filter(([, policy]) => asList(policy.Properties.Roles).some((role: any) => role.Ref === roleId))
    .flatMap(([, policy]) => policy.Properties.PolicyDocument.Statement as Statement[]);
const roleOf = (fn: Resource): string => fn.Properties.Role['Fn::GetAtt'][0];
const tableArn = { 'Fn::GetAtt': ['Table', 'Arn'] };
const indexArn = (name: string) => ({ 'Fn::Join': ['', [tableArn, `/index/${name}`]] });

describe('the template', () => {
  it('is checked in as npm run synth writes it', () => {
    expect(readFileSync(path.join(PROJECT_ROOT, 'deploy', 'stack.template.json'), 'utf8')).toBe(
      `${JSON.stringify(json, null, 2)}\n`,
    );
  });

  it('holds nothing that differs between machines: no paths, no CDK version, no construct metadata', () => {
    const text = JSON.stringify(json);
    expect(text).not.toContain(PROJECT_ROOT);
    expect(text).not.toContain(tmpdir());
    expect(text).not.toContain('aws:cdk:path');
    expect(text).not.toContain('aws:asset:path');
    expect(resources('AWS::CDK::Metadata')).toEqual([]);
  });

  it.each(['graphql', 'streams'] as const)('bundles the %s function without a path of this machine', (name) => {
    const bundle = readFileSync(path.join(cachedBundle(name).dir, 'index.mjs'), 'utf8');
    expect(bundle).not.toContain(PROJECT_ROOT);
    expect(bundle).not.toContain(path.dirname(PROJECT_ROOT.replace(/\/$/, '')));
  });

  it('has no Redis and no VPC unless asked for', () => {
    expect(resources('AWS::ElastiCache::ReplicationGroup')).toEqual([]);
    expect(resources('AWS::EC2::VPC')).toEqual([]);
  });
});

describe('the table', () => {
  it('has the keys, attributes, indexes and stream of the table the server creates', () => {
    const [, table] = only('AWS::DynamoDB::Table');
    const keys = (schema: { AttributeName?: string; KeyType?: string }[] | undefined) =>
      (schema ?? []).map((key) => ({ AttributeName: key.AttributeName, KeyType: key.KeyType }));
    expect(table.Properties.KeySchema).toEqual(keys(definition.KeySchema));
    expect(table.Properties.AttributeDefinitions).toEqual(definition.AttributeDefinitions);
    const indexes = (list: any[] | undefined) =>
      (list ?? []).map((index) => ({
        IndexName: index.IndexName,
        KeySchema: keys(index.KeySchema),
        Projection: index.Projection,
      }));
    expect(indexes(table.Properties.GlobalSecondaryIndexes)).toEqual(indexes(definition.GlobalSecondaryIndexes));
    expect(indexes(table.Properties.LocalSecondaryIndexes)).toEqual(indexes(definition.LocalSecondaryIndexes));
    expect(table.Properties.StreamSpecification).toEqual({ StreamViewType: 'NEW_AND_OLD_IMAGES' });
  });

  it('keeps its data: point-in-time recovery, encryption, deletion protection, retained with the stack', () => {
    template.hasResource('AWS::DynamoDB::Table', {
      DeletionPolicy: 'Retain',
      UpdateReplacePolicy: 'Retain',
      Properties: Match.objectLike({
        PointInTimeRecoverySpecification: { PointInTimeRecoveryEnabled: true },
        SSESpecification: { SSEEnabled: true },
        DeletionProtectionEnabled: true,
        BillingMode: { Ref: 'BillingMode' },
        TableName: { Ref: 'TableName' },
      }),
    });
    template.hasParameter('BillingMode', {
      AllowedValues: ['PAY_PER_REQUEST', 'PROVISIONED'],
      Default: 'PAY_PER_REQUEST',
    });
  });

  it('scales the table and every GSI only when BillingMode is PROVISIONED', () => {
    const scaling = Object.values(json.Resources).filter((r) => r.Type.startsWith('AWS::ApplicationAutoScaling::'));
    // A target and a policy, for reads and for writes, of the table and of each GSI.
    expect(scaling).toHaveLength(4 * (1 + globalIndexes.length));
    expect(scaling.every((resource) => resource.Condition === 'IsProvisioned')).toBe(true);
    const indexTargets = resources('AWS::ApplicationAutoScaling::ScalableTarget')
      .map(([, target]) => JSON.stringify(target.Properties.ResourceId))
      .filter((id) => id.includes('/index/'));
    for (const name of globalIndexes)
      expect(indexTargets.filter((id) => id.includes(`/index/${name}`))).toHaveLength(2);
  });
});

describe('the GraphQL function and its HTTP API', () => {
  it('runs the bundle on Lambda with the table, the JWT settings and the secrets by ARN only', () => {
    const [, fn] = functionNamed('tablegraph GraphQL API');
    expect(fn.Properties).toMatchObject({ Runtime: 'nodejs24.x', Handler: 'index.handler', Architectures: ['arm64'] });
    const variables = fn.Properties.Environment.Variables as Record<string, unknown>;
    expect(variables).toMatchObject({
      NODE_ENV: 'production',
      DYNAMODB_MODE: 'aws',
      TABLE_NAME: { Ref: 'Table' },
      JWT_JWKS_URL: { Ref: 'JwtJwksUrl' },
      JWT_ISSUER: { Ref: 'JwtIssuer' },
      JWT_AUDIENCE: { Ref: 'JwtAudience' },
      CURSOR_SECRET_ARN: { Ref: expect.stringMatching(/^CursorSecret/) },
      JWT_SECRET_ARN: { Ref: expect.stringMatching(/^JwtSecret/) },
    });
    expect(Object.keys(variables)).not.toContain('CURSOR_SECRET');
    expect(Object.keys(variables)).not.toContain('JWT_SECRET');
  });

  it('generates both secrets in Secrets Manager, readable by the GraphQL function alone', () => {
    const secrets = resources('AWS::SecretsManager::Secret');
    expect(secrets).toHaveLength(2);
    for (const [, secret] of secrets) expect(secret.Properties.GenerateSecretString.PasswordLength).toBe(64);
    // The OTLP headers secret's own policy (the telemetry tests below) is not one of these.
    const readers = resources('AWS::IAM::Policy').filter(
      ([, policy]) =>
        JSON.stringify(policy.Properties.PolicyDocument).includes('secretsmanager:') &&
        policy.Condition !== 'HasOtlpHeadersSecret',
    );
    expect(readers).toHaveLength(1);
    const [graphQL] = functionNamed('tablegraph GraphQL API');
    const statement = statementsOf(roleOf(json.Resources[graphQL] as Resource)).find((s) =>
      asList(s.Action).includes('secretsmanager:GetSecretValue'),
    );
    expect(statement?.Action).toBe('secretsmanager:GetSecretValue');
    expect(asList(statement?.Resource)).toEqual(secrets.map(([id]) => ({ Ref: id })));
  });

  it('takes reserved and provisioned concurrency from parameters, unset at 0', () => {
    const [fnId, fn] = functionNamed('tablegraph GraphQL API');
    expect(fn.Properties.ReservedConcurrentExecutions).toEqual({
      'Fn::If': ['HasApiReservedConcurrency', { Ref: 'ApiReservedConcurrency' }, { Ref: 'AWS::NoValue' }],
    });
    template.hasResourceProperties('AWS::Lambda::Alias', {
      FunctionName: { Ref: fnId },
      Name: 'live',
      ProvisionedConcurrencyConfig: {
        'Fn::If': [
          'HasApiProvisionedConcurrency',
          { ProvisionedConcurrentExecutions: { Ref: 'ApiProvisionedConcurrency' } },
          { Ref: 'AWS::NoValue' },
        ],
      },
    });
    template.hasCondition('HasApiReservedConcurrency', {
      'Fn::Not': [{ 'Fn::Equals': [{ Ref: 'ApiReservedConcurrency' }, 0] }],
    });
  });

  it('serves POST and GET /graphql through the live alias, throttled and access-logged', () => {
    const [aliasId] = only('AWS::Lambda::Alias');
    const routes = resources('AWS::ApiGatewayV2::Route').map(([, route]) => route.Properties.RouteKey);
    expect(routes.sort()).toEqual(['GET /graphql', 'POST /graphql']);
    template.hasResourceProperties('AWS::ApiGatewayV2::Integration', {
      IntegrationType: 'AWS_PROXY',
      PayloadFormatVersion: '2.0',
      IntegrationUri: { Ref: aliasId },
    });
    template.hasResourceProperties('AWS::ApiGatewayV2::Stage', {
      StageName: '$default',
      DefaultRouteSettings: {
        ThrottlingRateLimit: { Ref: 'ApiThrottleRate' },
        ThrottlingBurstLimit: { Ref: 'ApiThrottleBurst' },
      },
      AccessLogSettings: Match.objectLike({ DestinationArn: Match.anyValue() }),
    });
  });
});

describe('the stream function', () => {
  it('reads the table stream with item failures reported, bisection, bounded retries and an SQS dead-letter queue', () => {
    const [queueId] = only('AWS::SQS::Queue');
    const [fnId] = functionNamed('tablegraph stream processing (soldCount, order events)');
    const [, mapping] = only('AWS::Lambda::EventSourceMapping');
    expect(mapping.Properties).toMatchObject({
      FunctionName: { Ref: fnId },
      EventSourceArn: { 'Fn::GetAtt': ['Table', 'StreamArn'] },
      FunctionResponseTypes: ['ReportBatchItemFailures'],
      BisectBatchOnFunctionError: true,
      MaximumRetryAttempts: STREAM_MAX_RETRIES,
      DestinationConfig: { OnFailure: { Destination: { 'Fn::GetAtt': [queueId, 'Arn'] } } },
      StartingPosition: 'TRIM_HORIZON',
    });
    expect(STREAM_MAX_RETRIES).toBeGreaterThan(0);
    expect(STREAM_MAX_RETRIES).toBeLessThanOrEqual(10);
  });

  it('gets no production secrets', () => {
    const [, fn] = functionNamed('tablegraph stream processing (soldCount, order events)');
    expect(Object.keys(fn.Properties.Environment.Variables).sort()).toEqual([
      'DYNAMODB_MODE',
      'LOG_LEVEL',
      ...Object.keys(OTEL_VARIABLES).sort(),
      'TABLE_NAME',
    ]);
  });
});

/** What each function gets from the telemetry parameters (its OTEL_SERVICE_NAME aside). */
const OTEL_VARIABLES = {
  OTEL_EXPORTER_OTLP_ENDPOINT: { Ref: 'OtlpEndpoint' },
  OTEL_EXPORTER_OTLP_PROTOCOL: { Ref: 'OtlpProtocol' },
  OTEL_TRACES_SAMPLER: { Ref: 'TracesSampler' },
  OTEL_TRACES_SAMPLER_ARG: { Ref: 'TracesSamplerRatio' },
  OTEL_EXPORTER_OTLP_HEADERS_ARN: { Ref: 'OtlpHeadersArn' },
  OTEL_SERVICE_NAME: expect.any(String),
};

describe('telemetry', () => {
  it.each([
    ['tablegraph GraphQL API', GRAPHQL_LAMBDA_SERVICE],
    ['tablegraph stream processing (soldCount, order events)', STREAM_LAMBDA_SERVICE],
  ])('passes the OTEL_* parameters to %s, named %s', (description, service) => {
    const [, fn] = functionNamed(description);
    expect(fn.Properties.Environment.Variables).toMatchObject({ ...OTEL_VARIABLES, OTEL_SERVICE_NAME: service });
  });

  it('is off by default: no endpoint, one trace in a hundred once one is set, no headers secret', () => {
    const parameters = json.Parameters as Record<string, { Default?: string; AllowedValues?: string[] }>;
    expect(parameters.OtlpEndpoint?.Default).toBe('');
    expect(parameters.TracesSampler?.Default).toBe('parentbased_traceidratio');
    expect(parameters.TracesSamplerRatio?.Default).toBe('0.01');
    expect(parameters.OtlpProtocol?.AllowedValues).toEqual(['http/protobuf', 'http/json']);
    expect(parameters.OtlpHeadersArn?.Default).toBe('');
  });

  it('lets both functions read the headers secret, and that secret only, when one is named', () => {
    const [, policy] = resources('AWS::IAM::Policy').find(([id]) => id.startsWith('OtlpHeadersSecretRead')) ?? [];
    expect(policy?.Condition).toBe('HasOtlpHeadersSecret');
    expect(policy?.Properties.PolicyDocument.Statement).toEqual([
      { Action: 'secretsmanager:GetSecretValue', Effect: 'Allow', Resource: { Ref: 'OtlpHeadersArn' } },
    ]);
    const roles = [
      functionNamed('tablegraph GraphQL API'),
      functionNamed('tablegraph stream processing (soldCount, order events)'),
    ]
      .map(([, fn]) => ({ Ref: roleOf(fn) }))
      .sort((a, b) => a.Ref.localeCompare(b.Ref));
    const granted = (policy?.Properties.Roles ?? []) as { Ref: string }[];
    expect([...granted].sort((a, b) => a.Ref.localeCompare(b.Ref))).toEqual(roles);
    expect((json.Conditions as Record<string, unknown>).HasOtlpHeadersSecret).toEqual({
      'Fn::Not': [{ 'Fn::Equals': [{ Ref: 'OtlpHeadersArn' }, ''] }],
    });
  });
});

describe('IAM', () => {
  it('never grants dynamodb:* or a wildcard action, nor any DynamoDB action on Resource "*"', () => {
    const statements = resources('AWS::IAM::Policy').flatMap(
      ([, policy]) => policy.Properties.PolicyDocument.Statement as Statement[],
    );
    expect(statements.length).toBeGreaterThan(0);
    for (const statement of statements) {
      const actions = asList(statement.Action);
      expect(actions.filter((action) => action.includes('*'))).toEqual([]);
      if (actions.some((action) => action.startsWith('dynamodb:'))) {
        expect(JSON.stringify(statement.Resource)).not.toBe('"*"');
        expect(asList(statement.Resource)).not.toContain('*');
      }
    }
    expect(resources('AWS::IAM::Role').every(([, role]) => role.Properties.ManagedPolicyArns === undefined)).toBe(true);
  });

  it.each([
    ['graphql', 'tablegraph GraphQL API'],
    ['streams', 'tablegraph stream processing (soldCount, order events)'],
  ] as const)('grants the %s function exactly the DynamoDB actions its bundled code calls', (name, description) => {
    const called = dynamoActionsCalled(readFileSync(path.join(cachedBundle(name).dir, 'index.mjs'), 'utf8'));
    const [, fn] = functionNamed(description);
    const dynamo = statementsOf(roleOf(fn)).filter((s) => asList(s.Action).some((a) => a.startsWith('dynamodb:')));
    const onTable = dynamo.filter((s) => JSON.stringify(s.Resource) === JSON.stringify(tableArn));
    expect(onTable.flatMap((s) => asList(s.Action)).sort()).toEqual(called);
    expect([...DYNAMODB_PERMISSIONS[name].table].sort()).toEqual(called);
    // Query is the one call that may name an index: it gets every index of the table, by ARN.
    const onIndexes = dynamo.filter((s) => JSON.stringify(s.Resource).includes('/index/'));
    if (called.includes('dynamodb:Query')) {
      expect(onIndexes).toEqual([
        expect.objectContaining({ Action: 'dynamodb:Query', Resource: allIndexes.map((n) => indexArn(n ?? '')) }),
      ]);
    } else {
      expect(onIndexes).toEqual([]);
    }
  });

  it('lets only the stream function read the stream, and only that stream', () => {
    const streamStatements = resources('AWS::IAM::Policy')
      .flatMap(([, policy]) => policy.Properties.PolicyDocument.Statement as Statement[])
      .filter((s) => asList(s.Action).some((a) => a.includes('GetRecords')));
    expect(streamStatements).toEqual([
      expect.objectContaining({
        Action: ['dynamodb:DescribeStream', 'dynamodb:GetRecords', 'dynamodb:GetShardIterator', 'dynamodb:ListStreams'],
        Resource: { 'Fn::GetAtt': ['Table', 'StreamArn'] },
      }),
    ]);
  });
});

describe('alarms', () => {
  const alarmsOn = (namespace: string, metricName: string) =>
    resources('AWS::CloudWatch::Alarm').filter(
      ([, alarm]) => alarm.Properties.Namespace === namespace && alarm.Properties.MetricName === metricName,
    );

  it.each([
    ['AWS/ApiGateway', '5xx', 1],
    ['AWS/Lambda', 'Errors', 2],
    ['AWS/Lambda', 'IteratorAge', 1],
    ['AWS/SQS', 'ApproximateNumberOfMessagesVisible', 1],
  ])('watches %s %s', (namespace, metricName, count) => {
    expect(alarmsOn(namespace, metricName)).toHaveLength(count);
  });

  it('watches read and write throttles of the table and of every GSI', () => {
    for (const metric of ['ReadThrottleEvents', 'WriteThrottleEvents']) {
      const watched = alarmsOn('AWS/DynamoDB', metric).map(([, alarm]) =>
        (alarm.Properties.Dimensions as { Name: string; Value: unknown }[])
          .filter((d) => d.Name === 'GlobalSecondaryIndexName')
          .map((d) => d.Value)
          .join(''),
      );
      expect(watched.sort()).toEqual(['', ...globalIndexes].sort());
    }
  });

  it('sends every alarm to the alarm topic', () => {
    const [topicId] = only('AWS::SNS::Topic');
    const alarms = resources('AWS::CloudWatch::Alarm');
    expect(alarms.length).toBeGreaterThanOrEqual(5 + 2 * (1 + globalIndexes.length));
    for (const [, alarm] of alarms) expect(alarm.Properties.AlarmActions).toEqual([{ Ref: topicId }]);
  });
});
