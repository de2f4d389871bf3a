/**
 * The stream function (src/lambda/streams.ts) on the table's stream. Its event source mapping
 * reports batch item failures (the handler names the first failed record and Lambda resumes
 * there), bisects a failing batch, retries a bounded number of times, and then sends the batch's
 * description to an SQS dead-letter queue instead of blocking the shard for 24 hours.
 */
import { Duration, Validations } from 'aws-cdk-lib';
import { SqsDlq } from 'aws-cdk-lib/aws-lambda-event-sources';
import { EventSourceMapping, StartingPosition } from 'aws-cdk-lib/aws-lambda';
import { Queue, QueueEncryption } from 'aws-cdk-lib/aws-sqs';
import type { Construct } from 'constructs';
import { createFunction } from './lambdaFunction.js';
import type { FunctionNetwork, StackFunction } from './lambdaFunction.js';

/** Attempts after the first before a batch goes to the dead-letter queue. */
export const STREAM_MAX_RETRIES = 10;
export const STREAM_BATCH_SIZE = 100;

export interface StreamProcessor extends StackFunction {
  mapping: EventSourceMapping;
  deadLetters: Queue;
}

export interface StreamProcessorOptions {
  streamArn: string;
  environment: Record<string, string>;
  network?: FunctionNetwork | undefined;
}

export function createStreamProcessor(
  scope: Construct,
  { streamArn, environment, network }: StreamProcessorOptions,
): StreamProcessor {
  const { fn, role } = createFunction(scope, 'StreamFunction', {
    name: 'streams',
    description: 'tablegraph stream processing (soldCount, order events)',
    memorySize: 512,
    timeout: Duration.minutes(1),
    environment,
    network,
  });
  const deadLetters = new Queue(scope, 'StreamDeadLetters', {
    encryption: QueueEncryption.SQS_MANAGED,
    enforceSSL: true,
    // The longest SQS keeps a message: time to look at a failed batch and replay it.
    retentionPeriod: Duration.days(14),
  });
  Validations.of(deadLetters).acknowledge({
    id: 'AwsSolutions::AwsSolutions-SQS3',
    reason:
      'This queue is the dead-letter destination of the stream mapping (an on-failure destination, not a ' +
      'RedrivePolicy, which the rule looks for); it holds batch descriptions for 14 days and has no consumer to fail.',
  });
  const mapping = new EventSourceMapping(scope, 'TableStreamMapping', {
    target: fn,
    eventSourceArn: streamArn,
    // A new mapping starts at the oldest record the stream still has (24 hours): nothing missed.
    startingPosition: StartingPosition.TRIM_HORIZON,
    batchSize: STREAM_BATCH_SIZE,
    reportBatchItemFailures: true,
    bisectBatchOnError: true,
    retryAttempts: STREAM_MAX_RETRIES,
    // SqsDlq grants the function's role sqs:SendMessage (and attributes) on this queue only.
    onFailure: new SqsDlq(deadLetters),
  });
  return { fn, role, mapping, deadLetters };
}
