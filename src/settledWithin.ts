/**
 * Whether `promise` settled (resolved or rejected) within `ms`: resolves after `ms` at the
 * latest, or at once when `promise` settles first. Nothing is cancelled: a bound on how long a
 * caller waits (a flush, a connection, a write), not on the work itself. Never rejects.
 */
export async function settledWithin(promise: Promise<unknown>, ms: number): Promise<boolean> {
  let timer: NodeJS.Timeout | undefined;
  const late = new Promise<false>((resolve) => (timer = setTimeout(() => resolve(false), ms)));
  try {
    return await Promise.race([
      promise.then(
        () => true,
        () => true,
      ),
      late,
    ]);
  } finally {
    clearTimeout(timer);
  }
}
