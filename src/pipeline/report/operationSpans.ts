/**
 * The GraphQL side of tracing (src/telemetry/): the operation span is named by the
 * operation's type (`query`, `mutation`, `subscription`) with `graphql.operation.type`,
 * `graphql.operation.name` and the document's sha256; it ends with the request's totals when
 * the reporter reports the operation. The name is taken from the document only when the
 * document is a persisted one (the manifest's): any other request says `other`, so a client
 * cannot mint span names (the same rule as the metric labels, metricLabels.ts).
 *
 * Resolver spans (TRACE_RESOLVERS) wrap the schema's own resolvers, not the default ones.
 */
import { defaultFieldResolver, isObjectType } from 'graphql';
import type { GraphQLFieldResolver, GraphQLFormattedError, GraphQLSchema, OperationDefinitionNode } from 'graphql';
import { SpanKind } from '@opentelemetry/api';
import type { GraphQLContext } from '../../graphql/context.js';
import { traceOf } from '../../telemetry/requestTrace.js';
import { ATTR, TG } from '../../telemetry/semconv.js';
import { tracing } from '../../telemetry/tracing.js';
import { MAX_LABEL_LENGTH, OTHER_OPERATION } from './metricLabels.js';

/** What admission decided about the operation a span is named after. */
export interface SpanFacts {
  operation: OperationDefinitionNode;
  document: { hash: string };
  trusted: boolean;
}

/** Names the operation span of the execution whose cost record is `cost` (nothing while it is not traced). */
export function nameOperationSpan(cost: object, { operation, document, trusted }: SpanFacts): void {
  const trace = traceOf(cost);
  if (!trace) return;
  const type = operation.operation;
  const name = trusted && operation.name ? operation.name.value.slice(0, MAX_LABEL_LENGTH) : OTHER_OPERATION;
  trace.span.updateName(type);
  trace.span.setAttributes({
    [ATTR.GRAPHQL_OPERATION_TYPE]: type,
    [ATTR.GRAPHQL_OPERATION_NAME]: name,
    [TG.DOCUMENT_TRUSTED]: trusted,
    [TG.DOCUMENT_SHA256]: document.hash,
  });
}

/** Ends the operation span of the execution that cost `cost`, with the errors the client was told. */
export function finishOperationSpan(cost: object, errors: readonly GraphQLFormattedError[]): void {
  const trace = traceOf(cost);
  if (!trace) return;
  const codes = [
    ...new Set(
      errors.map((error) => {
        const code = error.extensions?.code;
        return typeof code === 'string' ? code : 'INTERNAL_SERVER_ERROR';
      }),
    ),
  ];
  trace.finish(
    { 'tablegraph.graphql.errors': errors.length, ...(codes.length > 0 ? { [ATTR.ERROR_TYPE]: codes[0] } : {}) },
    codes.length > 0 ? codes.join(',') : undefined,
  );
}

/** TRACE_RESOLVERS: wraps each resolver of `schema` in a span of the execution's trace. */
export function traceResolvers(schema: GraphQLSchema): void {
  if (!tracing()?.resolverSpans) return;
  for (const type of Object.values(schema.getTypeMap())) {
    if (!isObjectType(type) || type.name.startsWith('__')) continue;
    for (const field of Object.values(type.getFields())) {
      const resolve = field.resolve;
      if (!resolve || resolve === defaultFieldResolver) continue;
      const name = `${type.name}.${field.name}`;
      const traced: GraphQLFieldResolver<unknown, GraphQLContext> = (source, args, context, info) => {
        const trace = context?.cost ? traceOf(context.cost) : undefined;
        if (!trace) return resolve(source, args, context, info);
        const span = trace.child(name, SpanKind.INTERNAL, {
          'graphql.field.name': field.name,
          'graphql.field.type': String(info.returnType),
          'graphql.field.path': info.path.key.toString(),
        });
        try {
          const result: unknown = resolve(source, args, context, info);
          if (result instanceof Promise) return result.finally(() => trace.hold(span));
          trace.hold(span);
          return result;
        } catch (error) {
          trace.hold(span);
          throw error;
        }
      };
      field.resolve = traced as typeof resolve;
    }
  }
}
