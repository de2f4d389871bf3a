/** The markdown of a run (bench/results/latest.md and stdout), one function per section. */
import { BUSY_CORES as BUSY } from './load.js';
import { renderRatioTable } from './ratios.js';
import type { BenchResults } from './results.js';

const n = (value: number | undefined, digits = 1): string =>
  value === undefined || !Number.isFinite(value) ? '–' : value.toFixed(digits);
const compact = (value: number): string => (Number.isInteger(value) ? String(value) : value.toFixed(1));
/** A median with the range of its rounds in brackets (`--rounds` above 1). */
const withRange = (value: number, values: number[] | undefined, digits: number): string =>
  values && values.length > 1
    ? `${n(value, digits)} [${n(Math.min(...values), digits)}–${n(Math.max(...values), digits)}]`
    : n(value, digits);

function table(header: string[], rows: string[][], align?: string[]): string {
  const line = (cells: string[]) => `| ${cells.join(' | ')} |`;
  return [line(header), line(align ?? header.map(() => '---')), ...rows.map(line)].join('\n');
}

/** How the run started tablegraph (bench/procs.ts). */
const serverCommand = (config: BenchResults['config']): string =>
  config.tsx
    ? '`node --import tsx src/main.ts`: under tsx,'
    : '`node server.mjs`: the esbuild bundle of the image and the Lambda,';

/** The title line, the data set and how each cell was measured. */
function renderIntro(results: BenchResults): string[] {
  const { config, dataset, environment } = results;
  const out: string[] = [];
  out.push('# tablegraph benchmark', '');
  out.push(
    `${results.generatedAt.slice(0, 16).replace('T', ' ')} UTC · ${environment.cpus} × ${environment.cpuModel} · ${environment.memoryGb} GB · Node ${environment.node} · ${environment.database} · run took ${n(results.totalSeconds, 0)} s (${Object.entries(
      results.phases,
    )
      .filter(([, seconds]) => seconds >= 0.5)
      .map(([phase, seconds]) => `${phase} ${n(seconds, 0)} s`)
      .join(', ')})`,
    '',
  );
  out.push(
    `**Dataset**: ${dataset.users} users with ${config.ordersMin}-${config.ordersMax} orders each (${dataset.orders} orders, both copies), ${dataset.products} products in ${dataset.categories} categories, ${dataset.buyers} buyers for placeOrder` +
      (dataset.scaleOrders ? `, one partition of ${dataset.scaleOrders} orders for the scale test` : '') +
      `. **Table: ${dataset.tableItems} items, seeded in ${n(dataset.seeding.seconds)} s** (${n(dataset.seeding.itemsPerSecond, 0)} items/s, BatchWriteItem).`,
    '',
  );
  if (results.runs.length > 0) {
    out.push(
      `Each cell: ${config.warmupSeconds} s warm-up, then ${(config.rounds ?? 1) > 1 ? `${config.rounds} rounds of ` : ''}${config.durationSeconds} s of autocannon over HTTP (\`POST /graphql\` with \`Authorization: Bearer\`), every response checked. ` +
        `Systems: **tablegraph** (${serverCommand(config)} with NODE_ENV=production as deployed, LOG_LEVEL=warn, RESPONSE_CACHE=off, STREAM_CONSUMER=false: its in-process DynamoDB Streams consumer runs as a Lambda on AWS), **raw chain** (the limit: the fewest raw SDK calls, no GraphQL, node:http), ` +
        '**raw chain, one request per level** (raw SDK calls in the order of the server with item-collection fusion off), **naive peer** (same schema on Apollo + Express, one GetItem/Query per entity, no DataLoader). ' +
        `All are separate processes, ${config.tsx ? 'each run under tsx (`--tsx`)' : 'each bundled by esbuild with the settings of the image (the comparison servers too)'}; CPU and RSS are read from /proc for the system’s process.` +
        ((config.rounds ?? 1) > 1
          ? ' The variants of a cell take turns round by round; a figure is the median of the rounds, [min–max] their range, and a ratio the median of the per-round ratios.'
          : ''),
      '',
    );
  } else {
    out.push(
      `Only the scale test ran: tablegraph (${serverCommand(config)}) over HTTP with autocannon, CPU and RSS from /proc.`,
      '',
    );
  }
  return out;
}

/** The targets and whether this run meets them. */
function renderTargets(results: BenchResults): string[] {
  const out: string[] = [];
  out.push('## Targets', '');
  out.push(
    table(
      ['target', 'operation', 'measured', 'goal', ''],
      results.targets.map((t) => [t.target, t.op, t.measured, t.goal, t.pass ? '✅' : '❌']),
    ),
    '',
  );
  return out;
}

/** Each tablegraph variant divided by the raw chain (when the raw chain ran). */
function renderAgainstRaw(results: BenchResults): string[] {
  const out: string[] = [];
  if (results.runs.some((run) => run.variant === 'raw')) {
    out.push('## Against the raw chain', '');
    out.push(
      'Each tablegraph variant (the server, and the server with one lever off) divided by the raw chain in the same cell of this run: p50 and p99 latency, CPU per request of the system’s process, and DynamoDB requests per operation.',
      '',
      renderRatioTable(results),
      '',
    );
  }
  return out;
}

/** The load results, cell by cell. */
function renderResults(results: BenchResults): string[] {
  if (!(results.runs.length > 0 || results.costs.length > 0)) return [];
  const label = (key: string) => results.variants.find((v) => v.key === key)?.label ?? key;
  const out: string[] = [];
  out.push('## Results', '');
  out.push(
    'DDB req/op, RCU and WCU “Local” are what each response reported in `extensions.cost.dynamodb` (DynamoDB Local’s figures); “Amazon” is what Amazon DynamoDB would bill for the same calls, computed from item sizes (see Cost). CPU is the system process’s CPU time per request. “Other load” is the CPU (in cores) that processes outside the benchmark used during the run; a run where it exceeded a quarter of a core is repeated (twice at most) and ⚠ marks one that stayed busy.',
    '',
  );
  const loads = results.runs.map((run) => run.backgroundCores);
  const busyRuns = loads.filter((load) => load > BUSY).length;
  if (busyRuns > 0) {
    out.push(
      `> ⚠ ${busyRuns} of ${loads.length} runs shared the machine with other work (up to ${n(Math.max(...loads), 2)} cores): their latencies and rates are pessimistic.`,
      '',
    );
  }
  const costFor = (op: string, variant: string) => results.costs.find((c) => c.op === op && c.variant === variant);
  out.push(
    table(
      [
        'operation',
        'system',
        'c',
        'req/s',
        'p50 ms',
        'p95 ms',
        'p99 ms',
        'n',
        'DDB req/op',
        'RCU Local',
        'RCU Amazon',
        'WCU Local',
        'WCU Amazon',
        'CPU ms/req',
        'RSS MB',
        'other load',
      ],
      results.runs.map((run) => {
        const cost = costFor(run.op, run.variant);
        return [
          run.op,
          label(run.variant),
          String(run.connections),
          n(run.requestsPerSecond, 0),
          withRange(run.latencyMs.p50, run.rounds?.p50Ms, 1),
          n(run.latencyMs.p95),
          withRange(run.latencyMs.p99, run.rounds?.p99Ms, 1),
          `${run.requests}${run.failures ? ` (${run.failures} failed)` : ''}`,
          run.dynamodb.requestsMin === run.dynamodb.requestsMax
            ? compact(run.dynamodb.requests)
            : `${n(run.dynamodb.requests)} (${run.dynamodb.requestsMin}-${run.dynamodb.requestsMax})`,
          n(run.dynamodb.readCapacityUnits),
          cost ? n(cost.amazon.readUnits) : '–',
          n(run.dynamodb.writeCapacityUnits),
          cost ? n(cost.amazon.writeUnits + cost.amazon.indexWriteUnits) : '–',
          withRange(run.cpuMsPerRequest, run.rounds?.cpuMsPerRequest, 2),
          n(run.rssMb, 0),
          `${n(run.backgroundCores, 2)}${run.backgroundCores > BUSY ? ' ⚠' : ''}`,
        ];
      }),
      ['---', '---', '--:', '--:', '--:', '--:', '--:', '--:', '--:', '--:', '--:', '--:', '--:', '--:', '--:', '--:'],
    ),
    '',
  );
  return out;
}

/** What each operation would cost on Amazon DynamoDB. */
function renderCost(results: BenchResults): string[] {
  if (!(results.runs.length > 0 || results.costs.length > 0)) return [];
  const { config } = results;
  const label = (key: string) => results.variants.find((v) => v.key === key)?.label ?? key;
  const out: string[] = [];
  out.push('## Cost per operation (Amazon DynamoDB model)', '');
  out.push(
    `Priced from the items on the wire during a cost pass (${config.costSamples} requests per operation and system, through a recording proxy): ` +
      'item size = attribute names + values; reads 4 KB units (GetItem/BatchGetItem per item, a Query per total), halved when eventually consistent (GSI1 queries); ' +
      'writes 1 KB units of the larger of before/after image, doubled in transactions; index writes (GSI1, LSI1) priced as plain writes of the item’s size, two when the index key moves. ' +
      'DynamoDB Local reports a flat figure for transactions, hence the difference.',
    '',
  );
  out.push(
    table(
      [
        'operation',
        'system',
        'requests (API calls)',
        'RCU',
        'RCU if eventually consistent',
        'WCU table',
        'WCU index',
        'items',
        'avg item B',
        'KB from DynamoDB',
        'Local RCU / WCU',
      ],
      results.costs.map((cost) => [
        cost.op,
        label(cost.variant),
        `${compact(cost.amazon.requests)} (${Object.entries(cost.amazon.byOperation)
          .map(([name, count]) => `${compact(count)} ${name}`)
          .join(', ')})`,
        n(cost.amazon.readUnits),
        n(cost.amazon.eventualReadUnits),
        n(cost.amazon.writeUnits),
        n(cost.amazon.indexWriteUnits),
        n(cost.amazon.items),
        n(cost.amazon.averageItemBytes, 0),
        n(cost.amazon.wireBytes / 1024),
        `${n(cost.reported.readCapacityUnits)} / ${n(cost.reported.writeCapacityUnits)}`,
      ]),
    ),
    '',
  );
  return out;
}

/** A deep page of a big partition against page 1. */
function renderScale(results: BenchResults): string[] {
  const { dataset } = results;
  const out: string[] = [];
  const scale = results.scale;
  if (scale) {
    out.push('## Scale', '');
    out.push(
      `One user partition of ${scale.orders} orders (largest table of this run: ${dataset.tableItems} items). The deep page was reached by walking the server's own cursors: ${scale.walk.requests} requests of 100 orders in ${n(scale.walk.seconds)} s (${n(scale.walk.dynamodbRequestsPerPage)} DynamoDB requests each), to the page after order ${scale.depth}. Same query as userOrders (20 orders with their products). Server RSS before: ${n(scale.rssBeforeMb, 0)} MB.`,
      '',
    );
    out.push(
      table(
        [
          'page',
          'c',
          'req/s',
          'p50 ms',
          'p95 ms',
          'p99 ms',
          'DDB req/op',
          'RCU Local',
          'CPU ms/req',
          'RSS MB',
          'peak RSS MB',
          'other load',
        ],
        scale.runs.map((run) => [
          run.page === 'first' ? 'page 1' : `after ${scale.depth}`,
          String(run.connections),
          n(run.requestsPerSecond, 0),
          n(run.latencyMs.p50),
          n(run.latencyMs.p95),
          n(run.latencyMs.p99),
          compact(run.dynamodb.requests),
          n(run.dynamodb.readCapacityUnits),
          n(run.cpuMsPerRequest, 2),
          n(run.rssMb, 0),
          n(run.peakRssMb, 0),
          `${n(run.backgroundCores, 2)}${run.backgroundCores > BUSY ? ' ⚠' : ''}`,
        ]),
      ),
      '',
    );
  }

  if (scale && scale.direct.length > 0) {
    out.push(
      'The same Query sent straight to DynamoDB Local from the benchmark (one at a time), to separate the emulator from the server:',
      '',
    );
    out.push(
      table(
        ['read (20 orders + 1)', 'p50 ms', 'p95 ms'],
        scale.direct.map((row) => [row.read, n(row.p50, 2), n(row.p95, 2)]),
      ),
      '',
    );
  }
  return out;
}

/** Where the time goes: single round trips and the experiments. */
function renderTimeSpent(results: BenchResults): string[] {
  const label = (key: string) => results.variants.find((v) => v.key === key)?.label ?? key;
  const out: string[] = [];
  const { roundTrips, rows } = results.experiments;
  if (roundTrips.length > 0 || rows.length > 0) {
    out.push('## Where the time goes', '');
    if (roundTrips.length > 0) {
      out.push('One DynamoDB call at a time from the benchmark process (keep-alive SDK client):', '');
      out.push(
        table(
          ['call', 'p50 ms', 'p95 ms', 'mean ms'],
          roundTrips.map((trip) => [trip.call, n(trip.p50, 2), n(trip.p95, 2), n(trip.mean, 2)]),
        ),
        '',
      );
    }
    if (rows.length > 0) {
      out.push(
        table(
          [
            'experiment',
            'variant',
            'operation',
            'c',
            'req/s',
            'p50 ms',
            'p95 ms',
            'CPU ms/req',
            'DynamoDB Local CPU ms/req',
            'response B',
            'other load',
          ],
          rows.map((row) => [
            row.experiment,
            label(row.variant),
            row.op,
            String(row.connections),
            n(row.result.requestsPerSecond, 0),
            n(row.result.latencyMs.p50, 2),
            n(row.result.latencyMs.p95, 2),
            n(row.result.cpuMsPerRequest, 2),
            n(row.result.dbCpuMsPerRequest, 2),
            n(row.result.responseBytes, 0),
            `${n(row.result.backgroundCores, 2)}${row.result.backgroundCores > BUSY ? ' ⚠' : ''}`,
          ]),
        ),
        '',
      );
    }
  }

  const profile = results.experiments.profile;
  if (profile) {
    out.push(
      'Time per request by layer, from V8’s sampling profiler (`--cpu-prof`, concurrency 1, self time; samples are wall-clock, so a syscall that is preempted on the busy 2 cores keeps counting):',
      '',
    );
    const ids = profile.operations.map((op) => op.id);
    out.push(
      table(
        ['layer', ...ids.map((id) => `${id} ms/req`)],
        [
          ...profile.layers
            .filter((row) => ids.some((id) => (row.msPerRequest[id] ?? 0) >= 0.01))
            .map((row) => [row.layer, ...ids.map((id) => n(row.msPerRequest[id], 2))]),
          ['**total**', ...profile.operations.map((op) => `**${n(op.msPerRequest, 2)}**`)],
        ],
        ['---', ...ids.map(() => '--:')],
      ),
      '',
    );
  }

  const micro = results.experiments.micro;
  if (micro.length > 0) {
    out.push(
      'Pieces of a request timed alone, in one process on the server’s own code (µs per call, no contention):',
      '',
    );
    out.push(
      table(
        ['piece', 'paid', 'µs'],
        micro.map((row) => [row.piece, row.perRequest, n(row.microseconds, 1)]),
        ['---', '---', '--:'],
      ),
      '',
    );
  }
  return out;
}

/** The operations and the fewest requests each needs. */
function renderOperations(results: BenchResults): string[] {
  const title = (id: string) => results.operations.find((op) => op.id === id)?.title ?? id;
  const out: string[] = [];
  if (results.operations.length > 0) {
    out.push('## Operations', '');
    out.push(
      table(
        ['id', 'what', 'fewest requests by level'],
        results.operations.map((op) => [op.id, title(op.id), `${op.levels.requests}: ${op.levels.why}`]),
      ),
      '',
    );
  }
  return out;
}

/** How to run it again. */
function renderReproduce(): string[] {
  const out: string[] = [];
  out.push(
    'Reproduce: `npm run bench` (flags and BENCH_* variables: `npm run bench -- --help`); `npm run bench:scale` runs only the scale test, on a partition of 100,000 orders.',
    '',
  );
  return out;
}

/** Renders a run's results as the markdown written to bench/results/latest.md and stdout. */
export function renderMarkdown(results: BenchResults): string {
  const sections = [
    renderIntro,
    renderTargets,
    renderAgainstRaw,
    renderResults,
    renderCost,
    renderScale,
    renderTimeSpent,
    renderOperations,
    renderReproduce,
  ];
  return sections.flatMap((section) => section(results)).join('\n');
}
