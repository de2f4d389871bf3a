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
 * What a batch turns into besides soldCount is the same as for every reader of the stream
 * (src/streams/streamOutputs.ts), and the invocation waits for all of it before it returns (a
 * frozen function sends nothing):
 * - with REDIS_URL (ElastiCache, `rediss://` for in-transit encryption; REDIS_MODE=cluster for a
 *   cluster) the events go to Redis, where every API instance hears them, and so do the batch's
 *   dependency tags and, when the batch held a feed probe, a heartbeat naming it: API instances
 *   fed by this function cache, and know within their feed timeout when it stops (the function
 *   is not invoked while the stream is idle: the instances' probes are what it answers, see
 *   src/streams/feedProbe.ts). The connections are opened on a cold start and kept across
 *   invocations. What cannot be published while Redis is unreachable is lost (logged and
 *   counted, never a failed batch: soldCount must go on);
 * - with CDN_PURGE_URL the public tags are POSTed to it (src/streams/cdnPurge.ts), bounded by
 *   the POSTs' retries.
 *
 * Telemetry starts at cold start from the OTEL_* settings (a secret OTLP header by
 * OTEL_EXPORTER_OTLP_HEADERS_ARN); each invocation ends with its EMF lines and a bounded flush
 * (./invocation.ts).
 */
import type { DynamoDBDocumentClient } from '@aws-sdk/lib-dynamodb';
import type { Context, DynamoDBBatchResponse, DynamoDBStreamEvent } from 'aws-lambda';
import { pino } from 'pino';
import { loadStreamLambdaConfig } from '../config/index.js';
import { createDynamo } from '../db/client.js';
import { redisSettingsOf, startRedisMessaging } from '../events/redisFromConfig.js';
import { registerRedisMetrics } from '../events/redisMetrics.js';
import { describeEvent } from '../events/changeEvent.js';
import { createMetrics, instrumentClient } from '../pipeline/report/metrics.js';
import { startPublisherBumps } from '../pipeline/responseCache/tagBumps.js';
import { cdnPurgerFrom } from '../streams/cdnPurge.js';
import type { CdnPurger } from '../streams/cdnPurge.js';
import { registerCdnPurgeMetrics } from '../streams/cdnPurgeMetrics.js';
import { processRecords } from '../streams/processor.js';
import type { ProcessResult, PublishChangeEvent, StreamLog } from '../streams/processor.js';
import { redisInvalidations } from '../streams/redisInvalidations.js';
import { StreamOutputs } from '../streams/streamOutputs.js';
import type { InvalidationOutput } from '../streams/streamOutputs.js';
import { registerStreamMetrics } from '../streams/streamMetrics.js';
import { startTelemetry } from '../telemetry/start.js';
import type { Telemetry } from '../telemetry/start.js';
import { invocationEnd } from './invocation.js';
import { coldStart, resolveSecrets, secretsManagerReader } from './secrets.js';

/** The function's `service.name` and EMF `service` dimension, unless OTEL_SERVICE_NAME says otherwise. */
export const STREAM_LAMBDA_SERVICE = 'tablegraph-stream-lambda';

/** The reader name the function's heartbeats carry (it holds no lease: its probes vouch for it). */
export const STREAM_LAMBDA_READER = 'stream-lambda';

export type StreamLambdaHandler = (event: DynamoDBStreamEvent, context?: Context) => Promise<DynamoDBBatchResponse>;

export interface StreamHandlerOptions {
  doc: DynamoDBDocumentClient;
  tableName: string;
  /** Where change events go; without it they are only logged (debug). */
  publish?: PublishChangeEvent | undefined;
  /** Where each batch's tags and heartbeats go (Redis: the API instances' caches). */
  invalidations?: InvalidationOutput | undefined;
  log?: StreamLog | undefined;
  /** Told what each batch did (the function's metrics). */
  observe?: ((result: ProcessResult, event: DynamoDBStreamEvent) => void) | undefined;
  /** Purges the CDN by the public tags of each batch (CDN_PURGE_URL). */
  purger?: CdnPurger | undefined;
  /** Awaited before each invocation returns, whatever happened (EMF lines, the telemetry flush). */
  end?: ((context?: Context) => Promise<void>) | undefined;
}

/** Builds a handler (tests pass their own clients; the exported `handler` reads the environment). */
export function createStreamHandler({
  doc,
  tableName,
  publish,
  invalidations,
  log,
  observe,
  end,
  purger,
}: StreamHandlerOptions): StreamLambdaHandler {
  const outputs = new StreamOutputs({
    publish: publish ?? ((event) => log?.debug(describeEvent(event), 'change event')),
    invalidations,
    purge: purger,
  });
  const handle: StreamLambdaHandler = async (event) => {
    outputs.changed(event.Records);
    const result = await processRecords(event.Records, { doc, tableName, publish: outputs.publish, log });
    outputs.alive();
    await outputs.settle();
    observe?.(result, event);
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
  if (!end) return handle;
  return async (event, context) => {
    try {
      return await handle(event, context);
    } finally {
      await end(context);
    }
  };
}

/** The stream metrics of the function: the consumer's names (streamMetrics.ts), its DynamoDB calls, the lag. */
function lambdaMetrics(dynamoClient: Parameters<typeof instrumentClient>[0]) {
  const metrics = createMetrics({ process: false });
  instrumentClient(dynamoClient, metrics);
  const stream = registerStreamMetrics(metrics.registry);
  return {
    registry: metrics.registry,
    observe: (result: ProcessResult, event: DynamoDBStreamEvent): void => {
      stream.observe({ ...result, failures: result.failures.length, events: result.events.length });
      // Seconds since the newest record of the batch was written (whole seconds on AWS).
      const newest = Math.max(0, ...event.Records.map((record) => record.dynamodb?.ApproximateCreationDateTime ?? 0));
      if (newest > 0) metrics.streamLag.set(Math.max(0, Date.now() / 1000 - newest));
    },
  };
}

/**
 * The handler as the environment configures it (TABLE_NAME, DYNAMODB_MODE / DYNAMODB_ENDPOINT,
 * REDIS_URL, REDIS_MODE, REDIS_SIGNING_SECRET), and how to close its connections (tests; a
 * Lambda keeps them for the next event).
 */
export async function streamHandlerFromEnv(
  env: NodeJS.ProcessEnv = process.env,
  {
    telemetry,
    writeEmf,
  }: {
    /** Started before (the function's metrics are then exported over OTLP too). */
    telemetry?: Telemetry | undefined;
    /** Where EMF lines go (tests); the log (stdout) by default. */
    writeEmf?: ((line: string) => void) | undefined;
  } = {},
): Promise<{ handler: StreamLambdaHandler; close: () => Promise<void> }> {
  const config = loadStreamLambdaConfig(env);
  const dynamo = createDynamo({ endpoint: config.endpoint, region: config.region });
  const log = pino({ level: config.logLevel });
  const metrics = lambdaMetrics(dynamo.client);
  const redis = await startRedisMessaging(config, { log, subscribe: false, invalidations: 'publish' });
  // Each batch's tags bumped in the shared cache tier before they go out: the instances need not.
  const bumps = await startPublisherBumps({
    redis: redis && redisSettingsOf(config),
    tagTtlMs: config.sharedBumps?.tagTtlMs,
    tableName: config.tableName,
    log,
  });
  // Invalidations it could not publish, in its EMF lines as in a consumer's /metrics.
  if (redis) registerRedisMetrics(metrics.registry, [], redis.invalidations);
  const purger = cdnPurgerFrom(config, log);
  if (purger) registerCdnPurgeMetrics(metrics.registry, purger);
  return {
    handler: createStreamHandler({
      doc: dynamo.doc,
      tableName: config.tableName,
      publish: redis && ((event) => redis.events.publish(event)),
      invalidations:
        redis?.invalidations &&
        redisInvalidations(redis.invalidations, STREAM_LAMBDA_READER, bumps && ((tags) => bumps.bump(tags))),
      log,
      purger,
      observe: metrics.observe,
      end: invocationEnd({
        config,
        service: config.telemetry.serviceName ?? STREAM_LAMBDA_SERVICE,
        registry: metrics.registry,
        telemetry,
        log,
        writeEmf,
      }),
    }),
    close: async () => {
      await redis?.close();
      await bumps?.stop();
      dynamo.client.destroy();
    },
  };
}

const built = coldStart(async () => {
  const env = await resolveSecrets(process.env, secretsManagerReader());
  const telemetry = await startTelemetry(loadStreamLambdaConfig(env).telemetry, STREAM_LAMBDA_SERVICE);
  return (await streamHandlerFromEnv(env, { telemetry })).handler;
});

/** The Lambda entry point: `index.handler` of the bundle (deploy/bundle.ts). */
export const handler: StreamLambdaHandler = async (event, context) => (await built())(event, context);
