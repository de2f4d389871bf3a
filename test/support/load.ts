/**
 * A bounded request load for fault tests: a few clients, each sending one request at a time,
 * every request timed and classified. Tests await conditions on the samples (an event per
 * sample) instead of sleeping, and every wait has a deadline.
 */
import { waitUntil } from './waitUntil.js';

export interface GraphQLBody {
  data?: Record<string, any> | null;
  errors?: { message: string; path?: (string | number)[]; extensions?: Record<string, unknown> }[];
}

export interface CallResult {
  ms: number;
  /**
   * `ok`; `user:<CODE,...>` (a payload with userErrors); `error:<CODE,...>` (GraphQL errors);
   * `http:<status>` (no GraphQL body); `network` (no HTTP answer); `timeout` (no answer in time).
   */
  outcome: string;
  body?: GraphQLBody;
  failure?: string;
}

const codes = (list: readonly { extensions?: Record<string, unknown> | undefined; code?: unknown }[]) =>
  [...new Set(list.map((entry) => String(entry.extensions?.code ?? entry.code)))].sort().join(',');

/** What a response amounts to: see CallResult.outcome. */
export function classify(body: GraphQLBody): string {
  if (body.errors?.length) return `error:${codes(body.errors)}`;
  for (const value of Object.values(body.data ?? {})) {
    const userErrors = (value as { userErrors?: { code: string }[] } | null)?.userErrors;
    if (userErrors?.length) return `user:${codes(userErrors)}`;
  }
  return 'ok';
}

/** POSTs one GraphQL request; never throws (a failure is an outcome). */
export async function postGraphQL(
  url: string,
  authorization: string,
  query: string,
  variables: Record<string, unknown>,
  timeoutMs = 15_000,
): Promise<CallResult> {
  const started = performance.now();
  try {
    const response = await fetch(url, {
      method: 'POST',
      headers: { 'content-type': 'application/json', authorization },
      body: JSON.stringify({ query, variables }),
      signal: AbortSignal.timeout(timeoutMs),
    });
    const text = await response.text();
    const ms = performance.now() - started;
    let body: GraphQLBody;
    try {
      body = JSON.parse(text) as GraphQLBody;
    } catch {
      return { ms, outcome: `http:${response.status}`, failure: text.slice(0, 300) };
    }
    return { ms, outcome: classify(body), body };
  } catch (error) {
    const ms = performance.now() - started;
    const name = (error as Error).name;
    if (name === 'TimeoutError' || name === 'AbortError') return { ms, outcome: 'timeout', failure: String(error) };
    const cause = (error as { cause?: { code?: string; message?: string } }).cause;
    return { ms, outcome: 'network', failure: cause?.code ?? cause?.message ?? String(error) };
  }
}

export interface Sample<I> extends CallResult {
  client: number;
  seq: number;
  /** performance.now() when the request was sent and when its outcome was known. */
  startedAt: number;
  endedAt: number;
  kind: string;
  input: I;
}

export interface Planned<I> {
  kind: string;
  input: I;
  send(): Promise<CallResult>;
}

export interface LoadOptions<I> {
  clients: number;
  /** The bound: no client sends more than this many requests. */
  maxPerClient: number;
  plan(client: number, seq: number): Planned<I>;
  /** A client stops after a sample for which this is true (e.g. the server is gone). */
  stopClientAfter?(sample: Sample<I>): boolean;
}

export class Load<I> {
  readonly samples: Sample<I>[] = [];
  readonly finished: Promise<void>;
  private stopping = false;
  private readonly listeners = new Set<() => void>();

  constructor(private readonly options: LoadOptions<I>) {
    this.finished = Promise.all(Array.from({ length: options.clients }, (_, client) => this.client(client))).then(() =>
      this.notify(),
    );
  }

  private async client(client: number): Promise<void> {
    for (let seq = 0; seq < this.options.maxPerClient && !this.stopping; seq++) {
      const planned = this.options.plan(client, seq);
      const startedAt = performance.now();
      const result = await planned.send();
      const sample: Sample<I> = {
        ...result,
        client,
        seq,
        startedAt,
        endedAt: performance.now(),
        kind: planned.kind,
        input: planned.input,
      };
      this.samples.push(sample);
      this.notify();
      if (this.options.stopClientAfter?.(sample)) return;
    }
  }

  private notify(): void {
    for (const listener of this.listeners) listener();
  }

  /**
   * Resolves once `predicate` holds for the samples so far; rejects after `timeoutMs` or when
   * the load has ended without it holding.
   */
  until(predicate: (samples: Sample<I>[]) => boolean, description: string, timeoutMs = 15_000): Promise<void> {
    return new Promise((resolve, reject) => {
      let ended = false;
      const finish = (error?: Error) => {
        this.listeners.delete(check);
        clearTimeout(timer);
        if (error) reject(error);
        else resolve();
      };
      const check = () => {
        if (predicate(this.samples)) finish();
        else if (ended) finish(new Error(`the load ended before ${description} (${this.summary()})`));
      };
      const timer = setTimeout(
        () => finish(new Error(`no ${description} within ${timeoutMs} ms (${this.summary()})`)),
        timeoutMs,
      );
      this.listeners.add(check);
      void this.finished.then(() => {
        ended = true;
        if (this.listeners.has(check)) check();
      });
      check();
    });
  }

  /** Asks every client to stop after its current request and waits for them. */
  async stop(): Promise<void> {
    this.stopping = true;
    await this.finished;
  }

  /** Counts of outcomes, e.g. `ok: 40, error:SERVICE_UNAVAILABLE: 12`. */
  summary(samples: readonly { outcome: string }[] = this.samples): string {
    const counts = new Map<string, number>();
    for (const sample of samples) counts.set(sample.outcome, (counts.get(sample.outcome) ?? 0) + 1);
    return [...counts].map(([outcome, count]) => `${outcome}: ${count}`).join(', ') || 'no samples';
  }
}

/** The p-th percentile (0-100) of `values`, nearest rank. */
export function percentile(values: readonly number[], p: number): number {
  if (values.length === 0) return Number.NaN;
  const sorted = [...values].sort((a, b) => a - b);
  const rank = Math.min(sorted.length - 1, Math.max(0, Math.ceil((p / 100) * sorted.length) - 1));
  return sorted[rank] as number;
}

/**
 * `waitUntil` over a probe and a condition on its value: the value that met it and how long it
 * took, for callers that report it. Built on `waitUntil` (./waitUntil.ts), the one wait-or-timeout.
 */
export async function pollUntil<T>(
  probe: () => Promise<T>,
  done: (value: T) => boolean,
  { timeoutMs, intervalMs = 100, description }: { timeoutMs: number; intervalMs?: number; description: string },
): Promise<{ value: T; ms: number }> {
  const started = performance.now();
  const { value } = await waitUntil(
    async () => {
      const value = await probe();
      return done(value) && { value };
    },
    { timeoutMs, intervalMs, what: description },
  );
  return { value, ms: performance.now() - started };
}
