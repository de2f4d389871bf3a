/**
 * A fleet on one machine, as docs/scale-out.md's second topology runs it: one DynamoDB Local
 * (the fleet's own, persisting to `<DATA_DIR>/fleet`, or the DYNAMODB_ENDPOINT given), one
 * redis-server on a free port (or, with `redisCluster`, a cluster of three primaries:
 * redisCluster.ts), N API instances (`src/main.ts`, STREAM_CONSUMER=false) and the stream
 * consumers (`src/consumer/main.ts`) on it, with a fresh REDIS_SIGNING_SECRET. The first
 * instance creates, migrates and seeds the table before the others start, so they never race.
 * stop() undoes it in order, at any time, start-up included: the API instances and consumers
 * (SIGTERM: requests finish, leases are released), then Redis, then the database.
 */
import { randomBytes } from 'node:crypto';
import { mkdirSync, rmSync } from 'node:fs';
import path from 'node:path';
import { ConfigError, loadScriptConfig } from '../../src/config/index.js';
import { freePort, startLocalDynamo } from '../../src/db/local.js';
import { LocalDynamoError } from '../../src/db/localChild.js';
import type { LocalDynamo } from '../../src/db/local.js';
import { projectRoot } from '../../src/projectRoot.js';
import { assertPortFree, PortInUseError } from '../../src/transports/http/server.js';
import { startMember } from './member.js';
import type { Member, OutputLine } from './member.js';
import { clusterNodeArgs, createCluster } from './redisCluster.js';

export interface FleetOptions {
  /** API instances, on ports `port`, `port + 1`, ...; `port` 0 gives each a free port. */
  instances: number;
  port: number;
  consumers: number;
  /** Three redis-server primaries joined in a cluster (REDIS_MODE=cluster) instead of one. */
  redisCluster?: boolean | undefined;
  /** The fleet's own environment: the members inherit it, with the fleet's settings on top. */
  env: NodeJS.ProcessEnv;
  /** A line for the terminal: a member's warning, the database restarting. */
  show: (line: string) => void;
}

/** Where the running fleet is. */
export interface FleetAddresses {
  apis: { name: string; url: string }[];
  consumers: { name: string; url: string }[];
  /** REDIS_URL as the members have it (a cluster's seed nodes, comma-separated). */
  redisUrl: string;
  /** The database's endpoint, and where its data lives. */
  dynamodb: string;
  /** Whether the fleet started that DynamoDB Local itself (not DYNAMODB_ENDPOINT's). */
  ownsDatabase: boolean;
  logs: string;
}

export interface Fleet {
  /** Starts every member; resolves once all are ready. Rejects with FleetError, or FleetStopped after stop(). */
  start(): Promise<FleetAddresses>;
  /** Stops every member started so far, in order (start-up is abandoned); resolves once all have exited. */
  stop(): Promise<void>;
}

/** A failure whose message is the one line the user sees. */
export class FleetError extends Error {
  override name = 'FleetError';
}

/** What start() rejects with once stop() was called: nothing failed. */
export class FleetStopped extends Error {
  override name = 'FleetStopped';
}

const START_TIMEOUT_MS = 120_000;
/** Levels below `info` would hide the ready lines the fleet waits for. */
const CHATTY_LEVELS = new Set(['debug', 'trace']);

/** A path as the user would type it: relative inside the current folder, absolute elsewhere. */
const shown = (target: string): string => {
  const relative = path.relative(process.cwd(), target);
  return relative === '' || relative.startsWith('..') || path.isAbsolute(relative) ? target : relative;
};

const jsonMessage = (prefix: string) => (line: OutputLine) =>
  typeof line.json?.msg === 'string' && line.json.msg.startsWith(prefix);

/** The port check's refusal in the fleet's words (the server's names PORT, which the fleet sets). */
async function assertPortsFree(ports: readonly number[]): Promise<void> {
  for (const port of ports.filter((p) => p !== 0)) {
    await assertPortFree('127.0.0.1', port).catch((error: unknown) => {
      if (error instanceof PortInUseError) {
        throw new FleetError(`port ${port} is in use: stop what holds it, or pass --port <another first port>`);
      }
      throw error;
    });
  }
}

export function createFleet(options: FleetOptions): Fleet {
  const members: Member[] = [];
  let local: LocalDynamo | undefined;
  let stopping = false;
  let ready = false;
  let starting: Promise<unknown> | undefined;

  /** Stops what runs now: the API instances and consumers, then Redis, then the database. */
  const stopRunning = async () => {
    stopping = true;
    for (const member of members) member.quiet();
    const isRedis = (member: Member) => member.name.startsWith('redis');
    await Promise.all(members.filter((member) => !isRedis(member)).map((member) => member.stop()));
    await Promise.all(members.filter(isRedis).map((member) => member.stop()));
    await local?.stop();
  };
  /** After every wait of start-up: a stop() meanwhile ends it there. */
  const goOn = () => {
    if (stopping) throw new FleetStopped('the fleet was stopped while it started');
  };

  const start = async (): Promise<FleetAddresses> => {
    let config;
    try {
      config = loadScriptConfig(options.env);
    } catch (error) {
      throw error instanceof ConfigError ? new FleetError(error.message) : error;
    }
    if (config.mode === 'aws') {
      throw new FleetError(
        'DYNAMODB_MODE=aws: a fleet on this machine runs on DynamoDB Local (unset it, or set DYNAMODB_ENDPOINT)',
      );
    }
    const apiPorts = Array.from({ length: options.instances }, (_, i) => (options.port === 0 ? 0 : options.port + i));
    await assertPortsFree(apiPorts);
    const home = path.join(config.dataDir, 'fleet');
    const logs = path.join(home, 'logs');
    mkdirSync(logs, { recursive: true });

    const launch = (name: string, command: string, args: string[], env: NodeJS.ProcessEnv, plainLines = true) => {
      goOn();
      const member = startMember({
        name,
        command,
        args,
        cwd: projectRoot(),
        env,
        logFile: path.join(logs, `${name}.log`),
        show: options.show,
        showsPlainLine: () => plainLines,
      });
      members.push(member);
      // Once the fleet is up; before, start-up fails with the member's last words instead.
      void member.exited.then(({ code, signal }) => {
        if (ready && !stopping) options.show(`[${name}] exited (${signal ?? `code ${code}`}): see ${member.logFile}`);
      });
      return member;
    };

    let endpoint = config.endpoint;
    let where = endpoint ?? '';
    if (config.mode === 'embedded') {
      goOn();
      local = await startLocalDynamo({
        dataDir: home,
        port: config.localPort,
        restart: true,
        onEvent: (event) => options.show(`[dynamodb] ${event.kind === 'restarted' ? 'restarted' : event.kind}`),
      }).catch((error: unknown) => {
        throw error instanceof LocalDynamoError ? new FleetError(error.message) : error;
      });
      endpoint = local.endpoint;
      where = `${endpoint} (data in ${shown(home)})`;
    }

    const startRedis = async (name: string, args: string[]) => {
      // Its own notices (memory overcommit, no config file) are not the fleet's business: in its log only.
      const redis = launch(name, 'redis-server', args, options.env, false);
      await redis
        .waitForLine((line) => line.text.includes('Ready to accept connections'), START_TIMEOUT_MS)
        .catch((error: unknown) => {
          goOn();
          throw new FleetError(
            /ENOENT/.test((error as Error).message)
              ? 'redis-server is not installed: apt-get install redis-server (Debian/Ubuntu), or brew install redis'
              : (error as Error).message,
          );
        });
    };
    let redisUrl: string;
    if (options.redisCluster) {
      // A new cluster each run: the state of the last one names ports that are not this run's.
      const clusterHome = path.join(home, 'redis-cluster');
      rmSync(clusterHome, { recursive: true, force: true });
      const ports: number[] = [];
      for (let i = 1; i <= 3; i++) {
        const [port, busPort] = [await freePort(), await freePort()];
        const dir = path.join(clusterHome, `node-${i}`);
        mkdirSync(dir, { recursive: true });
        ports.push(port);
        await startRedis(`redis-${i}`, clusterNodeArgs(port, busPort, dir));
      }
      goOn();
      await createCluster(ports).catch((error: unknown) => {
        throw new FleetError(`the redis cluster did not form: ${(error as Error).message}`);
      });
      redisUrl = ports.map((port) => `redis://127.0.0.1:${port}`).join(',');
    } else {
      const redisPort = await freePort();
      await startRedis('redis', [
        '--port',
        String(redisPort),
        '--bind',
        '127.0.0.1',
        '--save',
        '',
        '--appendonly',
        'no',
      ]);
      redisUrl = `redis://127.0.0.1:${redisPort}`;
    }

    const level = options.env.LOG_LEVEL ?? '';
    const memberEnv = {
      ...options.env,
      DYNAMODB_MODE: 'endpoint',
      DYNAMODB_ENDPOINT: endpoint,
      REDIS_URL: redisUrl,
      REDIS_MODE: options.redisCluster ? 'cluster' : 'single',
      // Every member signs and checks what crosses Redis; a new key each run.
      REDIS_SIGNING_SECRET: randomBytes(32).toString('hex'),
      LOG_FORMAT: 'json',
      LOG_LEVEL: CHATTY_LEVELS.has(level) ? level : 'info',
    };
    const readyLine = async (member: Member, prefix: string) => {
      try {
        return await member.waitForLine(jsonMessage(prefix), START_TIMEOUT_MS);
      } catch (error) {
        goOn();
        throw new FleetError((error as Error).message);
      }
    };
    const startApi = async (index: number) => {
      const api = launch(`api-${index + 1}`, process.execPath, ['--import', 'tsx', 'src/main.ts'], {
        ...memberEnv,
        PORT: String(apiPorts[index]),
        STREAM_CONSUMER: 'false',
        // The first one seeds an empty table; the others find it seeded.
        SEED_DEMO_DATA: index === 0 ? (options.env.SEED_DEMO_DATA ?? 'true') : 'false',
      });
      return { name: api.name, url: String((await readyLine(api, 'tablegraph ready at')).json?.url) };
    };
    const startConsumer = async (index: number) => {
      const name = options.consumers > 1 ? `consumer-${index + 1}` : 'consumer';
      const consumer = launch(name, process.execPath, ['--import', 'tsx', 'src/consumer/main.ts'], {
        ...memberEnv,
        CONSUMER_PORT: '0',
      });
      const port = String((await readyLine(consumer, 'tablegraph consumer ready')).json?.port);
      return { name, url: `http://127.0.0.1:${port}/readyz` };
    };

    const first = await startApi(0);
    const [others, consumers] = await Promise.all([
      Promise.all(apiPorts.slice(1).map((_, i) => startApi(i + 1))),
      Promise.all(Array.from({ length: options.consumers }, (_, i) => startConsumer(i))),
    ]);
    goOn();
    ready = true;
    return {
      apis: [first, ...others],
      consumers,
      redisUrl,
      dynamodb: where,
      ownsDatabase: local !== undefined,
      logs: shown(logs),
    };
  };

  return {
    start: () => {
      const attempt = start().catch(async (error: unknown) => {
        // A failed start-up leaves nothing behind; a stopped one is stop()'s to clean up.
        if (!(error instanceof FleetStopped)) await stopRunning();
        throw error;
      });
      starting = attempt;
      return attempt;
    },
    stop: async () => {
      await stopRunning();
      // What start-up was still bringing up when asked to stop (DynamoDB Local, say): it gives up
      // at its next step; stop whatever it had started by then.
      await starting?.catch(() => undefined);
      await stopRunning();
    },
  };
}
