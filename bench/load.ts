/**
 * One load run: autocannon against one system, one operation, one concurrency. Latency is
 * recorded per response (exact percentiles, not autocannon's coarse histogram); every response
 * is checked (HTTP 200, no `errors`, no `userErrors`) and its extensions.cost.dynamodb is
 * averaged. CPU and memory of the system's process (and of DynamoDB Local) come from /proc.
 */
import autocannon from 'autocannon';
import type { AutocannonRequest } from 'autocannon';
import { backgroundMeter, cpuMs, memoryMb } from './procs.js';

export interface LoadTarget {
  url: string;
  pid: number;
}

export interface LoadSpec {
  target: LoadTarget;
  /** DynamoDB Local's pid, to charge its CPU to the run. */
  dbPid: number;
  operationName: string;
  query: string;
  variables: () => Record<string, unknown>;
  connections: number;
  seconds: number;
  headers: Record<string, string>;
}

export interface Percentiles {
  p50: number;
  p95: number;
  p99: number;
  mean: number;
}

export interface LoadResult {
  connections: number;
  seconds: number;
  /** Good responses (200, no errors). */
  requests: number;
  failures: number;
  failureSample: string | undefined;
  requestsPerSecond: number;
  latencyMs: Percentiles;
  /** Averages of extensions.cost.dynamodb over the good responses. */
  dynamodb: {
    requests: number;
    requestsMin: number;
    requestsMax: number;
    readCapacityUnits: number;
    writeCapacityUnits: number;
  };
  responseBytes: number;
  /** CPU of the system's process per good response, ms. */
  cpuMsPerRequest: number;
  /** CPU of DynamoDB Local per good response, ms. */
  dbCpuMsPerRequest: number;
  /** CPU share of the system's process over the run (1 = one core). */
  cpuCores: number;
  rssMb: number;
  peakRssMb: number;
  /** CPU used meanwhile by other processes on the machine, in cores (0 on a quiet machine). */
  backgroundCores: number;
}

export function percentiles(values: number[]): Percentiles {
  if (values.length === 0) return { p50: NaN, p95: NaN, p99: NaN, mean: NaN };
  const sorted = [...values].sort((a, b) => a - b);
  const at = (p: number) =>
    sorted[Math.min(sorted.length - 1, Math.max(0, Math.ceil((p / 100) * sorted.length) - 1))] as number;
  return { p50: at(50), p95: at(95), p99: at(99), mean: sorted.reduce((a, b) => a + b, 0) / sorted.length };
}

interface CostLike {
  errors?: { message?: string }[];
  data?: { placeOrder?: { userErrors?: { message?: string }[] } } | null;
  extensions?: { cost?: { dynamodb?: { requests: number; readCapacityUnits: number; writeCapacityUnits: number } } };
}

/** Runs unmeasured load (warm-up): same requests, nothing recorded. */
export async function warmUp(spec: LoadSpec): Promise<void> {
  if (spec.seconds <= 0) return;
  await autocannon({
    url: spec.target.url,
    connections: spec.connections,
    duration: spec.seconds,
    timeout: 30,
    requests: [requestOf(spec)],
  });
}

function requestOf(spec: LoadSpec, onResponse?: AutocannonRequest['onResponse']): AutocannonRequest {
  return {
    method: 'POST',
    headers: { 'content-type': 'application/json', ...spec.headers },
    setupRequest: (request) => ({
      ...request,
      body: JSON.stringify({ operationName: spec.operationName, query: spec.query, variables: spec.variables() }),
    }),
    ...(onResponse ? { onResponse } : {}),
  };
}

export async function runLoad(spec: LoadSpec): Promise<LoadResult> {
  const latencies: number[] = [];
  let good = 0;
  let failures = 0;
  let failureSample: string | undefined;
  let bytes = 0;
  const cost = { requests: 0, min: Infinity, max: 0, rcu: 0, wcu: 0 };
  const fail = (why: string) => {
    failures += 1;
    failureSample ??= why.slice(0, 400);
  };
  // autocannon calls onResponse, then emits 'response' with the latency, synchronously.
  let lastGood = false;
  const onResponse: AutocannonRequest['onResponse'] = (status, body) => {
    lastGood = false;
    if (status !== 200) return fail(`HTTP ${status}: ${body}`);
    let parsed: CostLike;
    try {
      parsed = JSON.parse(body) as CostLike;
    } catch {
      return fail(`not JSON: ${body}`);
    }
    if (parsed.errors?.length) return fail(`errors: ${JSON.stringify(parsed.errors)}`);
    if (parsed.data?.placeOrder?.userErrors?.length)
      return fail(`userErrors: ${JSON.stringify(parsed.data.placeOrder.userErrors)}`);
    const dynamodb = parsed.extensions?.cost?.dynamodb;
    lastGood = true;
    good += 1;
    bytes += body.length;
    if (dynamodb) {
      cost.requests += dynamodb.requests;
      cost.min = Math.min(cost.min, dynamodb.requests);
      cost.max = Math.max(cost.max, dynamodb.requests);
      cost.rcu += dynamodb.readCapacityUnits;
      cost.wcu += dynamodb.writeCapacityUnits;
    }
  };

  const background = backgroundMeter(() => [spec.target.pid, spec.dbPid, process.pid]);
  const cpuBefore = cpuMs(spec.target.pid);
  const dbBefore = cpuMs(spec.dbPid);
  const started = performance.now();
  const instance = autocannon({
    url: spec.target.url,
    connections: spec.connections,
    duration: spec.seconds,
    timeout: 30,
    requests: [requestOf(spec, onResponse)],
  });
  instance.on('response', (_client: unknown, statusCode: number, _bytes: number, responseTime: number) => {
    if (statusCode === 200 && lastGood) latencies.push(responseTime);
  });
  const result = await instance;
  const elapsed = result.duration || (performance.now() - started) / 1000;
  const cpu = cpuMs(spec.target.pid) - cpuBefore;
  const dbCpu = cpuMs(spec.dbPid) - dbBefore;
  const memory = memoryMb(spec.target.pid);
  const backgroundCores = background();
  failures += result.errors + result.timeouts;
  const n = Math.max(good, 1);
  return {
    connections: spec.connections,
    seconds: elapsed,
    requests: good,
    failures,
    failureSample,
    requestsPerSecond: good / elapsed,
    latencyMs: percentiles(latencies),
    dynamodb: {
      requests: cost.requests / n,
      requestsMin: Number.isFinite(cost.min) ? cost.min : 0,
      requestsMax: cost.max,
      readCapacityUnits: cost.rcu / n,
      writeCapacityUnits: cost.wcu / n,
    },
    responseBytes: bytes / n,
    cpuMsPerRequest: cpu / n,
    dbCpuMsPerRequest: dbCpu / n,
    cpuCores: cpu / 1000 / elapsed,
    rssMb: memory.rss,
    peakRssMb: memory.peak,
    backgroundCores,
  };
}

/** Other processes using more than this many cores during a run make its figures suspect. */
export const BUSY_CORES = 0.25;

/**
 * runLoad, repeated (up to `retries` times, after `settle`) while other processes on the
 * machine used more than BUSY_CORES during the run: on a shared machine this keeps another
 * job's burst out of the table. The last attempt is kept either way; `attempts` says how many.
 */
export async function runLoadWhenQuiet(
  spec: LoadSpec,
  settle: () => Promise<void>,
  retries = 2,
): Promise<LoadResult & { attempts: number }> {
  let result = await runLoad(spec);
  let attempts = 1;
  while (result.backgroundCores > BUSY_CORES && attempts <= retries) {
    await settle();
    result = await runLoad(spec);
    attempts += 1;
  }
  return { ...result, attempts };
}

/** One request outside any load run (cost pass, walking a partition). */
export async function postGraphQL<T = unknown>(
  url: string,
  headers: Record<string, string>,
  operationName: string,
  query: string,
  variables: Record<string, unknown>,
): Promise<T> {
  const response = await fetch(url, {
    method: 'POST',
    headers: { 'content-type': 'application/json', ...headers },
    body: JSON.stringify({ operationName, query, variables }),
  });
  const text = await response.text();
  if (!response.ok) throw new Error(`${operationName}: HTTP ${response.status}: ${text.slice(0, 500)}`);
  const body = JSON.parse(text) as T & { errors?: unknown[] };
  if (body.errors?.length) throw new Error(`${operationName}: ${JSON.stringify(body.errors).slice(0, 500)}`);
  return body;
}
