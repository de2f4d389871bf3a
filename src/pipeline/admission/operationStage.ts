/**
 * Admission's last stage (admission.ts), `operation`: the operation to run (the one
 * `getOperationAST` of the request), a subscription only over a streaming transport (WebSocket,
 * SSE), no mutation over GET, and the list-aware cost limit (queryCost.ts, which needs the
 * variables).
 */
import { GraphQLError, OperationTypeNode } from 'graphql';
import type { GraphQLSchema, OperationDefinitionNode } from 'graphql';
import type { QueryLimits } from '../../config/index.js';
import { ErrorCode } from '../../errors.js';
import type { DocumentLookup } from '../documents/trustedDocuments.js';
import type { AdmittedOperation, OperationRequest, Transport } from './admission.js';
import type { AdmittedDocument } from './documentStage.js';
import { queryCost } from './queryCost.js';
import { refusal, refuse } from './refusal.js';
import type { Refusal } from './refusal.js';

/** The operation stage, with what it needs of the server: the schema, the cost limit, the trusted documents. */
export function createOperationStage({
  schema,
  limits,
  documents,
}: {
  schema: GraphQLSchema;
  limits: QueryLimits;
  documents: DocumentLookup;
}) {
  return function operation(
    admitted: AdmittedDocument,
    found: OperationDefinitionNode | null,
    request: Pick<OperationRequest, 'operationName' | 'variables' | 'method'>,
    transport: Transport,
  ): AdmittedOperation | Refusal {
    const operationName = request.operationName ?? null;
    if (!found) {
      const message = operationName
        ? `Unknown operation named "${operationName}".`
        : 'Must provide operation name if query contains multiple operations.';
      return refuse(400, refusal(message, 'OPERATION_RESOLUTION_FAILURE'));
    }
    // A GET is a read a browser, a crawler or a prefetching proxy may send on its own: it may run
    // a query, or open a subscription (EventSource only sends GET), never a mutation.
    if (found.operation === OperationTypeNode.MUTATION && request.method?.toUpperCase() === 'GET') {
      return refuse(
        405,
        new GraphQLError('A GET request never runs a mutation: send it with POST', {
          extensions: { code: 'BAD_REQUEST', http: { status: 405, headers: new Map([['allow', 'POST']]) } },
        }),
      );
    }
    if (found.operation === OperationTypeNode.SUBSCRIPTION && transport !== 'ws' && transport !== 'sse') {
      return refuse(
        400,
        refusal(
          'Subscriptions are served over WebSocket (graphql-ws protocol on this URL) or Server-Sent Events (graphql-sse at /graphql/stream)',
          'BAD_REQUEST',
        ),
      );
    }
    const variables = { ...(request.variables ?? {}) };
    let cost: number;
    try {
      cost = queryCost(schema, admitted.document, variables, found.name?.value ?? operationName ?? undefined);
    } catch (error) {
      return refuse(400, costFailure(error, limits.maxCost));
    }
    if (cost > limits.maxCost) {
      return refuse(
        400,
        refusal(
          `The query's estimated cost ${cost} exceeds the limit of ${limits.maxCost}: ask for smaller pages or fewer nested connections`,
          ErrorCode.QUERY_TOO_COMPLEX,
          { cost, maxCost: limits.maxCost },
        ),
      );
    }
    return {
      ok: true,
      document: admitted,
      operation: found,
      operationName: found.name?.value ?? operationName,
      variables,
      cost,
      trusted: documents.has(admitted.hash),
    };
  };
}

/**
 * getComplexity fails on what execution would refuse anyway (variables of the wrong type) and
 * on documents too large to walk: both are the client's doing, so answer 400, not 500.
 */
function costFailure(error: unknown, maxCost: number): GraphQLError {
  const message = error instanceof Error ? error.message : String(error);
  if (/maximum allowed number of nodes/i.test(message)) {
    return refusal(
      `The query is too large to estimate (limit ${maxCost}): ask for fewer fields`,
      ErrorCode.QUERY_TOO_COMPLEX,
      {
        maxCost,
      },
    );
  }
  // Variable coercion messages name only the variable and the expected type.
  return refusal(message, ErrorCode.BAD_USER_INPUT);
}
