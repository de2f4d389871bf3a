/**
 * The alarms of the stack, all on one SNS topic (an e-mail subscription when AlarmEmail is set):
 * API 5xx, each function's errors, the stream's iterator age, read and write throttles of the
 * table and of every GSI, and the dead-letter queue's depth. Missing data is not breaching: an
 * idle stack is a healthy one. The fleet's own alarms (`-c fleet=true`) are in fleetAlarms.ts.
 */
import { Duration } from 'aws-cdk-lib';
import { Alarm, ComparisonOperator, Metric, TreatMissingData } from 'aws-cdk-lib/aws-cloudwatch';
import type { IMetric } from 'aws-cdk-lib/aws-cloudwatch';
import { SnsAction } from 'aws-cdk-lib/aws-cloudwatch-actions';
import { Alias } from 'aws-cdk-lib/aws-kms';
import { CfnSubscription, Topic } from 'aws-cdk-lib/aws-sns';
import type { Construct } from 'constructs';
import type { GraphQLApi } from './api.js';
import type { StackParameters } from './parameters.js';
import type { StreamProcessor } from './streamProcessor.js';
import type { TableResources } from './table.js';

export const FIVE_MINUTES = Duration.minutes(5);

/** An iterator age above this means the stream function is falling behind (or stuck on a batch). */
export const ITERATOR_AGE_ALARM_MS = 60_000;
/** 5xx answers of the API in five minutes that page someone. */
export const API_5XX_ALARM = 5;

export interface AlarmTargets {
  params: StackParameters;
  api: GraphQLApi;
  /** The stream function; not in the fleet, whose consumer service reads the stream instead. */
  streams: StreamProcessor | undefined;
  table: TableResources;
}

/**
 * An alarm on `metric` at `threshold` or above (below, with `below`), over one period, sent to
 * `topic`. Missing data is not breaching.
 */
export type AddAlarm = (id: string, metric: IMetric, threshold: number, description: string, below?: boolean) => void;

export function alarmsTo(scope: Construct, topic: Topic): AddAlarm {
  const action = new SnsAction(topic);
  return (id, metric, threshold, description, below = false) => {
    new Alarm(scope, id, {
      metric,
      threshold,
      evaluationPeriods: 1,
      comparisonOperator: below
        ? ComparisonOperator.LESS_THAN_THRESHOLD
        : ComparisonOperator.GREATER_THAN_OR_EQUAL_TO_THRESHOLD,
      treatMissingData: TreatMissingData.NOT_BREACHING,
      alarmDescription: description,
    }).addAlarmAction(action);
  };
}

export function createAlarms(scope: Construct, { params, api, streams, table }: AlarmTargets): Topic {
  const topic = new Topic(scope, 'AlarmTopic', {
    displayName: 'tablegraph alarms',
    enforceSSL: true,
    masterKey: Alias.fromAliasName(scope, 'SnsManagedKey', 'alias/aws/sns'),
  });
  const email = new CfnSubscription(scope, 'AlarmEmailSubscription', {
    topicArn: topic.topicArn,
    protocol: 'email',
    endpoint: params.alarmEmail.valueAsString,
  });
  email.cfnOptions.condition = params.hasAlarmEmail;

  const alarm = alarmsTo(scope, topic);

  alarm(
    'ApiServerErrorsAlarm',
    api.api.metricServerError({ period: FIVE_MINUTES, statistic: 'Sum' }),
    API_5XX_ALARM,
    `The HTTP API answered ${API_5XX_ALARM} or more 5xx in 5 minutes`,
  );
  alarm(
    'GraphQLFunctionErrorsAlarm',
    api.fn.metricErrors({ period: FIVE_MINUTES, statistic: 'Sum' }),
    1,
    'The GraphQL function failed (an error thrown out of the handler, a timeout or an out-of-memory)',
  );
  if (streams) {
    alarm(
      'StreamFunctionErrorsAlarm',
      streams.fn.metricErrors({ period: FIVE_MINUTES, statistic: 'Sum' }),
      1,
      'The stream function failed a batch; the event source mapping retries it',
    );
    alarm(
      'StreamIteratorAgeAlarm',
      streams.fn.metric('IteratorAge', { period: FIVE_MINUTES, statistic: 'Maximum' }),
      ITERATOR_AGE_ALARM_MS,
      `The stream function is more than ${ITERATOR_AGE_ALARM_MS / 1000} s behind the table's stream`,
    );
    alarm(
      'StreamDeadLettersAlarm',
      streams.deadLetters.metricApproximateNumberOfMessagesVisible({ period: FIVE_MINUTES, statistic: 'Maximum' }),
      1,
      'A stream batch failed every retry and was sent to the dead-letter queue: look at it and replay it',
    );
  }

  const throttles = (kind: 'Read' | 'Write', index?: string) =>
    new Metric({
      namespace: 'AWS/DynamoDB',
      metricName: `${kind}ThrottleEvents`,
      dimensionsMap: index
        ? { TableName: table.table.ref, GlobalSecondaryIndexName: index }
        : { TableName: table.table.ref },
      period: FIVE_MINUTES,
      statistic: 'Sum',
    });
  for (const kind of ['Read', 'Write'] as const) {
    alarm(`Table${kind}ThrottlesAlarm`, throttles(kind), 1, `DynamoDB throttled ${kind.toLowerCase()}s of the table`);
    for (const index of table.globalIndexNames) {
      alarm(
        `${index}${kind}ThrottlesAlarm`,
        throttles(kind, index),
        1,
        `DynamoDB throttled ${kind.toLowerCase()}s of ${index}` +
          (kind === 'Write' ? ' (a throttled GSI write throttles the table write)' : ''),
      );
    }
  }
  return topic;
}
