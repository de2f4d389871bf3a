/**
 * A Relay environment for this server with nothing beyond relay-runtime's defaults: queries and
 * mutations POSTed as JSON with the bearer token, a persisted operation sent by its `doc_id`
 * (relay-compiler's id, trusted once `persisted_queries.json` is published with
 * `npm run documents -- publish`), and subscriptions over a graphql-ws client the app creates.
 */
import { Environment, Network, Observable, RecordSource, Store } from 'relay-runtime';
import type { FetchFunction, GraphQLResponse, RequestParameters, SubscribeFunction, Variables } from 'relay-runtime';
import type { Client, ExecutionResult } from 'graphql-ws';

export interface RelayEnvironmentOptions {
  /** The GraphQL endpoint, e.g. https://api.example.com/graphql. */
  url: string;
  /** The signed-in user's token; anonymous without it. */
  token?: string;
  /** A graphql-ws client on the same endpoint (with the token in `connectionParams`). */
  subscriptions: Client;
}

/** A persisted operation by its id, anything else by its text. */
const payloadOf = (params: RequestParameters, variables: Variables) =>
  params.id != null
    ? { doc_id: params.id, operationName: params.name, variables }
    : { query: params.text ?? '', operationName: params.name, variables };

/** graphql-ws fails with an Error, a list of GraphQL errors, or the socket's CloseEvent. */
function asError(error: unknown): Error {
  if (error instanceof Error) return error;
  if (Array.isArray(error)) return new Error(error.map((item: { message?: string }) => item.message).join('; '));
  const close = error as { code?: number; reason?: string };
  return new Error(`WebSocket closed: ${close.code ?? '?'} ${close.reason ?? ''}`.trim());
}

export function createRelayEnvironment({ url, token, subscriptions }: RelayEnvironmentOptions): Environment {
  const fetchFn: FetchFunction = async (params, variables) => {
    const response = await fetch(url, {
      method: 'POST',
      headers: {
        'content-type': 'application/json',
        ...(token === undefined ? {} : { authorization: `Bearer ${token}` }),
      },
      body: JSON.stringify(payloadOf(params, variables)),
    });
    return (await response.json()) as GraphQLResponse;
  };
  const subscribe: SubscribeFunction = (params, variables) =>
    Observable.create<GraphQLResponse>((sink) =>
      // graphql-ws wants a `query` string: empty when the id names the document.
      subscriptions.subscribe(
        { query: '', ...payloadOf(params, variables) },
        {
          next: (value: ExecutionResult) => sink.next(value as GraphQLResponse),
          error: (error: unknown) => sink.error(asError(error)),
          complete: () => sink.complete(),
        },
      ),
    );
  return new Environment({ network: Network.create(fetchFn, subscribe), store: new Store(new RecordSource()) });
}
