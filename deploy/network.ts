/**
 * The stack's VPC, when something needs one (`-c redis=true`, `-c fleet=true`): two zones, public
 * subnets (the NAT gateway, the fleet's load balancer), private subnets with egress through one
 * NAT gateway (what runs there still reaches a JWKS URL, AWS APIs and, for the fleet, ECR), a
 * DynamoDB gateway endpoint (table traffic stays off the NAT gateway, which bills per GB), and
 * flow logs.
 */
import { RemovalPolicy } from 'aws-cdk-lib';
import { FlowLogDestination, GatewayVpcEndpointAwsService, SubnetType, Vpc } from 'aws-cdk-lib/aws-ec2';
import { LogGroup, RetentionDays } from 'aws-cdk-lib/aws-logs';
import type { Construct } from 'constructs';

/** Where the functions, tasks and caches run. */
export const PRIVATE_SUBNETS = { subnetType: SubnetType.PRIVATE_WITH_EGRESS } as const;

export function createVpc(scope: Construct): Vpc {
  const flowLogs = new LogGroup(scope, 'VpcFlowLogs', {
    retention: RetentionDays.ONE_MONTH,
    removalPolicy: RemovalPolicy.DESTROY,
  });
  return new Vpc(scope, 'Vpc', {
    maxAzs: 2,
    natGateways: 1,
    subnetConfiguration: [
      { name: 'public', subnetType: SubnetType.PUBLIC, cidrMask: 24 },
      { name: 'private', subnetType: SubnetType.PRIVATE_WITH_EGRESS, cidrMask: 22 },
    ],
    gatewayEndpoints: { DynamoDB: { service: GatewayVpcEndpointAwsService.DYNAMODB } },
    flowLogs: { all: { destination: FlowLogDestination.toCloudWatchLogs(flowLogs) } },
  });
}
