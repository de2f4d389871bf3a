/**
 * The GraphQL API as an AWS Lambda function behind API Gateway (HTTP API, payload v2): the same
 * runtime as the HTTP server (src/runtime.ts) and the same GraphQL-over-HTTP handler
 * (src/pipeline/graphqlHttp.ts), so the same schema, limits, authentication, CSRF rule,
 * persisted-only check and cost extension; src/transports/lambda/apiGateway.ts translates.
 * The CDK stack (deploy/) deploys it with DYNAMODB_MODE=aws, TABLE_NAME, the JWT settings, and
 * CURSOR_SECRET_ARN / JWT_SECRET_ARN, whose values are read from Secrets Manager at cold start
 * (./secrets.ts).
 */
import type { APIGatewayProxyEventV2, APIGatewayProxyStructuredResultV2, Context } from 'aws-lambda';
import { pino } from 'pino';
import type { Logger } from 'pino';
import { loadConfig } from '../config.js';
import type { Config } from '../config.js';
import { createDynamo } from '../db/client.js';
import type { Dynamo } from '../db/client.js';
import { CursorCodec } from '../db/cursor.js';
import { SchemaGate } from '../db/schemaGate.js';
import { migrationStatus } from '../migrations/status.js';
import { handleGraphQLHttp } from '../pipeline/graphqlHttp.js';
import { createRuntime } from '../runtime.js';
import type { Runtime } from '../runtime.js';
import { graphqlRequestOf, resultOf } from '../transports/lambda/apiGateway.js';
import { coldStart, resolveSecrets, secretsManagerReader } from './secrets.js';

export type GraphQLLambdaHandler = (
  event: APIGatewayProxyEventV2,
  context: Context,
) => Promise<APIGatewayProxyStructuredResultV2>;

/**
 * Builds a handler for `config` (tests pass their own, and may pass the DynamoDB client; the
 * exported `handler` reads the environment). The runtime starts at once; a failed start is
 * tried again by the next request.
 */
export function createGraphQLHandler(config: Config, { dynamo }: { dynamo?: Dynamo } = {}): GraphQLLambdaHandler {
  const log = pino({ level: config.logLevel, redact: ['authorization', '*.authorization'] });
  dynamo ??= createDynamo({ endpoint: config.endpoint, region: config.region });
  const schema = new SchemaGate();
  const checkSchema = schemaChecker(schema, dynamo.doc, config.tableName, log);
  const data = {
    dynamo,
    tableName: config.tableName,
    cursors: new CursorCodec(config.cursorSecret),
    schema,
    itemCollections: config.itemCollections,
  };
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
      executor: config.executor,
      documentsRefreshMs: config.documentsRefreshMs,
      // No timer runs while a function is frozen: the registry is looked at on a request's time.
      documentsPolling: 'on-request',
      // Lambda's metrics are its own (CloudWatch); no Prometheus registry to scrape here.
      metricsRegistry: false,
    }).catch((error: unknown) => {
      starting = undefined;
      throw error;
    }));
  runtime().catch((error: unknown) => log.error({ err: error }, 'GraphQL runtime failed to start'));
  return async (event) => {
    const ready = await runtime();
    await ready.documents.freshen();
    await checkSchema();
    return resultOf(await handleGraphQLHttp(graphqlRequestOf(event), ready));
  };
}

/** How often a warm function with pending migrations looks again. */
const SCHEMA_RECHECK_MS = 60_000;

/**
 * The function never migrates (an operator runs `npm run migrate`): it reads the migration
 * records before its first request, refuses the fields that need pending ones
 * (MIGRATION_PENDING), and looks again at most once a minute until none is pending.
 */
function schemaChecker(
  schema: SchemaGate,
  doc: Parameters<typeof migrationStatus>[0],
  tableName: string,
  log: Pick<Logger, 'warn'>,
): () => Promise<void> {
  let checkedAt: number | undefined;
  let warned = false;
  return async () => {
    const now = Date.now();
    if (checkedAt !== undefined && (schema.pendingMigrations.length === 0 || now - checkedAt < SCHEMA_RECHECK_MS))
      return;
    checkedAt = now;
    const { migrations } = await migrationStatus(doc, tableName);
    schema.update(migrations.filter((m) => m.state !== 'applied').map((m) => m.id));
    if (schema.pendingMigrations.length > 0 && !warned) {
      warned = true;
      log.warn(
        { pending: schema.pendingMigrations },
        `table ${tableName} needs migration ${schema.pendingMigrations.join(', ')}: run npm run migrate`,
      );
    }
  };
}

const built = coldStart(async () =>
  createGraphQLHandler(loadConfig(await resolveSecrets(process.env, secretsManagerReader()))),
);

// With provisioned concurrency, Lambda initialises environments before any request: read the
// secrets then, not on a client's time. A failure here is retried by the first invocation.
if (process.env.AWS_LAMBDA_INITIALIZATION_TYPE === 'provisioned-concurrency') built().catch(() => undefined);

/** The Lambda entry point: `index.handler` of the bundle (deploy/bundle.ts). */
export const handler: GraphQLLambdaHandler = async (event, context) => (await built())(event, context);
