/**
 * Every command of package.json that runs a file of ours (`node --import tsx <file>`: the server,
 * the consumer, scripts/, bench/, the example client), run as a person runs it: `--help` answers
 * the usage on stdout and exits 0; a flag it does not take is one line on stderr and exit 2,
 * never a stack trace. The commands that talk to DynamoDB, run for real against DynamoDB Local,
 * write nothing to stderr (the AWS SDK prints no runtime notice on the supported Node.js, and
 * neither does Node).
 */
import { randomUUID } from 'node:crypto';
import { readFileSync } from 'node:fs';
import path from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { createDynamo } from '../../src/db/client.js';
import { ensureTable } from '../../src/db/ensureTable.js';
import { endpoint } from '../support/harness.js';
import { PROJECT_ROOT, runNode, stderrLines } from '../support/serverProcess.js';
import type { NodeProcess } from '../support/serverProcess.js';

const scripts = (
  JSON.parse(readFileSync(path.join(PROJECT_ROOT, 'package.json'), 'utf8')) as {
    scripts: Record<string, string>;
  }
).scripts;

/** Each file run by a script, with the first script that runs it (as its usage names it). */
const commands = [
  ...new Map(
    Object.entries(scripts)
      .flatMap(([script, line]) => {
        // The last file of the line is the command (example:client mints its token with another first).
        const file = [...line.matchAll(/node --import tsx (?:--watch )?(\S+\.ts)/g)].at(-1)?.[1];
        return file ? [[file, script] as const] : [];
      })
      .reverse(),
  ).entries(),
]
  .map(([file, script]) => ({ file, script }))
  .sort((a, b) => a.file.localeCompare(b.file));

/**
 * A command that has not exited within this long is killed, and its result says so: the test of
 * that command then fails naming it, rather than the whole suite's set-up timing out unnamed.
 */
const COMMAND_DEADLINE_MS = 60_000;

async function finished(run: NodeProcess, command: string) {
  let timedOut = false;
  const deadline = setTimeout(() => {
    timedOut = true;
    run.child.kill('SIGKILL');
  }, COMMAND_DEADLINE_MS);
  try {
    const exit = await run.exited;
    const stderr = timedOut
      ? `${command} did not exit within ${COMMAND_DEADLINE_MS} ms\n${run.stderr()}`
      : run.stderr();
    return { ...exit, stdout: run.stdout(), stderr };
  } finally {
    clearTimeout(deadline);
  }
}

/** The commands are run two at a time: each loads its whole module graph, about a second of CPU. */
async function inPairs<T, R>(items: readonly T[], each: (item: T) => Promise<R>): Promise<R[]> {
  const results: R[] = [];
  for (let i = 0; i < items.length; i += 2) results.push(...(await Promise.all(items.slice(i, i + 2).map(each))));
  return results;
}

describe('every command of package.json', () => {
  let help: Awaited<ReturnType<typeof finished>>[];
  let badFlag: Awaited<ReturnType<typeof finished>>[];

  beforeAll(async () => {
    help = await inPairs(commands, ({ file }) => finished(runNode(file, {}, ['--help']), `${file} --help`));
    badFlag = await inPairs(commands, ({ file }) =>
      finished(runNode(file, {}, ['--no-such-flag']), `${file} --no-such-flag`),
    );
  }, 240_000);

  it('is found: the server, the consumer, the scripts and the benchmarks', () => {
    const files = commands.map((command) => command.file);
    expect(files).toEqual(
      expect.arrayContaining([
        'src/main.ts',
        'src/consumer/main.ts',
        'scripts/token.ts',
        'scripts/migrate.ts',
        'scripts/documents.ts',
        'bench/run.ts',
        'client/exampleClient.ts',
      ]),
    );
  });

  it.each(commands.map((command, index) => [command.script, index] as const))(
    '%s answers --help with its usage and exit 0',
    (script, index) => {
      const result = help[index]!;
      expect(result.stderr).toBe('');
      const run = script === 'start' ? 'npm start' : `npm run ${script}`;
      expect(result.stdout).toMatch(new RegExp(`^usage: ${run}( |\\n)`));
      expect(result.code).toBe(0);
    },
  );

  it.each(commands.map((command, index) => [command.script, index] as const))(
    '%s answers a flag it does not take with one line and exit 2',
    (_script, index) => {
      const result = badFlag[index]!;
      const lines = stderrLines(result.stderr);
      expect(lines).toHaveLength(1);
      expect(lines[0]).toMatch(/^[\w:-]+: .*--no-such-flag.*--help shows the usage\)$/);
      expect(result.stdout).toBe('');
      expect(result.code).toBe(2);
    },
  );
});

describe('the commands that talk to DynamoDB', () => {
  const tableName = `cli-${randomUUID()}`;
  const env = () => ({ DYNAMODB_ENDPOINT: endpoint(), TABLE_NAME: tableName, LOG_LEVEL: 'info' });

  beforeAll(async () => {
    const dynamo = createDynamo({ endpoint: endpoint(), region: 'us-east-1' });
    await ensureTable(dynamo.client, tableName, endpoint());
    dynamo.client.destroy();
  });

  it.each([
    ['migrate', 'scripts/migrate.ts', ['--status']],
    ['seed', 'scripts/seed.ts', []],
    ['documents', 'scripts/documents.ts', ['list']],
    ['token', 'scripts/token.ts', ['--sub', 'alice']],
  ] as const)('%s succeeds with nothing on stderr', async (_name, file, args) => {
    const result = await finished(runNode(file, env(), args), `${file} ${args.join(' ')}`);
    expect(result.stderr).toBe('');
    expect(result.stdout).not.toBe('');
    expect(result.code).toBe(0);
  });

  describe('the consumer', () => {
    let consumer: NodeProcess;
    afterAll(() => consumer?.child.kill('SIGKILL'));

    it('starts and stops with nothing on stderr', async () => {
      consumer = runNode('src/consumer/main.ts', { ...env(), HOST: '127.0.0.1', CONSUMER_PORT: '0' });
      await consumer.waitForLog((line) => /ready/.test(line.msg), 'the ready line');
      consumer.child.kill('SIGTERM');
      const { code } = await consumer.exited;
      expect(consumer.stderr()).toBe('');
      expect(code).toBe(0);
    });
  });
});
