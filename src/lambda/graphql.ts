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
import { operationRequestOf, withPersistedQuery } from '../pipeline/operationRequest.js';
import { loadPersistedDocuments } from '../pipeline/persistedDocuments.js';
import { startRegistryPoller, TrustedDocuments } from '../pipeline/trustedDocuments.js';
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

const isRecord = (value: unknown): value is Record<string, unknown> =>
  typeof value === 'object' && value !== null && !Array.isArray(value);

/** The event's GraphQL request fields: the JSON body of a POST, the query string of a GET. */
function paramsOf(event: APIGatewayProxyEventV2): Record<string, unknown> | undefined {
  if (event.requestContext.http.method !== 'POST') return Object.fromEntries(new URLSearchParams(event.rawQueryString));
  const body = event.body ?? '';
  try {
    const parsed: unknown = JSON.parse(event.isBase64Encoded ? Buffer.from(body, 'base64').toString('utf8') : body);
    return isRecord(parsed) ? parsed : {};
  } catch {
    return undefined; // Apollo answers malformed JSON itself (400)
  }
}

/** A `documentId` or `doc_id` as the persisted-query extension Apollo resolves (as on the HTTP server). */
function withDocumentReference(event: APIGatewayProxyEventV2, pipeline: Pipeline): APIGatewayProxyEventV2 {
  const params = paramsOf(event);
  if (!params) return event;
  const rewritten = withPersistedQuery(params, (id) => pipeline.documents.sha256Of(id));
  if (rewritten === params) return event;
  if (event.requestContext.http.method === 'POST') {
    return { ...event, body: JSON.stringify(rewritten), isBase64Encoded: false };
  }
  const search = new URLSearchParams();
  for (const [name, value] of Object.entries(rewritten)) {
    if (value !== undefined) search.set(name, typeof value === 'string' ? value : JSON.stringify(value));
  }
  const rawQueryString = search.toString();
  return { ...event, rawQueryString, queryStringParameters: Object.fromEntries(search) };
}

/**
 * What the HTTP server does before Apollo: the body limit (413), the CSRF rule and, in
 * PERSISTED_ONLY mode, the admission's trusted-documents check. Null lets the event through.
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
  const params = paramsOf(event);
  if (!params) return null;
  const request = operationRequestOf(params);
  const header = (name: string) => event.headers[name];
  const refused =
    pipeline.csrf(event.requestContext.http.method, header, request) ?? pipeline.admission.persistedOnlyCheck(request);
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
  const documents = new TrustedDocuments(loadPersistedDocuments());
  const registry = startRegistryPoller({
    doc: dynamo.doc,
    tableName: config.tableName,
    documents,
    intervalMs: config.documentsRefreshMs,
    log,
  });
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
    // No timer runs while a function is frozen: the registry is looked at on a request's time.
    await registry.freshen();
    const refused = refusalOf(event, pipeline);
    if (refused) return refused;
    await checkSchema();
    // The integration's callback parameter is legacy; the promise is the result.
    return (await inner(
      withDocumentReference(event, pipeline),
      context,
      () => undefined,
    )) as APIGatewayProxyStructuredResultV2;
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
