/**
 * `npm run fleet`: N API instances, the stream consumer, redis-server and one DynamoDB Local on
 * this machine (scripts/fleet/fleet.ts), each URL printed; Ctrl-C stops them all and says so in
 * one line. Exit codes: 0 stopped cleanly, 1 could not start (the reason in one line), 2 bad usage.
 */
import { exitWithUsageError, parseCommandLine } from '../src/cli.js';

const COMMAND = {
  name: 'fleet',
  run: 'npm run fleet --',
  usage: `[--instances <n>] [--port <first port>] [--consumers <n>] [--redis-cluster]

Runs tablegraph's scale-out topology on this machine: API instances that share one
DynamoDB Local, the stream consumer that feeds them, and redis-server between them
(subscription events, cache invalidations), until Ctrl-C stops everything.

  --instances <n>    API instances, 1 to 8 (default 3)
  --port <port>      the first instance's port; the others take the next ones
                     (default 4000; 0 gives each a free port)
  --consumers <n>    stream consumers, 1 to 4, sharing the stream through leases (default 1)
  --redis-cluster    a Redis cluster of three primaries instead of one redis-server
                     (REDIS_MODE=cluster: sharded pub/sub, the shared cache partitioned)
  -h, --help         this text

DynamoDB Local keeps the fleet's data in $DATA_DIR/fleet (default .data/fleet), apart from
npm start's; with DYNAMODB_ENDPOINT set the fleet uses that database instead. Each process
logs to $DATA_DIR/fleet/logs/<name>.log; warnings and errors are shown here too.`,
  options: {
    instances: { type: 'string', default: '3' },
    port: { type: 'string', default: '4000' },
    consumers: { type: 'string', default: '1' },
    'redis-cluster': { type: 'boolean', default: false },
  },
} as const;

const { values } = parseCommandLine(COMMAND);

/** Start-up failed: the reason in one line, exit 1. */
const fail = (message: string): never => {
  console.error(`fleet: ${message}`);
  process.exit(1);
};

/** A whole number within [min, max], or exit 2 naming the option. */
function wholeNumber(name: string, text: string, min: number, max: number): number {
  const value = Number(text);
  if (!/^\d+$/.test(text) || value < min || value > max) {
    return exitWithUsageError(COMMAND, `--${name} must be a whole number from ${min} to ${max}, got "${text}"`);
  }
  return value;
}

const instances = wholeNumber('instances', values.instances, 1, 8);
const port = wholeNumber('port', values.port, 0, 65535 - (instances - 1));
const consumers = wholeNumber('consumers', values.consumers, 1, 4);

// Loaded once the arguments are known good: --help and a bad flag answer at once.
const { createFleet, FleetError, FleetStopped } = await import('./fleet/fleet.js');
const plural = (count: number, noun: string) => `${count} ${noun}${count > 1 ? 's' : ''}`;
const redisCluster = values['redis-cluster'];
const redisName = redisCluster ? 'a Redis cluster of 3 primaries' : 'redis-server';
const fleet = createFleet({
  instances,
  port,
  consumers,
  redisCluster,
  env: process.env,
  show: (line) => console.log(line),
});
let ready: { ownsDatabase: boolean } | undefined;

// The members run in process groups of their own: the terminal's Ctrl-C reaches this process
// alone, which stops them in order, during start-up too. npm forwards the signal it gets as
// well: the second one joins the stop under way.
let stopping: Promise<void> | undefined;
const stopAll = () => {
  stopping ??= (async () => {
    const begun = performance.now();
    await fleet.stop();
    const took = `(${((performance.now() - begun) / 1000).toFixed(1)} s)`;
    console.log(
      ready
        ? `fleet stopped: ${plural(instances, 'API instance')}, ${plural(consumers, 'consumer')}, ` +
            `${redisName}${ready.ownsDatabase ? ' and DynamoDB Local' : ''} ${took}`
        : `fleet stopped before it was ready ${took}`,
    );
    process.exit(0);
  })();
};
for (const signal of ['SIGINT', 'SIGTERM', 'SIGHUP'] as const) process.on(signal, stopAll);

const started = performance.now();
const running = await fleet.start().catch((error: unknown) => {
  // Stopped during start-up: stopAll says so and exits.
  if (error instanceof FleetStopped) return undefined;
  return fail(error instanceof FleetError ? error.message : String(error));
});
if (running) {
  ready = running;
  const names = [...running.apis, ...running.consumers].map((member) => member.name);
  const width = Math.max(...names.map((name) => name.length), 'dynamodb'.length) + 2;
  const row = (name: string, value: string) => `  ${name.padEnd(width)}${value}`;
  console.log(
    [
      `tablegraph fleet ready in ${((performance.now() - started) / 1000).toFixed(1)} s: ` +
        `${plural(instances, 'API instance')} and ${plural(consumers, 'consumer')} ` +
        `on ${running.ownsDatabase ? 'one DynamoDB Local' : 'the DYNAMODB_ENDPOINT database'}, ` +
        `events and invalidations over ${redisCluster ? 'a Redis cluster' : 'Redis'}`,
      ...running.apis.map((api) => row(api.name, api.url)),
      ...running.consumers.map((consumer) => row(consumer.name, consumer.url)),
      row('redis', running.redisUrl),
      row('dynamodb', running.dynamodb),
      row('logs', `${running.logs}/`),
      'A token: npm run token -- --sub alice (add --role admin for every order). Ctrl-C stops everything.',
    ].join('\n'),
  );
}
