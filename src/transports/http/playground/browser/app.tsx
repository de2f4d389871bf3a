/**
 * The playground page: GraphiQL 5 (Monaco editors) with its Explorer plugin (build a query by
 * ticking fields and filling in arguments), bundled by esbuild and served by this server, so it
 * needs no CDN and works with the network off. The server passes the endpoint and the example
 * tabs in a JSON script tag (see page.ts).
 */
import { createGraphiQLFetcher } from '@graphiql/toolkit';
import type { Fetcher, FetcherParams } from '@graphiql/toolkit';
import { getOperationAST, GraphQLError, Kind, OperationTypeNode, parse } from 'graphql';
import type { ExecutionResult } from 'graphql';
import { createClient } from 'graphql-ws';
import { explorerPlugin } from '@graphiql/plugin-explorer';
import { GraphiQL, HISTORY_PLUGIN } from 'graphiql';
import { createRoot } from 'react-dom/client';
import 'graphiql/style.css';
import '@graphiql/plugin-explorer/style.css';

interface PlaygroundConfig {
  endpoint: string;
  tabs: { query: string; variables?: string; headers?: string }[];
  defaultHeaders: string;
  /** Variable values equal to this become a fresh UUID on each run (PlaceOrder's idempotencyKey). */
  freshUuid: string;
}

// Monaco runs its language services in web workers; esbuild emits them beside this bundle.
(globalThis as { MonacoEnvironment?: unknown }).MonacoEnvironment = {
  getWorker(_workerId: string, label: string) {
    const name = label === 'json' ? 'json' : label === 'graphql' ? 'graphql' : 'editor';
    return new Worker(new URL(`./${name}.worker.js`, import.meta.url), { type: 'module' });
  },
};

const config = JSON.parse(document.getElementById('playground-config')?.textContent ?? '{}') as PlaygroundConfig;
const httpUrl = new URL(config.endpoint, window.location.href);
const httpFetcher = createGraphiQLFetcher({ url: httpUrl.toString() });
const wsUrl = `${httpUrl.protocol === 'https:' ? 'wss:' : 'ws:'}//${httpUrl.host}${httpUrl.pathname}`;

// Subscriptions go over graphql-ws with the headers editor's Authorization as connectionParams,
// so the token a user pastes once works for queries and subscriptions alike.
/**
 * Right after a tab switch GraphiQL can still send the previous tab's operation name with the
 * new tab's document ("Unknown operation named ..."); a document with a single operation
 * needs no name, so a name it does not contain is dropped.
 */
function withValidOperationName(params: FetcherParams): FetcherParams {
  if (!params.operationName) return params;
  let names: (string | undefined)[];
  try {
    names = parse(params.query)
      .definitions.filter((definition) => definition.kind === Kind.OPERATION_DEFINITION)
      .map((definition) => definition.name?.value);
  } catch {
    return params; // the server reports the syntax error
  }
  return names.length === 1 && !names.includes(params.operationName) ? { ...params, operationName: null } : params;
}

/** Replaces every variable value equal to config.freshUuid with a new random UUID. */
function withFreshUuids(value: unknown): unknown {
  if (value === config.freshUuid) return crypto.randomUUID();
  if (Array.isArray(value)) return value.map(withFreshUuids);
  if (value && typeof value === 'object') {
    return Object.fromEntries(Object.entries(value).map(([key, item]) => [key, withFreshUuids(item)]));
  }
  return value;
}

/**
 * The operation type of the document being sent, read from its text: GraphiQL's parsed
 * document (opts.documentAST) can still be the previous tab's right after a tab switch.
 */
function operationTypeOf(params: FetcherParams): OperationTypeNode | undefined {
  try {
    return getOperationAST(parse(params.query), params.operationName)?.operation;
  } catch {
    return undefined; // the server reports the syntax error
  }
}

/** A readable result for a WebSocket that failed or was closed on us (a CloseEvent, an Event, an Error). */
function connectionFailure(error: unknown): ExecutionResult {
  const { code, reason } = (error ?? {}) as { code?: unknown; reason?: unknown };
  const message =
    typeof code === 'number'
      ? `The server closed the subscription's WebSocket (${code}${typeof reason === 'string' && reason ? `: ${reason}` : ''})`
      : error instanceof Error
        ? error.message
        : `The subscription's WebSocket to ${wsUrl} could not be opened`;
  return { errors: [new GraphQLError(message)] };
}

const fetcher: Fetcher = (rawParams, opts) => {
  const named = withValidOperationName(rawParams);
  const params: FetcherParams = { ...named, variables: withFreshUuids(named.variables) as Record<string, unknown> };
  if (operationTypeOf(params) !== OperationTypeNode.SUBSCRIPTION) return httpFetcher(params, opts);
  const headers = (opts?.headers ?? {}) as Record<string, unknown>;
  const client = createClient({
    url: wsUrl,
    lazy: true,
    connectionParams: { authorization: headers.Authorization ?? headers.authorization },
    // A refusal shows at once: no retries behind a spinner.
    retryAttempts: 0,
    shouldRetry: () => false,
  });
  const iterator = client.iterate({
    query: params.query,
    variables: (params.variables as Record<string, unknown> | null | undefined) ?? undefined,
    operationName: params.operationName ?? undefined,
  });
  let failed = false;
  return {
    [Symbol.asyncIterator]: () => ({
      // graphql-ws yields formatted results (plain JSON), which is what GraphiQL displays.
      next: async (): Promise<IteratorResult<ExecutionResult>> => {
        if (failed) return { done: true, value: undefined };
        try {
          return (await iterator.next()) as IteratorResult<ExecutionResult>;
        } catch (error) {
          failed = true;
          void client.dispose();
          return { done: false, value: connectionFailure(error) };
        }
      },
      return: async () => {
        await iterator.return?.();
        await client.dispose();
        return { done: true, value: undefined };
      },
    }),
  };
};
// The Explorer sits beside the history (GraphiQL's default plugins) and the docs.
const plugins = [HISTORY_PLUGIN, explorerPlugin({ showAttribution: false })];

const root = document.getElementById('root');
if (!root) throw new Error('the playground page has no #root element');

createRoot(root).render(
  <GraphiQL
    fetcher={fetcher}
    plugins={plugins}
    defaultTabs={config.tabs}
    // GraphiQL fills the first tab's editors from these, not from defaultTabs[0].
    initialQuery={config.tabs[0]?.query}
    initialVariables={config.tabs[0]?.variables}
    initialHeaders={config.tabs[0]?.headers}
    defaultHeaders={config.defaultHeaders}
    isHeadersEditorEnabled
    defaultEditorToolsVisibility="variables"
    shouldPersistHeaders={false}
  />,
);
