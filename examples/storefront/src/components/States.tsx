/** What a page shows while it waits, when it fails and when there is nothing to show. */
import type { ReactNode } from 'react';
import type { ApiError } from '../api';
import { href } from '../route';

/** A polite status line: screen readers announce it without moving focus. */
export function Loading({ label }: { label: string }) {
  return (
    <p className="loading" role="status" aria-live="polite">
      <span className="spinner" aria-hidden="true" />
      {label}…
    </p>
  );
}

/** An error a person can act on: try again, or sign in again when the session ended. */
export function Problem({ error, onRetry, then }: { error: ApiError; onRetry?: () => void; then?: string }) {
  const signIn = error.kind === 'refused' || error.kind === 'signed-out';
  return (
    <div className="problem" role="alert">
      <p>{error.message}</p>
      {signIn ? (
        <a className="button" href={href.signIn(then)}>
          Sign in
        </a>
      ) : (
        onRetry && (
          <button type="button" onClick={onRetry}>
            Try again
          </button>
        )
      )}
    </div>
  );
}

export function Empty({ children }: { children: ReactNode }) {
  return <div className="empty">{children}</div>;
}
