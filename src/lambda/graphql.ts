/**
 * The GraphQL API as an AWS Lambda function behind API Gateway (HTTP API, payload v2), built
 * from the same Apollo Server as the HTTP server (src/pipeline/graphqlServer.ts): the same
 * schema, limits, authentication and cost extension. Deploy with DYNAMODB_MODE=aws,
 * TABLE_NAME, CURSOR_SECRET and JWT settings in the function's environment (README "Deploy").
 */
import { handlers, startServerAndCreateLambdaHandler } from '@as-integrations/aws-lambda';
import type { APIGatewayProxyEventV2, APIGatewayProxyStructuredResultV2, Context } from 'aws-lambda';
import { pino } from 'pino';
import type { Logger } from 'pino';
import { loadConfig } from '../config.js';
import type { Config } from '../config.js';
import { currentCost, newRequestCost, runWithCost } from '../db/capacity.js';
import { createDynamo } from '../db/client.js';
import { CursorCodec } from '../db/cursor.js';
import { SchemaGate } from '../db/schemaGate.js';
import { migrationStatus } from '../migrations/runner.js';
import { createGraphQLServer } from '../pipeline/graphqlServer.js';
import { loadPersistedDocuments } from '../pipeline/persistedDocuments.js';

export type GraphQLLambdaHandler = (
  event: APIGatewayProxyEventV2,
  context: Context,
) => Promise<APIGatewayProxyStructuredResultV2>;

/** Builds a handler for `config` (tests pass their own; the exported `handler` reads the environment). */
export function createGraphQLHandler(config: Config): GraphQLLambdaHandler {
  const log = pino({ level: config.logLevel, redact: ['authorization', '*.authorization'] });
  const dynamo = createDynamo({ endpoint: config.endpoint, region: config.region });
  const schema = new SchemaGate();
  const checkSchema = schemaChecker(schema, dynamo.doc, config.tableName, log);
  const { apollo, contextFor } = createGraphQLServer({
    data: { dynamo, tableName: config.tableName, cursors: new CursorCodec(config.cursorSecret), schema },
    log,
    auth: config.auth,
    limits: config.limits,
    introspection: config.introspection,
    persistedOnly: config.persistedOnly,
    costDetails: config.costDetails,
    documents: loadPersistedDocuments(),
  });
  const inner = startServerAndCreateLambdaHandler(
    // The integration is typed against Apollo's CommonJS declarations; it is the same server.
    apollo as unknown as Parameters<typeof startServerAndCreateLambdaHandler>[0],
    handlers.createAPIGatewayProxyEventV2RequestHandler(),
    {
      context: async ({ event }) =>
        contextFor(event.headers.authorization, event.requestContext.requestId, currentCost() ?? newRequestCost()),
    },
  );
  // Every DynamoDB call of the invocation is added to its own cost record (db/capacity.ts).
  return async (event, context) => {
    await checkSchema();
    return runWithCost(newRequestCost(), async () => {
      // The integration's callback parameter is legacy; the promise is the result.
      return (await inner(event, context, () => undefined)) as APIGatewayProxyStructuredResultV2;
    });
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

let built: GraphQLLambdaHandler | undefined;

/** The Lambda entry point: `dist/src/lambda/graphql.handler`. */
export const handler: GraphQLLambdaHandler = (event, context) => {
  built ??= createGraphQLHandler(loadConfig());
  return built(event, context);
};
