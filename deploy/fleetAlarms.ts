/**
 * The fleet's alarms, on the stack's alarm topic: 5xx answers of the API tasks and of the load
 * balancer itself, a task failing its readiness check, fewer consumers running than asked for
 * (Container Insights' task count), and Valkey throttling at its ECPU limit.
 */
import { Metric } from 'aws-cdk-lib/aws-cloudwatch';
import { HttpCodeElb, HttpCodeTarget } from 'aws-cdk-lib/aws-elasticloadbalancingv2';
import { API_5XX_ALARM, FIVE_MINUTES } from './alarms.js';
import type { AddAlarm } from './alarms.js';
import type { Fleet } from './fleet.js';
import type { FleetParameters } from './fleetParameters.js';

export function createFleetAlarms(alarm: AddAlarm, fleet: Fleet, params: FleetParameters): void {
  const { front, consumer, cluster, valkey } = fleet;
  const sum = { period: FIVE_MINUTES, statistic: 'Sum' };
  alarm(
    'FleetApiServerErrorsAlarm',
    front.targetGroup.metrics.httpCodeTarget(HttpCodeTarget.TARGET_5XX_COUNT, sum),
    API_5XX_ALARM,
    `The API tasks answered ${API_5XX_ALARM} or more 5xx in 5 minutes`,
  );
  alarm(
    'FleetLoadBalancerErrorsAlarm',
    front.loadBalancer.metrics.httpCodeElb(HttpCodeElb.ELB_5XX_COUNT, sum),
    API_5XX_ALARM,
    `The load balancer answered ${API_5XX_ALARM} or more 5xx itself in 5 minutes (no ready task, a task too slow or gone)`,
  );
  alarm(
    'FleetUnhealthyTasksAlarm',
    front.targetGroup.metrics.unhealthyHostCount({ period: FIVE_MINUTES, statistic: 'Maximum' }),
    1,
    'An API task failed its readiness check (/readyz: DynamoDB unreachable, the table not ACTIVE, or no answer)',
  );
  alarm(
    'FleetConsumersAlarm',
    new Metric({
      namespace: 'ECS/ContainerInsights',
      metricName: 'RunningTaskCount',
      dimensionsMap: { ClusterName: cluster.clusterName, ServiceName: consumer.service.serviceName },
      period: FIVE_MINUTES,
      // The most that ran in five minutes: below the count, none of the replacements came up.
      statistic: 'Maximum',
    }),
    params.consumerTasks.valueAsNumber,
    'Fewer stream consumers than FleetConsumerTasks ran for 5 minutes: events and invalidations may be late',
    true,
  );
  alarm(
    'FleetValkeyThrottlesAlarm',
    new Metric({
      namespace: 'AWS/ElastiCache',
      metricName: 'ThrottledCmds',
      dimensionsMap: { clusterId: valkey.name },
      ...sum,
    }),
    1,
    'Valkey throttled commands: raise FleetCacheMaxEcpuPerSecond, or look at what the fleet sends it',
  );
}
