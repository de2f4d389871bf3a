/**
 * The CloudFormation parameters of the fleet (`-c fleet=true` only; the default template has none
 * of them): the load balancer's certificate, the browser origins, the task counts, and the bounds
 * of the serverless cache, which are also the bounds of its bill.
 */
import { CfnCondition, CfnParameter, Fn } from 'aws-cdk-lib';
import type { Construct } from 'constructs';

export interface FleetParameters {
  certificateArn: CfnParameter;
  corsOrigins: CfnParameter;
  apiMinTasks: CfnParameter;
  apiMaxTasks: CfnParameter;
  consumerTasks: CfnParameter;
  cacheMaxGb: CfnParameter;
  cacheMaxEcpuPerSecond: CfnParameter;
  hasCertificate: CfnCondition;
}

/** Consumers fail over through shard leases: one alone would leave the stream unread while it is replaced. */
export const MIN_CONSUMER_TASKS = 2;

const count = (scope: Construct, id: string, defaultValue: number, min: number, max: number, description: string) =>
  new CfnParameter(scope, id, { type: 'Number', default: defaultValue, minValue: min, maxValue: max, description });

export function defineFleetParameters(scope: Construct): FleetParameters {
  const certificateArn = new CfnParameter(scope, 'FleetCertificateArn', {
    type: 'String',
    default: '',
    allowedPattern: '(arn:aws[a-z-]*:acm:[a-z0-9-]+:[0-9]{12}:certificate/[A-Za-z0-9-]+)?',
    description:
      'An ACM certificate for your domain: the load balancer then serves HTTPS on 443 and redirects 80 to it; empty: plain HTTP on 80',
  });
  return {
    certificateArn,
    corsOrigins: new CfnParameter(scope, 'FleetCorsOrigins', {
      type: 'String',
      default: '',
      description:
        'CORS_ORIGINS of the API tasks: browser origins allowed to call it and open its WebSocket, comma-separated; empty: none',
    }),
    apiMinTasks: count(
      scope,
      'FleetApiMinTasks',
      2,
      1,
      100,
      'API tasks at least (one per zone keeps a zone outage survivable)',
    ),
    apiMaxTasks: count(
      scope,
      'FleetApiMaxTasks',
      10,
      1,
      100,
      'API tasks at most, whatever the CPU or the request count',
    ),
    consumerTasks: count(
      scope,
      'FleetConsumerTasks',
      MIN_CONSUMER_TASKS,
      MIN_CONSUMER_TASKS,
      20,
      'Stream consumers (npm run consumer): they share the shards through leases, and a standby takes over a failed one',
    ),
    cacheMaxGb: count(
      scope,
      'FleetCacheMaxGb',
      1,
      1,
      5000,
      'Serverless Valkey: data stored at most, GB (then it evicts keys with a TTL)',
    ),
    cacheMaxEcpuPerSecond: count(
      scope,
      'FleetCacheMaxEcpuPerSecond',
      20_000,
      1000,
      15_000_000,
      'Serverless Valkey: ECPUs per second at most (commands beyond it are throttled, and alarm)',
    ),
    hasCertificate: new CfnCondition(scope, 'HasFleetCertificate', {
      expression: Fn.conditionNot(Fn.conditionEquals(certificateArn.valueAsString, '')),
    }),
  };
}
