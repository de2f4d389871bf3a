/**
 * The fleet's front door: an internet-facing Application Load Balancer in the public subnets.
 * One listener forwards everything (GraphQL over HTTP, the WebSocket upgrade, SSE) to the API
 * tasks: HTTPS on 443 with the FleetCertificateArn certificate, then 80 redirects there; plain
 * HTTP on 80 while the parameter is empty. The target group asks each task's `/readyz`, so a task
 * that cannot reach DynamoDB gets no requests, and the idle timeout outlasts the servers'
 * keep-alive pings, so subscriptions stay open however quiet they are.
 */
import { Aws, Duration, Fn, Token, Validations } from 'aws-cdk-lib';
import { Peer, Port, SecurityGroup, SubnetType } from 'aws-cdk-lib/aws-ec2';
import type { IVpc } from 'aws-cdk-lib/aws-ec2';
import {
  ApplicationLoadBalancer,
  ApplicationProtocol,
  ApplicationTargetGroup,
  CfnListener,
  ListenerAction,
  SslPolicy,
  TargetType,
} from 'aws-cdk-lib/aws-elasticloadbalancingv2';
import type { ApplicationListener } from 'aws-cdk-lib/aws-elasticloadbalancingv2';
import type { Construct } from 'constructs';
import type { FleetParameters } from './fleetParameters.js';

/**
 * Seconds a connection may stay silent. The servers ping every WebSocket and write a comment on
 * every SSE stream each WS_KEEPALIVE_MS (30 s by default), well inside it; their own keep-alive
 * timeout is set above it (fleet.ts), or the balancer would reuse connections they just closed.
 */
export const FLEET_IDLE_TIMEOUT_SECONDS = 120;
/** A draining task keeps its connections this long before it gets SIGTERM (its streams then end and clients reconnect). */
export const FLEET_DEREGISTRATION_DELAY_SECONDS = 30;
/** The API's port in its task. */
export const API_PORT = 4000;

export interface FleetLoadBalancer {
  loadBalancer: ApplicationLoadBalancer;
  listener: ApplicationListener;
  targetGroup: ApplicationTargetGroup;
  securityGroup: SecurityGroup;
  /** `http://` or `https://` and the balancer's DNS name: the base of the fleet's URL. */
  origin: string;
}

export function createFleetLoadBalancer(scope: Construct, vpc: IVpc, params: FleetParameters): FleetLoadBalancer {
  const securityGroup = new SecurityGroup(scope, 'FleetLoadBalancerSecurityGroup', {
    vpc,
    description: 'tablegraph load balancer: HTTP and HTTPS from anywhere, out to the API tasks only',
    allowAllOutbound: false,
  });
  for (const port of [80, 443])
    securityGroup.addIngressRule(Peer.anyIpv4(), Port.tcp(port), `port ${port} from anywhere`);
  Validations.of(securityGroup).acknowledge({
    id: 'AwsSolutions::AwsSolutions-EC23',
    reason: 'The public GraphQL API: its load balancer takes HTTP and HTTPS from any address, and nothing else.',
  });

  const loadBalancer = new ApplicationLoadBalancer(scope, 'FleetLoadBalancer', {
    vpc,
    internetFacing: true,
    vpcSubnets: { subnetType: SubnetType.PUBLIC },
    securityGroup,
    idleTimeout: Duration.seconds(FLEET_IDLE_TIMEOUT_SECONDS),
    dropInvalidHeaderFields: true,
  });
  Validations.of(loadBalancer).acknowledge({
    id: 'AwsSolutions::AwsSolutions-ELB2',
    reason:
      "Every API task logs each GraphQL request it serves (operation, duration, cost, errors), and the balancer's " +
      "own 5xx are counted and alarmed (fleetAlarms.ts). Its access logs would need the region's ELB account in " +
      'a bucket policy, which this environment-agnostic template cannot name.',
  });

  const targetGroup = new ApplicationTargetGroup(scope, 'FleetApiTargets', {
    vpc,
    port: API_PORT,
    protocol: ApplicationProtocol.HTTP,
    targetType: TargetType.IP,
    deregistrationDelay: Duration.seconds(FLEET_DEREGISTRATION_DELAY_SECONDS),
    healthCheck: {
      path: '/readyz',
      healthyHttpCodes: '200',
      interval: Duration.seconds(15),
      timeout: Duration.seconds(5),
      healthyThresholdCount: 2,
      unhealthyThresholdCount: 3,
    },
  });

  // One listener whose port and protocol follow the certificate parameter, so that one template
  // serves both settings and the service always has a listener in front of its target group.
  const listener = loadBalancer.addListener('FleetListener', {
    port: 80,
    protocol: ApplicationProtocol.HTTP,
    open: false,
    defaultAction: ListenerAction.forward([targetGroup]),
  });
  const secure = params.hasCertificate.logicalId;
  const cfn = listener.node.defaultChild as CfnListener;
  cfn.port = Token.asNumber(Fn.conditionIf(secure, 443, 80));
  cfn.protocol = Token.asString(Fn.conditionIf(secure, 'HTTPS', 'HTTP'));
  cfn.sslPolicy = Token.asString(Fn.conditionIf(secure, SslPolicy.RECOMMENDED_TLS, Aws.NO_VALUE));
  cfn.certificates = Fn.conditionIf(secure, [{ CertificateArn: params.certificateArn.valueAsString }], Aws.NO_VALUE);
  const redirect = new CfnListener(scope, 'FleetHttpRedirect', {
    loadBalancerArn: loadBalancer.loadBalancerArn,
    port: 80,
    protocol: 'HTTP',
    defaultActions: [{ type: 'redirect', redirectConfig: { protocol: 'HTTPS', port: '443', statusCode: 'HTTP_301' } }],
  });
  redirect.cfnOptions.condition = params.hasCertificate;

  const origin = Token.asString(
    Fn.conditionIf(secure, `https://${loadBalancer.loadBalancerDnsName}`, `http://${loadBalancer.loadBalancerDnsName}`),
  );
  return { loadBalancer, listener, targetGroup, securityGroup, origin };
}
