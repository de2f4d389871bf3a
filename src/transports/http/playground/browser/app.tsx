/**
 * The playground page: GraphiQL 5 (Monaco editors) bundled by esbuild and served by this
 * server, so it needs no CDN and works with the network off. The server passes the endpoint
 * and the example tabs in a JSON script tag (see page.ts).
 */
import { createGraphiQLFetcher } from '@graphiql/toolkit';
import type { Fetcher, FetcherParams } from '@graphiql/toolkit';
import { getOperationAST, Kind, OperationTypeNode, parse } from 'graphql';
import type { ExecutionResult } from 'graphql';
import { createClient } from 'graphql-ws';
import { GraphiQL } from 'graphiql';
import { createRoot } from 'react-dom/client';
import 'graphiql/style.css';

interface PlaygroundConfig {
  endpoint: string;
  tabs: { query: string; variables?: string; headers?: string }[];
  defaultHeaders: string;
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

const fetcher: Fetcher = (rawParams, opts) => {
  const params = withValidOperationName(rawParams);
  const operation = opts?.documentAST ? getOperationAST(opts.documentAST, params.operationName)?.operation : undefined;
  if (operation !== OperationTypeNode.SUBSCRIPTION) return httpFetcher(params, opts);
  const headers = (opts?.headers ?? {}) as Record<string, unknown>;
  const client = createClient({
    url: wsUrl,
    lazy: true,
    connectionParams: { authorization: headers.Authorization ?? headers.authorization },
  });
  const iterator = client.iterate({
    query: params.query,
    variables: (params.variables as Record<string, unknown> | null | undefined) ?? undefined,
    operationName: params.operationName ?? undefined,
  });
  return {
    [Symbol.asyncIterator]: () => ({
      // graphql-ws yields formatted results (plain JSON), which is what GraphiQL displays.
      next: () => iterator.next() as Promise<IteratorResult<ExecutionResult>>,
      return: async () => {
        await iterator.return?.();
        await client.dispose();
        return { done: true, value: undefined };
      },
    }),
  };
};
const root = document.getElementById('root');
if (!root) throw new Error('the playground page has no #root element');

createRoot(root).render(
  <GraphiQL
    fetcher={fetcher}
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
