/**
 * Compiled execution: graphql-jit turns a document into a function once, and every later
 * execution of it runs that function instead of graphql-js's interpreter. graphql-js stays the
 * oracle (the differential suite, test/support/differentialExecutor.ts): where graphql-jit answers differently, the document's class
 * falls back to graphql-js, and every fall-back is counted by class (`onFallback`, a metric).
 *
 * The classes that fall back, each a difference the differential suite found or graphql-jit's
 * tracker records (docs/decisions/graphql-jit.md):
 * - `variable-default`: a non-null variable with a default; graphql-jit ignores the default;
 * - `serial-mutation`: a mutation with more than one root field; graphql-jit keeps running the
 *   next field after a non-null failure, graphql-js stops;
 * - `conditional-duplicate`: a response key asked for more than once where one of its fields
 *   sits under @skip or @include; graphql-js puts the key where it is first included, graphql-jit
 *   where it first appears (skipped or not), so the key order of `data` differs;
 * - `variables`: variables that fail to coerce; graphql-jit's messages and codes differ, so
 *   graphql-js answers (nothing has executed yet when coercion fails);
 * - `null-bubbling`: a query answer in which a non-null field failed and nulled its parent.
 *   graphql-js stops completing the parent's remaining fields once one fails synchronously;
 *   graphql-jit completes them all and reports their errors too. The query is executed again by
 *   graphql-js on the same loaders (their cache makes the second run read little or nothing),
 *   and its answer is the one sent, and the one the operation's meter counts (meter.ts `restart`). Mutations are never executed twice: theirs is graphql-jit's;
 * - `compile-error`: anything graphql-jit refuses to compile.
 *
 * graphql-jit's errors are rebuilt as graphql-js GraphQLErrors (with `extensions`, the path and
 * the original error), so masking, codes and Apollo's formatting see what graphql-js would give.
 */
import { compileQuery, isCompiledQuery } from 'graphql-jit';
import type { CompiledQuery } from 'graphql-jit';
import { execute, getOperationAST, GraphQLError, Kind, OperationTypeNode, parse } from 'graphql';
import type {
  DirectiveNode,
  DocumentNode,
  ExecutionArgs,
  ExecutionResult,
  FragmentDefinitionNode,
  GraphQLSchema,
  OperationDefinitionNode,
  SelectionNode,
  SelectionSetNode,
} from 'graphql';
import { sha256 } from '../documents/trustedDocuments.js';
import { documentCache, isPromiseLike } from './documentCache.js';
import { BudgetExceededError, meterOf } from './meter.js';

/** Why a document, or one execution of it, ran on graphql-js instead (a metric label: a closed set). */
export type FallbackClass =
  'variable-default' | 'serial-mutation' | 'conditional-duplicate' | 'variables' | 'null-bubbling' | 'compile-error';

export const FALLBACK_CLASSES: readonly FallbackClass[] = [
  'variable-default',
  'serial-mutation',
  'conditional-duplicate',
  'variables',
  'null-bubbling',
  'compile-error',
];

/**
 * What admission decided about the operation an executor runs, handed forward so that no
 * executor looks it up again: the operation itself and the sha256 of its document's text.
 */
export interface OperationFacts {
  operation: OperationDefinitionNode;
  /** The sha256 of the document's text: what an executor's cache of compiled or planned documents is keyed by. */
  hash: string;
  /** The cost estimate admission held to the cost limit. */
  cost: number;
}

/**
 * An executor: runs one operation (or one subscription event) in `args.contextValue`, whose
 * operation meter is already set (meter.ts). `facts` are admission's; an executor called without
 * them (a test's) looks them up itself. Every executor of the pipeline has this shape: graphql-js's
 * `execute`, the compiled one here, and any a test brings (test/support/).
 */
export type Execute = (args: ExecutionArgs, facts?: OperationFacts) => Promise<ExecutionResult> | ExecutionResult;

export interface CompiledExecutorOptions {
  schema: GraphQLSchema;
  /** Compiled documents kept, at most (COMPILED_DOCUMENTS_MAX). */
  maxDocuments: number;
  /** Estimated bytes of the compiled documents kept, at most (COMPILED_DOCUMENTS_MAX_BYTES). */
  maxBytes: number;
  /** Called once per execution that graphql-js ran instead, with its class. */
  onFallback?: (fallback: FallbackClass) => void;
}

/** A document's entry: its compiled function, or the class that sends it to graphql-js. */
type Entry = { compiled: CompiledQuery; mutation: boolean; bytes: number } | { fallback: FallbackClass; bytes: number };

/**
 * What one compiled document takes, estimated from its text: the generated code and the
 * closures graphql-jit keeps grow with the document's selections.
 */
const BYTES_PER_SOURCE_CHARACTER = 24;
const ENTRY_OVERHEAD_BYTES = 4096;

const isConditional = (node: { directives?: readonly DirectiveNode[] | undefined }): boolean =>
  node.directives?.some((directive) => directive.name.value === 'skip' || directive.name.value === 'include') ?? false;

/**
 * True when, in one selection (fragments and inline fragments merged in, whatever their type
 * condition: it errs on the side of graphql-js), a response key occurs more than once and one of
 * its occurrences is conditional (its field, or a fragment around it, has @skip or @include).
 * The sub-selections of a key are checked merged, as the executors merge them.
 */
function hasConditionalDuplicate(
  selectionSets: readonly SelectionSetNode[],
  fragments: ReadonlyMap<string, FragmentDefinitionNode>,
): boolean {
  const keys = new Map<string, { count: number; conditional: boolean; children: SelectionSetNode[] }>();
  const collect = (selections: readonly SelectionNode[], underCondition: boolean, depth: number): void => {
    for (const selection of selections) {
      const condition = underCondition || isConditional(selection);
      if (selection.kind === Kind.FIELD) {
        const key = selection.alias?.value ?? selection.name.value;
        const entry = keys.get(key) ?? { count: 0, conditional: false, children: [] };
        entry.count += 1;
        entry.conditional ||= condition;
        if (selection.selectionSet) entry.children.push(selection.selectionSet);
        keys.set(key, entry);
      } else if (depth < 32) {
        const set =
          selection.kind === Kind.INLINE_FRAGMENT
            ? selection.selectionSet
            : fragments.get(selection.name.value)?.selectionSet;
        if (set) collect(set.selections, condition, depth + 1);
      }
    }
  };
  for (const set of selectionSets) collect(set.selections, false, 0);
  for (const entry of keys.values()) {
    if (entry.count > 1 && entry.conditional) return true;
    if (entry.children.length && hasConditionalDuplicate(entry.children, fragments)) return true;
  }
  return false;
}

/** The class of documents graphql-jit is known to answer differently, before compiling (null: none). */
export function staticFallbackOf(operation: OperationDefinitionNode, document?: DocumentNode): FallbackClass | null {
  for (const definition of operation.variableDefinitions ?? []) {
    if (definition.type.kind === Kind.NON_NULL_TYPE && definition.defaultValue) return 'variable-default';
  }
  if (operation.operation === OperationTypeNode.MUTATION && operation.selectionSet.selections.length > 1) {
    return 'serial-mutation';
  }
  if (
    operation.operation === OperationTypeNode.MUTATION &&
    operation.selectionSet.selections.some((selection) => selection.kind !== Kind.FIELD)
  ) {
    // A root fragment may hold several fields: serial in graphql-js, not in graphql-jit.
    return 'serial-mutation';
  }
  if (document) {
    const fragments = new Map<string, FragmentDefinitionNode>();
    for (const definition of document.definitions) {
      if (definition.kind === Kind.FRAGMENT_DEFINITION) fragments.set(definition.name.value, definition);
    }
    if (hasConditionalDuplicate([operation.selectionSet], fragments)) return 'conditional-duplicate';
  }
  return null;
}

const located = (error: GraphQLError): GraphQLError => {
  // graphql-jit's own errors have no `extensions` when the thrown error had none, and no
  // `nodes`: Apollo's formatting needs the former, graphql-js gives both.
  const rebuilt = new GraphQLError(error.message, {
    path: error.path,
    originalError: error.originalError ?? undefined,
    extensions: error.extensions,
  });
  if (error.locations) (rebuilt as { locations: typeof error.locations }).locations = error.locations;
  return rebuilt;
};

/** graphql-jit's result in graphql-js's shape: errors rebuilt, and no `errors` key without errors. */
function normalized(result: ExecutionResult): ExecutionResult {
  if (!result.errors || result.errors.length === 0) return 'data' in result ? { data: result.data } : result;
  return { ...result, errors: result.errors.map((error) => located(error)) };
}

/**
 * True when an error nulled more than its own field: a parent on its path is null (or all of
 * `data` is), which only a failed non-null field does.
 */
export function hasBubbledNull(result: ExecutionResult): boolean {
  if (!result.errors?.length) return false;
  if (result.data === null) return true;
  for (const error of result.errors) {
    let at: unknown = result.data;
    const path = error.path ?? [];
    for (let i = 0; i < path.length - 1; i += 1) {
      at = (at as Record<string | number, unknown>)[path[i] as string | number];
      if (at === null) return true;
      if (typeof at !== 'object' || at === undefined) break;
    }
  }
  return false;
}

/**
 * True when the operation's meter stopped the run and no other error did: graphql-js would have
 * counted the same fields up to the same budget, so its answer is BUDGET_EXCEEDED too, and running
 * it again would only build that much once more. With another error in the answer, graphql-js may
 * have stopped completing a parent before the budget was reached: then it runs again.
 */
const stoppedByMeterAlone = (args: ExecutionArgs, answer: ExecutionResult): boolean =>
  meterOf(args.contextValue)?.exceeded !== undefined &&
  (answer.errors ?? []).every((error) => (error.originalError ?? error) instanceof BudgetExceededError);

export type CompiledExecutor = ReturnType<typeof createCompiledExecutor>;

export function createCompiledExecutor({ schema, maxDocuments, maxBytes, onFallback }: CompiledExecutorOptions) {
  const { entries, sourceOf } = documentCache<Entry>({ maxDocuments, maxBytes });

  function entryFor(
    document: DocumentNode,
    operationName: string | null | undefined,
    facts?: OperationFacts,
  ): Entry | undefined {
    const operation = facts?.operation ?? getOperationAST(document, operationName);
    // No such operation: graphql-js answers it (the same error as ever); nothing to keep.
    if (!operation) return undefined;
    // By the operation's own name: a request may name it or leave the only one unnamed.
    const name = operation.name?.value;
    // By the sha256 of the document's text: admission's, or worked out here for a caller without it.
    const key = `${name ?? ''}\n${facts?.hash ?? sha256(sourceOf(document))}`;
    const cached = entries.get(key);
    if (cached) return cached;
    const source = sourceOf(document);
    const bytes = ENTRY_OVERHEAD_BYTES + source.length * BYTES_PER_SOURCE_CHARACTER;
    const fallback = staticFallbackOf(operation, document);
    let entry: Entry;
    if (fallback) entry = { fallback, bytes };
    else {
      const compiled = compileQuery(schema, document, name, {
        // graphql-js captures no stack for the errors it builds either.
        disablingCapturingStackErrors: true,
      });
      entry = isCompiledQuery(compiled)
        ? { compiled, mutation: operation.operation === OperationTypeNode.MUTATION, bytes }
        : { fallback: 'compile-error', bytes };
    }
    entries.set(key, entry);
    return entry;
  }

  // Answers graphql-js gave after the compiled run (their cost includes both runs).
  const reran = new WeakSet<object>();
  const fallBack = (args: ExecutionArgs, fallback: FallbackClass) => {
    onFallback?.(fallback);
    return execute(args);
  };
  const rerun = async (args: ExecutionArgs, facts?: OperationFacts): Promise<ExecutionResult> => {
    // The operation's meter counts the answer that is sent, once: graphql-js's, not both.
    try {
      meterOf(args.contextValue)?.restart(args, facts?.operation);
    } catch (error) {
      if (error instanceof BudgetExceededError) return { errors: [error] };
      throw error;
    }
    const result = await fallBack(args, 'null-bubbling');
    reran.add(result);
    return result;
  };

  /** Executes `args` compiled (graphql-js for the classes that fall back). */
  function run(args: ExecutionArgs, facts?: OperationFacts): Promise<ExecutionResult> | ExecutionResult {
    const entry = entryFor(args.document, args.operationName, facts);
    if (!entry) return execute(args);
    if ('fallback' in entry) return fallBack(args, entry.fallback);
    const result = entry.compiled.query(args.rootValue, args.contextValue, args.variableValues ?? {});
    const finish = (answer: ExecutionResult): Promise<ExecutionResult> | ExecutionResult => {
      // Refused variables: no resolver ran, so graphql-js can answer in its own words.
      if (!('data' in answer) && answer.errors?.length) return fallBack(args, 'variables');
      if (entry.mutation || !hasBubbledNull(answer) || stoppedByMeterAlone(args, answer)) return normalized(answer);
      return rerun(args, facts);
    };
    return isPromiseLike<ExecutionResult>(result) ? Promise.resolve(result).then(finish) : finish(result);
  }

  return {
    execute: run,
    /**
     * Compiles the operations of `source` now (the trusted documents, at start-up): every one,
     * or those `wanted` accepts.
     */
    precompile(source: string, wanted: (operation: OperationDefinitionNode) => boolean = () => true): void {
      const document = parse(source);
      const operations = document.definitions.filter(
        (definition): definition is OperationDefinitionNode =>
          definition.kind === Kind.OPERATION_DEFINITION && wanted(definition),
      );
      // Keyed as requests key them: by the document's sha256 (admission's) and the operation's name.
      const hash = sha256(source);
      for (const operation of operations) entryFor(document, operation.name?.value, { operation, hash, cost: 0 });
    },
    /** True for an answer graphql-js gave after a compiled run of the same operation (`null-bubbling`). */
    reran: (result: object): boolean => reran.has(result),
    /** Documents kept, and their estimated bytes (tests, metrics). */
    get size(): { documents: number; bytes: number } {
      return { documents: entries.size, bytes: entries.calculatedSize };
    },
  };
}
