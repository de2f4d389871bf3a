/**
 * One request's state for a page: loading, its data, or an ApiError, and `retry`. An answer that
 * arrives after the variables changed (or the page left) is dropped, and no state is ever left
 * loading: every request ends in data or an error (the client gives up after its timeout).
 */
import { useCallback, useEffect, useRef, useState } from 'react';
import { ApiError, request } from './api';
import type { RequestOptions } from './api';
import type { TypedDocumentString } from './gql/graphql';

export type QueryState<R> = { status: 'loading' } | { status: 'done'; data: R } | { status: 'failed'; error: ApiError };

export function useQuery<R, V>(
  document: TypedDocumentString<R, V>,
  variables: V,
  options: RequestOptions & { skip?: boolean } = {},
): QueryState<R> & { retry: () => void; reload: () => void } {
  const [state, setState] = useState<QueryState<R>>({ status: 'loading' });
  const [attempt, setAttempt] = useState(0);
  const key = JSON.stringify(variables);
  const { auth, skip } = options;

  useEffect(() => {
    if (skip) return;
    let current = true;
    setState((previous) => (previous.status === 'loading' ? previous : { status: 'loading' }));
    request(document, variables, { auth }).then(
      (data) => current && setState({ status: 'done', data }),
      (error: unknown) =>
        current &&
        setState({
          status: 'failed',
          error: error instanceof ApiError ? error : new ApiError('failed', 'Something went wrong. Try again.'),
        }),
    );
    return () => {
      current = false;
    };
    // `variables` is keyed by its JSON.
  }, [document, key, auth, skip, attempt]);

  const retry = useCallback(() => setAttempt((n) => n + 1), []);
  return { ...state, retry, reload: retry };
}

/**
 * `state`, but while it loads again for the same `key` (a reload after a write) the data it had:
 * the page stays as it is, focus and all, until the new answer replaces it.
 */
export function useKept<R>(state: QueryState<R>, key: string): QueryState<R> {
  const kept = useRef<{ key: string; data: R } | undefined>(undefined);
  if (state.status === 'done') kept.current = { key, data: state.data };
  if (state.status === 'loading' && kept.current?.key === key) return { status: 'done', data: kept.current.data };
  return state;
}
