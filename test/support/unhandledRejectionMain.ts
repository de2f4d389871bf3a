/**
 * A process started through runMain that leaves a promise rejection unhandled, as graphql-js
 * does with a sibling field's promise after a non-null failure, then goes on working: it logs
 * `still running` on its next turn of the event loop and exits when nothing is left to do.
 */
import { pino } from 'pino';
import { Registry } from 'prom-client';
import { countUnhandledRejections, runMain } from '../../src/runMain.js';

runMain(
  'rejecting',
  async () => {
    const log = pino();
    const registry = new Registry();
    countUnhandledRejections(registry);
    setTimeout(() => {
      void Promise.reject(new Error('an abandoned sibling field failed late'));
      // Node handles unhandled rejections before the next macrotask: by then this process
      // would already have ended under Node's default (--unhandled-rejections=throw).
      setImmediate(() => {
        void registry.getSingleMetricAsString('process_unhandled_rejections_total').then((metric) => {
          log.info({ metric }, 'still running');
        });
      });
    });
    return log;
  },
  [],
);
