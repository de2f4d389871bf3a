/**
 * Signing in. In development the API signs the demo users in itself (alice and bob); a shop in
 * production sends the visitor to its identity provider instead (see auth.ts).
 */
import { useState } from 'react';
import { signIn, SignInError, useSession } from '../auth';
import { href, parseRoute } from '../route';

/** Only a route of this app to go back to, never another site. */
const destination = (then: string | undefined) =>
  then && parseRoute(`#/${then}`).page !== 'not-found' ? `#/${then}` : href.orders();

export function SignInPage({ then }: { then: string | undefined }) {
  const { session, ended } = useSession();
  const [userId, setUserId] = useState('');
  const [busy, setBusy] = useState(false);
  const [refusal, setRefusal] = useState('');

  const submit = async () => {
    setBusy(true);
    setRefusal('');
    try {
      await signIn(userId.trim());
      location.hash = destination(then);
    } catch (error) {
      setRefusal(error instanceof SignInError ? error.message : 'Sign-in failed. Try again.');
    } finally {
      setBusy(false);
    }
  };

  return (
    <section className="sign-in" aria-labelledby="page-title">
      <h1 id="page-title" tabIndex={-1}>
        Sign in
      </h1>
      {session && (
        <p role="status">
          You are signed in as {session.userId}. <a href={href.orders()}>See your orders</a>
        </p>
      )}
      {ended === 'refused' && !session && <p role="status">Your session has ended. Sign in again to go on.</p>}
      <form
        onSubmit={(event) => {
          event.preventDefault();
          void submit();
        }}
      >
        <label>
          User
          <input
            value={userId}
            onChange={(e) => setUserId(e.target.value)}
            autoComplete="username"
            required
            aria-describedby="sign-in-hint"
            aria-invalid={refusal !== ''}
          />
        </label>
        <p id="sign-in-hint" className="hint">
          The demo users are alice and bob. This is the development sign-in: in production, signing in goes to your
          identity provider.
        </p>
        <button type="submit" disabled={busy || userId.trim() === ''}>
          {busy ? 'Signing in…' : 'Sign in'}
        </button>
        {refusal && (
          <p className="field-error" role="alert">
            {refusal}
          </p>
        )}
      </form>
    </section>
  );
}
