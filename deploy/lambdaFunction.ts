/**
 * One Lambda function of the stack: its bundle as a code asset with a content hash, a role of
 * its own with no managed policy (logging is granted on its own log group only), and a log group
 * with a retention.
 */
import type { Duration } from 'aws-cdk-lib';
import { AssetHashType, RemovalPolicy, Validations } from 'aws-cdk-lib';
import type { ISecurityGroup, IVpc, SubnetSelection } from 'aws-cdk-lib/aws-ec2';
import { ManagedPolicy, PolicyStatement, Role, ServicePrincipal } from 'aws-cdk-lib/aws-iam';
import { Architecture, Code, Function as LambdaFunction, Runtime } from 'aws-cdk-lib/aws-lambda';
import { LogGroup, RetentionDays } from 'aws-cdk-lib/aws-logs';
import type { Construct } from 'constructs';
import { cachedBundle } from './bundle.js';
import type { LambdaName } from './bundle.js';

/** Node.js 24 LTS: the runtime the project itself runs and tests on, and the bundle's target. */
export const LAMBDA_RUNTIME = Runtime.NODEJS_24_X;

/** Where the functions run when Redis is on: private subnets of the stack's VPC. */
export interface FunctionNetwork {
  vpc: IVpc;
  subnets: SubnetSelection;
  securityGroups: ISecurityGroup[];
}

export interface FunctionOptions {
  name: LambdaName;
  description: string;
  memorySize: number;
  timeout: Duration;
  environment: Record<string, string>;
  network?: FunctionNetwork | undefined;
}

export interface StackFunction {
  fn: LambdaFunction;
  role: Role;
}

export function createFunction(scope: Construct, id: string, options: FunctionOptions): StackFunction {
  const bundle = cachedBundle(options.name);
  const logGroup = new LogGroup(scope, `${id}Logs`, {
    retention: RetentionDays.ONE_MONTH,
    removalPolicy: RemovalPolicy.DESTROY,
  });
  const role = new Role(scope, `${id}Role`, {
    assumedBy: new ServicePrincipal('lambda.amazonaws.com'),
    description: `${options.description}: its DynamoDB actions, its secrets, its logs`,
  });
  role.addToPrincipalPolicy(
    new PolicyStatement({ actions: ['logs:CreateLogStream', 'logs:PutLogEvents'], resources: [logGroup.logGroupArn] }),
  );
  if (options.network) {
    // Lambda creates the function's network interfaces with its role. CDK adds this policy only
    // to roles it creates itself; ec2:CreateNetworkInterface and friends have no resource ARNs.
    role.addManagedPolicy(ManagedPolicy.fromAwsManagedPolicyName('service-role/AWSLambdaVPCAccessExecutionRole'));
    Validations.of(role).acknowledge({
      id: 'AwsSolutions::AwsSolutions-IAM4[Policy::arn:<AWS::Partition>:iam::aws:policy/service-role/AWSLambdaVPCAccessExecutionRole]',
      reason:
        "AWSLambdaVPCAccessExecutionRole is AWS's own minimal policy for a function's network interfaces in a VPC " +
        '(ec2:CreateNetworkInterface, Describe, Delete, Assign/UnassignPrivateIpAddresses), which take no resource ARN.',
    });
  }
  const fn = new LambdaFunction(scope, id, {
    description: options.description,
    runtime: LAMBDA_RUNTIME,
    architecture: Architecture.ARM_64,
    handler: 'index.handler',
    // The hash is the bundle's own (bundle.ts): the same bytes give the same S3 key anywhere.
    code: Code.fromAsset(bundle.dir, { assetHash: bundle.hash, assetHashType: AssetHashType.CUSTOM }),
    memorySize: options.memorySize,
    timeout: options.timeout,
    role,
    logGroup,
    environment: options.environment,
    ...(options.network
      ? {
          vpc: options.network.vpc,
          vpcSubnets: options.network.subnets,
          securityGroups: options.network.securityGroups,
        }
      : {}),
  });
  return { fn, role };
}
