/**
 * `npm run bench:events`: the change-event targets, measured on the local cluster of three
 * Redis primaries (sharded pub/sub) with 3 API instances and one standalone consumer as child
 * processes on one DynamoDB Local. Prints numbers; never part of `npm test`.
 *
 * (a) fan-out: `--subscriptions` graphql-ws subscriptions to the users' order events, spread over
 *     the 3 instances; rounds of one order per user, placed at the rates of `--order-rate`
 *     (eventsPacing.ts); each event's delivery at each matching subscriber, timed from the
 *     mutation's answer (so it includes the consumer's stream polling), with the orders of the
 *     slowest deliveries taken apart (eventsTail.ts), and the messages an instance with no
 *     listener for a topic receives (its delivery count's change).
 * (b) resume: `--reconnects` SSE reconnects with `Last-Event-ID`, each to another instance than
 *     before, an order of the stream's user placed while it is away each time: lost and
 *     duplicated events counted.
 * (c) faults: `--streams` open subscriptions (half SSE, half graphql-ws) while orders are
 *     placed; a Redis primary is killed for 6 s: each stream either lost nothing or ended with
 *     EVENTS_MISSED, and how long after the kill.
 *
 * This file reads the command line and runs the phases on one rig (eventsRig.ts): (a)
 * eventsFanOut.ts, (b) eventsResume.ts, (c) eventsFaults.ts.
 *
 *   npm run bench:events -- --subscriptions 10000 --reconnects 1000 --streams 300
 */
import { parseCommandLine } from '../src/cli.js';
import { runFanOut } from './eventsFanOut.js';
import { runFaults } from './eventsFaults.js';
import { parseRates } from './eventsPacing.js';
import { runResume } from './eventsResume.js';
import { EventsRig } from './eventsRig.js';

const { values } = parseCommandLine({
  name: 'bench:events',
  run: 'npm run bench:events --',
  usage: `[--subscriptions 10000] [--users 200] [--reconnects 1000] [--streams 300] [--phases fanout,resume,faults] [--products 200] [--order-rate max,auto] [--arrivals poisson] [--cpu-prof <dir>]

The change-event targets on a local cluster of three Redis primaries, 3 API instances and a
consumer: fan-out delivery p99 and idle instances, resume across instances, a killed primary.

  --subscriptions <n>  graphql-ws subscriptions over the 3 instances (default 10000)
  --users <n>          users they listen to, one topic each (default 200)
  --reconnects <n>     SSE reconnects with Last-Event-ID, each to another instance (default 1000)
  --streams <n>        streams open while a primary is killed (default 300)
  --phases <list>      which of fanout, resume and faults to run (default all three)
  --products <n>       products the orders are spread over, user i ordering product i mod n
                       (default 200; 1 puts every order and soldCount update on one item)
  --order-rate <list>  the fan-out's rounds of orders (one per user each), comma-separated: a rate
                       in orders per second (open loop), auto (half of what DynamoDB Local
                       alone sustains of placeOrder's work, measured first) or max (closed loop,
                       10 in flight as fast as they answer: DynamoDB Local's queue kept full)
                       (default max,auto)
  --arrivals <kind>    open-loop sends: poisson (seeded exponential gaps) or even (default poisson)
  --cpu-prof <dir>     the second API instance (one that serves no mutation, only events) runs
                       with node --cpu-prof and writes its CPU profile into <dir> when it is
                       stopped (SIGTERM) at the end`,
  options: {
    subscriptions: { type: 'string', default: '10000' },
    users: { type: 'string', default: '200' },
    reconnects: { type: 'string', default: '1000' },
    streams: { type: 'string', default: '300' },
    phases: { type: 'string', default: 'fanout,resume,faults' },
    products: { type: 'string', default: '200' },
    'order-rate': { type: 'string', default: 'max,auto' },
    arrivals: { type: 'string', default: 'poisson' },
    'cpu-prof': { type: 'string' },
  },
});
const SUBSCRIPTIONS = Number(values.subscriptions);
const USERS = Number(values.users);
const RECONNECTS = Number(values.reconnects);
const STREAMS = Number(values.streams);
const PRODUCTS = Number(values.products);
const RATES = parseRates(values['order-rate']);
const ARRIVALS = values.arrivals;
if (ARRIVALS !== 'poisson' && ARRIVALS !== 'even')
  throw new Error(`--arrivals: "${ARRIVALS}" is neither poisson nor even`);
const PHASES = new Set(values.phases.split(',').map((phase) => phase.trim()));
for (const phase of PHASES) {
  if (!['fanout', 'resume', 'faults'].includes(phase)) throw new Error(`--phases: no phase "${phase}"`);
}

const rig = await EventsRig.start({
  users: USERS,
  products: PRODUCTS,
  probeCapacity: PHASES.has('fanout'),
  cpuProfDir: values['cpu-prof'],
});
try {
  if (PHASES.has('fanout'))
    await runFanOut(rig, { subscriptions: SUBSCRIPTIONS, users: USERS, rates: RATES, arrivals: ARRIVALS });
  if (PHASES.has('resume')) await runResume(rig, { reconnects: RECONNECTS, users: USERS });
  if (PHASES.has('faults')) await runFaults(rig, { streams: STREAMS, users: USERS });
} catch (error) {
  // A child that died says why on its stderr.
  rig.reportExits();
  throw error;
} finally {
  await rig.stop();
}
process.exit(0);
