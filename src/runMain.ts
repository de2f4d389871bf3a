/**
 * How a long-running entry point runs (`npm start`, `npm run consumer`): one place for what
 * every one of them needs around its `main`.
 *
 * - A rejection nobody handles is logged and counted, and the process goes on (see
 *   docs/decisions/unhandled-rejections.md): graphql-js may abandon a sibling field's promise
 *   when a non-null field fails first, and under Node's default a late rejection of it would
 *   end a server that is answering every other request correctly.
 * - When `main` rejects, an error of one of the `userFacingErrors` classes (its message is a
 *   complete instruction: a bad setting, a port in use) is printed alone, anything else with its
 *   stack, and the process exits 1.
 */
import { pino } from 'pino';
import type { Logger } from 'pino';
import { Counter } from 'prom-client';
import type { Registry } from 'prom-client';

// eslint-disable-next-line @typescript-eslint/no-explicit-any -- any constructor of an Error
type ErrorClass = abstract new (...args: any[]) => Error;

let rejections = 0;

/** Adds `process_unhandled_rejections_total` (the rejections this process logged and survived) to `registry`. */
export function countUnhandledRejections(registry: Registry): void {
  new Counter({
    name: 'process_unhandled_rejections_total',
    help: 'Promise rejections no code handled: logged, and the process went on',
    registers: [registry],
    collect() {
      this.reset();
      this.inc(rejections);
    },
  });
}

/**
 * Runs `main`, which resolves with the process's logger once it has one (an unhandled rejection
 * before that goes to a plain JSON logger). Never rejects: a failed `main` exits the process.
 */
export function runMain(
  name: string,
  main: () => Promise<Pick<Logger, 'error'>>,
  userFacingErrors: readonly ErrorClass[],
): void {
  let log: Pick<Logger, 'error'> = pino({ name });
  process.on('unhandledRejection', (reason) => {
    rejections += 1;
    log.error({ err: reason }, 'unhandled promise rejection: logged, and the process goes on');
  });
  main().then(
    (processLog) => {
      log = processLog;
    },
    (error: unknown) => {
      if (userFacingErrors.some((type) => error instanceof type)) {
        console.error(`${name}: ${(error as Error).message}`);
      } else {
        console.error(`${name}: failed to start:`, error);
      }
      process.exit(1);
    },
  );
}
