/**
 * The one shutdown of a process (the server's main.ts and the stream consumer's): `stop` runs
 * once, on the first SIGINT or SIGTERM or when called, and every later signal joins it. The
 * handlers stay installed (`on`, not `once`): Ctrl-C under `npm start` delivers SIGINT twice
 * (from the terminal and from npm), and a second signal without a handler would kill the
 * process on the spot, leaving the database child running. The process exits 0 once a
 * signalled stop has finished, 1 if it failed.
 */
import type { Logger } from 'pino';

export function handleStopSignals(
  log: Pick<Logger, 'info' | 'error'>,
  stop: () => Promise<void>,
): (reason: string) => Promise<void> {
  let stopping: Promise<void> | undefined;
  const shutdown = (reason: string) => {
    stopping ??= (async () => {
      log.info({ signal: reason }, 'stopping');
      await stop();
      log.info('stopped');
    })();
    return stopping;
  };
  for (const signal of ['SIGINT', 'SIGTERM'] as const) {
    process.on(signal, () => {
      shutdown(signal).then(
        () => process.exit(0),
        (error: unknown) => {
          log.error({ err: error }, 'shutdown failed');
          process.exit(1);
        },
      );
    });
  }
  return shutdown;
}
