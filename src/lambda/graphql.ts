/**
 * The GraphQL API as an AWS Lambda function behind API Gateway (HTTP API, payload v2): the same
 * runtime as the HTTP server (src/runtime.ts) and the same GraphQL-over-HTTP handler
 * (src/pipeline/http/graphqlHttp.ts), so the same schema, limits, authentication, CSRF rule,
 * persisted-only check and cost extension; src/transports/lambda/apiGateway.ts translates.
 * The CDK stack (deploy/) deploys it with DYNAMODB_MODE=aws, TABLE_NAME, the JWT settings, and
 * CURSOR_SECRET_ARN / JWT_SECRET_ARN, whose values are read from Secrets Manager at cold start
 * (./secrets.ts). Telemetry starts at cold start from the OTEL_* settings; each invocation ends
 * with its EMF lines and a bounded flush (./invocation.ts).
 */
import type { APIGatewayProxyEventV2, APIGatewayProxyStructuredResultV2, Context } from 'aws-lambda';
import { pino } from 'pino';
import { loadGraphQLLambdaConfig } from '../config/index.js';
import type { GraphQLLambdaConfig } from '../config/index.js';
import { createDynamo } from '../db/client.js';
import type { Dynamo } from '../db/client.js';
import { CursorCodec } from '../db/cursor.js';
import { SchemaGate } from '../db/schemaGate.js';
import { watchMigrations } from '../migrations/watch.js';
import { handleGraphQLHttp } from '../pipeline/http/graphqlHttp.js';
import { createMetrics } from '../pipeline/report/metrics.js';
import { startHttpTrace } from '../telemetry/http.js';
import { ATTR } from '../telemetry/semconv.js';
import { startTelemetry } from '../telemetry/start.js';
import type { Telemetry } from '../telemetry/start.js';
import { createRuntime } from '../runtime.js';
import type { Runtime } from '../runtime.js';
import { graphqlRequestOf, resultOf } from '../transports/lambda/apiGateway.js';
import { invocationEnd } from './invocation.js';
import { coldStart, resolveSecrets, secretsManagerReader } from './secrets.js';

/** The function's `service.name` and EMF `service` dimension, unless OTEL_SERVICE_NAME says otherwise. */
export const GRAPHQL_LAMBDA_SERVICE = 'tablegraph-graphql-lambda';

export interface GraphQLHandlerOptions {
  dynamo?: Dynamo | undefined;
  /** Started before the handler is built (its metrics are then exported over OTLP too). */
  telemetry?: Telemetry | undefined;
  /** Where EMF lines go (tests); the log (stdout) by default. */
  writeEmf?: ((line: string) => void) | undefined;
}

export type GraphQLLambdaHandler = (
  event: APIGatewayProxyEventV2,
  context: Context,
) => Promise<APIGatewayProxyStructuredResultV2>;

/**
 * Builds a handler for `config` (tests pass their own, and may pass the DynamoDB client; the
 * exported `handler` reads the environment). The runtime starts at once; a failed start is
 * tried again by the next request.
 */
export function createGraphQLHandler(
  config: GraphQLLambdaConfig,
  { dynamo, telemetry, writeEmf }: GraphQLHandlerOptions = {},
): GraphQLLambdaHandler {
  const log = pino({ level: config.logLevel, redact: ['authorization', '*.authorization'] });
  dynamo ??= createDynamo({ endpoint: config.endpoint, region: config.region });
  const schema = new SchemaGate();
  // The function never migrates: it watches on a request's time (no timer runs while it is frozen).
  const migrations = watchMigrations({
    doc: dynamo.doc,
    tableName: config.tableName,
    gate: schema,
    log,
    polling: 'on-request',
  });
  const data = {
    dynamo,
    tableName: config.tableName,
    cursors: new CursorCodec(config.cursorSecret),
    schema,
  };
  const metrics = createMetrics({ process: false });
  let starting: Promise<Runtime> | undefined;
  const runtime = (): Promise<Runtime> =>
    (starting ??= createRuntime({
      transport: 'lambda',
      data,
      log,
      auth: config.auth,
      limits: config.limits,
      introspection: config.introspection,
      persistedOnly: config.persistedOnly,
      costDetails: config.costDetails,
      cacheMaxAgeSeconds: config.cacheMaxAgeSeconds,
      // No response cache: a frozen function hears no invalidation, so it would never serve
      // (docs/caching.md). The CDN in front, purged from the stream, is its shared cache.
      responseCache: undefined,
      executor: config.executor,
      documentsRefreshMs: config.documentsRefreshMs,
      // No timer runs while a function is frozen: the registry is looked at on a request's time.
      documentsPolling: 'on-request',
      // Each cold start reads the registry's index, not every document: a text is read when a
      // request names its document, and kept for the next ones.
      documentsLoad: 'index',
      // Nothing scrapes a function: its metrics go to the log as EMF lines (./invocation.ts).
      useMetrics: metrics,
    }).catch((error: unknown) => {
      starting = undefined;
      throw error;
    }));
  runtime().catch((error: unknown) => log.error({ err: error }, 'GraphQL runtime failed to start'));
  const end = invocationEnd({
    config,
    service: config.telemetry.serviceName ?? GRAPHQL_LAMBDA_SERVICE,
    registry: metrics.registry,
    telemetry,
    log,
    writeEmf,
  });
  return async (event, context) => {
    const trace = startHttpTrace(event.requestContext.http.method, '/graphql', event.headers ?? {}, {
      [ATTR.URL_PATH]: event.rawPath.slice(0, 256),
      [ATTR.URL_SCHEME]: 'https',
    });
    let status = 500;
    try {
      const ready = await runtime();
      await ready.documents.freshen();
      await migrations.check();
      const result = resultOf(await handleGraphQLHttp({ ...graphqlRequestOf(event), trace }, ready));
      status = result.statusCode ?? 200;
      return result;
    } finally {
      trace?.end(status);
      await end(context);
    }
  };
}

const built = coldStart(async () => {
  const config = loadGraphQLLambdaConfig(await resolveSecrets(process.env, secretsManagerReader()));
  return createGraphQLHandler(config, { telemetry: await startTelemetry(config.telemetry, GRAPHQL_LAMBDA_SERVICE) });
});

// With provisioned concurrency, Lambda initialises environments before any request: read the
// secrets then, not on a client's time. A failure here is retried by the first invocation.
if (process.env.AWS_LAMBDA_INITIALIZATION_TYPE === 'provisioned-concurrency') built().catch(() => undefined);

/** The Lambda entry point: `index.handler` of the bundle (deploy/bundle.ts). */
export const handler: GraphQLLambdaHandler = async (event, context) => (await built())(event, context);
