/**
 * graphql-jit as an executor the benchmark brings (the pipeline's `execute` option), for
 * `npm run bench:executors`'s comparison only: the server does not ship it (the planned executor
 * allocates less and creates fewer promises on every benchmark query, at equal or lower CPU;
 * docs/decisions/graphql-jit.md). It compiles each document's operation once, mutations too, and
 * runs the compiled function; it has none of the server's former fall-backs to graphql-js, so its
 * answers are checked only by the benchmark's own comparison, on operations that do not fail.
 */
import { compileQuery, isCompiledQuery } from 'graphql-jit';
import type { CompiledQuery } from 'graphql-jit';
import { execute, getOperationAST } from 'graphql';
import type { Execute } from '../src/pipeline/execution/execution.js';

/** An executor that compiles each (document, operation) once; graphql-js answers what graphql-jit cannot compile. */
export function jitExecutor(): Execute {
  const compiled = new Map<string, CompiledQuery | null>();
  return (args, facts) => {
    const operation = facts?.operation ?? getOperationAST(args.document, args.operationName);
    const key = `${operation?.name?.value ?? ''}\n${facts?.hash ?? args.document.loc?.source.body ?? ''}`;
    let query = compiled.get(key);
    if (query === undefined) {
      const built = compileQuery(args.schema, args.document, operation?.name?.value, {
        disablingCapturingStackErrors: true,
      });
      query = isCompiledQuery(built) ? built : null;
      compiled.set(key, query);
    }
    if (!query) return execute(args);
    return query.query(args.rootValue, args.contextValue, args.variableValues ?? {});
  };
}
