/**
 * The GraphQL API as an AWS Lambda function behind API Gateway (HTTP API, payload v2), built
 * over the same pipeline as the HTTP server (src/pipeline/pipeline.ts): the same schema,
 * limits, authentication and cost extension. The CDK stack (deploy/) deploys it with
 * DYNAMODB_MODE=aws, TABLE_NAME, the JWT settings, and CURSOR_SECRET_ARN / JWT_SECRET_ARN, whose
 * values are read from Secrets Manager at cold start (./secrets.ts).
 */
import { handlers, startServerAndCreateLambdaHandler } from '@as-integrations/aws-lambda';
import type { APIGatewayProxyEventV2, APIGatewayProxyStructuredResultV2, Context } from 'aws-lambda';
import { pino } from 'pino';
import type { Logger } from 'pino';
import { loadConfig } from '../config.js';
import type { Config } from '../config.js';
import { createDynamo } from '../db/client.js';
import type { Dynamo } from '../db/client.js';
import { CursorCodec } from '../db/cursor.js';
import { SchemaGate } from '../db/schemaGate.js';
import { ErrorCode } from '../errors.js';
import { migrationStatus } from '../migrations/status.js';
import { createApollo } from '../pipeline/apollo.js';
import { operationRequestOf } from '../pipeline/operationRequest.js';
import { loadPersistedDocuments } from '../pipeline/persistedDocuments.js';
import { createPipeline } from '../pipeline/pipeline.js';
import type { Pipeline } from '../pipeline/pipeline.js';
import { coldStart, resolveSecrets, secretsManagerReader } from './secrets.js';

export type GraphQLLambdaHandler = (
  event: APIGatewayProxyEventV2,
  context: Context,
) => Promise<APIGatewayProxyStructuredResultV2>;

const answer = (statusCode: number, body: unknown): APIGatewayProxyStructuredResultV2 => ({
  statusCode,
  headers: { 'content-type': 'application/json; charset=utf-8' },
  body: JSON.stringify(body),
});

/**
 * What Express does before Apollo on the HTTP server: the body limit (413) and, in
 * PERSISTED_ONLY mode, the admission's persisted-documents check. Null lets the event through.
 */
function refusalOf(event: APIGatewayProxyEventV2, pipeline: Pipeline): APIGatewayProxyStructuredResultV2 | null {
  const body = event.body ?? '';
  const bytes = event.isBase64Encoded ? Buffer.from(body, 'base64').length : Buffer.byteLength(body);
  if (bytes > pipeline.limits.maxBodyBytes) {
    const message = `The request body exceeds the limit of ${pipeline.limits.maxBodyBytes} bytes`;
    return answer(413, {
      errors: [{ message, extensions: { code: ErrorCode.PAYLOAD_TOO_LARGE } }],
    });
  }
  let params: unknown = event.queryStringParameters;
  if (event.requestContext.http.method === 'POST') {
    try {
      params = JSON.parse(event.isBase64Encoded ? Buffer.from(body, 'base64').toString('utf8') : body);
    } catch {
      return null; // Apollo answers malformed JSON itself (400)
    }
  }
  const refused = pipeline.admission.persistedOnlyCheck(operationRequestOf(params));
  if (!refused) return null;
  return answer(refused.status, {
    errors: pipeline.reporter.finishErrors(refused.errors, { transport: 'lambda', operationName: null }),
  });
}

/**
 * Builds a handler for `config` (tests pass their own, and may pass the DynamoDB client; the
 * exported `handler` reads the environment).
 */
export function createGraphQLHandler(config: Config, { dynamo }: { dynamo?: Dynamo } = {}): GraphQLLambdaHandler {
  const log = pino({ level: config.logLevel, redact: ['authorization', '*.authorization'] });
  dynamo ??= createDynamo({ endpoint: config.endpoint, region: config.region });
  const schema = new SchemaGate();
  const checkSchema = schemaChecker(schema, dynamo.doc, config.tableName, log);
  const documents = loadPersistedDocuments();
  const pipeline = createPipeline({
    data: {
      dynamo,
      tableName: config.tableName,
      cursors: new CursorCodec(config.cursorSecret),
      schema,
      itemCollections: config.itemCollections,
    },
    log,
    auth: config.auth,
    limits: config.limits,
    introspection: config.introspection,
    persistedOnly: config.persistedOnly,
    costDetails: config.costDetails,
    documents,
  });
  const apollo = createApollo(pipeline, {
    transport: 'lambda',
    persistedOnly: config.persistedOnly,
    documents,
    cacheMaxAgeSeconds: config.cacheMaxAgeSeconds,
  });
  const inner = startServerAndCreateLambdaHandler(
    // The integration is typed against Apollo's CommonJS declarations; it is the same server.
    apollo as unknown as Parameters<typeof startServerAndCreateLambdaHandler>[0],
    handlers.createAPIGatewayProxyEventV2RequestHandler(),
    {
      context: async ({ event }) =>
        pipeline.execution.context(
          await pipeline.execution.viewer(event.headers.authorization),
          event.requestContext.requestId,
        ),
    },
  );
  return async (event, context) => {
    const refused = refusalOf(event, pipeline);
    if (refused) return refused;
    await checkSchema();
    // The integration's callback parameter is legacy; the promise is the result.
    return (await inner(event, context, () => undefined)) as APIGatewayProxyStructuredResultV2;
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
