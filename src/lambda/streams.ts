/**
 * The stream processing (src/streams/processor.ts) as an AWS Lambda function on the table's
 * DynamoDB stream: the deployed counterpart of the in-process StreamConsumer.
 *
 * The event source mapping must enable `ReportBatchItemFailures` (FunctionResponseTypes): the
 * handler then answers the sequence number of the first record that failed, and Lambda retries
 * the batch from that record on; everything before it is done. Records after it may have been
 * applied already: processing is idempotent, so the retry changes nothing for them (their
 * events may be published again). Without the setting Lambda retries the whole batch, which
 * is equally safe, only slower. Deploy with DYNAMODB_MODE=aws and TABLE_NAME.
 *
 * With REDIS_URL (ElastiCache, `rediss://` for in-transit encryption) the events are published
 * to Redis, where every API instance hears them (src/events/redisEventBus.ts); the connection
 * is opened on a cold start and kept across invocations. An event published while Redis is
 * unreachable is lost (logged, never a failed batch: soldCount must go on).
 */
import type { DynamoDBDocumentClient } from '@aws-sdk/lib-dynamodb';
import type { Context, DynamoDBBatchResponse, DynamoDBStreamEvent } from 'aws-lambda';
import { pino } from 'pino';
import { loadConfig } from '../config.js';
import { createDynamo } from '../db/client.js';
import { RedisEventBus } from '../events/redisEventBus.js';
import { processRecords } from '../streams/processor.js';
import type { PublishOrderEvent, StreamLog } from '../streams/processor.js';

export type StreamLambdaHandler = (event: DynamoDBStreamEvent, context?: Context) => Promise<DynamoDBBatchResponse>;

export interface StreamHandlerOptions {
  doc: DynamoDBDocumentClient;
  tableName: string;
  /** Where order events go; without it they are only logged (debug). */
  publish?: PublishOrderEvent | undefined;
  log?: StreamLog | undefined;
}

/** Builds a handler (tests pass their own clients; the exported `handler` reads the environment). */
export function createStreamHandler({ doc, tableName, publish, log }: StreamHandlerOptions): StreamLambdaHandler {
  const deliver: PublishOrderEvent =
    publish ??
    ((event) => log?.debug({ type: event.type, orderId: event.order.orderId, seq: event.seq }, 'order event'));
  return async (event) => {
    const result = await processRecords(event.Records, { doc, tableName, publish: deliver, log });
    const first = result.failures[0];
    if (!first) return { batchItemFailures: [] };
    log?.warn(
      { err: first.error, sequenceNumber: first.sequenceNumber, failures: result.failures.length },
      'stream records failed; Lambda retries from the first',
    );
    // Without a sequence number Lambda could not resume at the record: fail the whole batch.
    if (!first.sequenceNumber) throw first.error;
    return { batchItemFailures: [{ itemIdentifier: first.sequenceNumber }] };
  };
}

/**
 * The handler as the environment configures it (TABLE_NAME, DYNAMODB_MODE / DYNAMODB_ENDPOINT,
 * REDIS_URL), and how to close its connections (tests; a Lambda keeps them for the next event).
 */
export async function streamHandlerFromEnv(
  env: NodeJS.ProcessEnv = process.env,
): Promise<{ handler: StreamLambdaHandler; close: () => Promise<void> }> {
  const config = loadConfig(env);
  const dynamo = createDynamo({ endpoint: config.endpoint, region: config.region });
  const log = pino({ level: config.logLevel });
  let bus: RedisEventBus | undefined;
  if (config.redisUrl) {
    bus = new RedisEventBus({
      url: config.redisUrl,
      tableName: config.tableName,
      log,
      subscribe: false,
      signingSecret: config.events.signingSecret,
    });
    await bus.start();
  }
  const redis = bus;
  return {
    handler: createStreamHandler({
      doc: dynamo.doc,
      tableName: config.tableName,
      publish: redis && ((orderEvent) => redis.publish(orderEvent)),
      log,
    }),
    close: async () => {
      await redis?.close();
      dynamo.client.destroy();
    },
  };
}

let built: Promise<StreamLambdaHandler> | undefined;

/** The Lambda entry point: `index.handler` of the bundle (deploy/bundle.ts). */
export const handler: StreamLambdaHandler = async (event, context) => {
  built ??= streamHandlerFromEnv().then(({ handler: fromEnv }) => fromEnv);
  return (await built)(event, context);
};
