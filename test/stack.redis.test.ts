/**
 * The stack with `-c redis=true`: ElastiCache Redis and the VPC wiring, and cdk-nag as a gate
 * (an unacknowledged finding fails synthesis, as it does for `npm run synth` and `cdk deploy`).
 */
import { Queue } from 'aws-cdk-lib/aws-sqs';
import { Match, Template } from 'aws-cdk-lib/assertions';
import { beforeAll, describe, expect, it } from 'vitest';
import { REDIS_PORT } from '../deploy/redis.js';
import { createApp } from '../deploy/synth.js';

type Resource = { Type: string; Properties: Record<string, any> };
let json: { Resources: Record<string, Resource> };
let template: Template;

beforeAll(() => {
  const { app, stack } = createApp({ redis: true });
  json = app.synth().getStackArtifact(stack.artifactId).template as typeof json;
  template = Template.fromJSON(json);
}, 120_000);

const resources = (type: string) => Object.entries(json.Resources).filter(([, resource]) => resource.Type === type);

describe('the stack with Redis', () => {
  it('runs one encrypted Redis node in the private subnets', () => {
    template.resourceCountIs('AWS::ElastiCache::ReplicationGroup', 1);
    template.hasResourceProperties('AWS::ElastiCache::ReplicationGroup', {
      TransitEncryptionEnabled: true,
      AtRestEncryptionEnabled: true,
      Port: REDIS_PORT,
      NumCacheClusters: 1,
    });
    template.resourceCountIs('AWS::EC2::VPC', 1);
    template.hasResourceProperties('AWS::EC2::VPCEndpoint', {
      VpcEndpointType: 'Gateway',
      ServiceName: Match.objectLike({ 'Fn::Join': ['', Match.arrayWith([Match.stringLikeRegexp('dynamodb')])] }),
    });
  });

  it('admits only the functions to Redis', () => {
    const [redisGroupId] = resources('AWS::EC2::SecurityGroup').find(([, group]) =>
      String(group.Properties.GroupDescription).startsWith('tablegraph Redis'),
    ) as [string, Resource];
    const [functionsGroupId] = resources('AWS::EC2::SecurityGroup').find(([, group]) =>
      String(group.Properties.GroupDescription).startsWith('tablegraph functions'),
    ) as [string, Resource];
    const ingress = resources('AWS::EC2::SecurityGroupIngress').map(([, rule]) => rule.Properties);
    expect(ingress).toEqual([
      expect.objectContaining({
        GroupId: { 'Fn::GetAtt': [redisGroupId, 'GroupId'] },
        SourceSecurityGroupId: { 'Fn::GetAtt': [functionsGroupId, 'GroupId'] },
        FromPort: REDIS_PORT,
        ToPort: REDIS_PORT,
        IpProtocol: 'tcp',
      }),
    ]);
  });

  it('gives both functions REDIS_URL (TLS) and places them in the VPC', () => {
    const functions = resources('AWS::Lambda::Function');
    expect(functions).toHaveLength(2);
    for (const [, fn] of functions) {
      expect(JSON.stringify(fn.Properties.Environment.Variables.REDIS_URL)).toContain('rediss://');
      expect(fn.Properties.VpcConfig.SubnetIds.length).toBe(2);
      // Without it Lambda cannot create the function's network interfaces: the deploy would fail.
      const role = json.Resources[fn.Properties.Role['Fn::GetAtt'][0]] as Resource;
      expect(JSON.stringify(role.Properties.ManagedPolicyArns)).toContain(
        'service-role/AWSLambdaVPCAccessExecutionRole',
      );
    }
  });

  it('gives the stream function a generated REDIS_SIGNING_SECRET, which it alone may read', () => {
    const [secretId] = resources('AWS::SecretsManager::Secret').find(([, secret]) =>
      String(secret.Properties.Description).includes('REDIS_SIGNING_SECRET'),
    ) as [string, Resource];
    const functions = resources('AWS::Lambda::Function');
    const streamFunction = functions.find(([, fn]) => fn.Properties.Environment.Variables.REDIS_SIGNING_SECRET_ARN);
    expect(streamFunction?.[1].Properties.Description).toContain('stream processing');
    expect(streamFunction?.[1].Properties.Environment.Variables.REDIS_SIGNING_SECRET_ARN).toEqual({ Ref: secretId });
    const readers = resources('AWS::IAM::Policy').filter(([, policy]) =>
      JSON.stringify(policy.Properties.PolicyDocument).includes(`"Ref":"${secretId}"`),
    );
    expect(readers.map(([, policy]) => policy.Properties.PolicyDocument.Statement)).toEqual([
      expect.arrayContaining([
        { Action: 'secretsmanager:GetSecretValue', Effect: 'Allow', Resource: { Ref: secretId } },
      ]),
    ]);
  });
});

describe('cdk-nag', () => {
  it('fails synthesis on a finding nobody acknowledged', () => {
    const { app, stack } = createApp({ redis: false });
    // A queue without enforced TLS, and no reason given: AwsSolutions-SQS4.
    new Queue(stack, 'CarelessQueue');
    expect(() => app.synth()).toThrow(/AwsSolutions-SQS4/);
  }, 120_000);
});
