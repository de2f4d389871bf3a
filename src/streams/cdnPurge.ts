/**
 * The CDN purge hook (CDN_PURGE_URL): the public dependency tags of every change read from the
 * stream are POSTed as `{"tags":[...]}` to a URL that purges a CDN by tag (a small adapter in
 * front of Cloudflare's, Fastly's or Akamai's purge API, or the API itself when it accepts that
 * body). The process that reads the stream sends it, once per change, whichever instance or
 * script made the change (docs/caching.md).
 *
 * It never holds up the stream: `purge` only queues. Tags queued within `batchMs` go in one POST
 * (at most `maxTagsPerPost` tags; a larger set goes in several), one POST at a time. A POST that
 * fails (network error, timeout, a status outside 2xx) is retried `maxAttempts` times in all with
 * a doubling delay, then its tags are given up and counted. The queue is bounded too: tags past
 * `maxQueuedTags` are dropped and counted. Whatever is given up stays in the CDN until its
 * max-age (CACHE_MAX_AGE), which bounds a missed purge. The counts are metrics
 * (cdnPurgeMetrics.ts) wherever the purger runs, and a warning at most once a minute.
 *
 * Credentials travel in headers (CDN_PURGE_HEADERS, a secret), never in the URL.
 */
import type { Logger } from 'pino';
import { isPublicTag } from '../table/dependencies.js';

export interface CdnPurgeOptions {
  url: string;
  /** Sent with every POST: the purge API's credentials (CDN_PURGE_HEADERS). */
  headers?: Readonly<Record<string, string>> | undefined;
  log: Pick<Logger, 'warn' | 'debug'>;
  /** How long tags gather before a POST. */
  batchMs?: number;
  maxTagsPerPost?: number;
  /** Attempts of one POST, the first included. */
  maxAttempts?: number;
  /** Delay before the first retry; each next one doubles. */
  retryDelayMs?: number;
  /** How long one POST may take. */
  timeoutMs?: number;
  maxQueuedTags?: number;
}

export interface CdnPurgeStats {
  /** POSTs answered with 2xx. */
  posts: number;
  /** Tags in those POSTs. */
  purgedTags: number;
  /** Attempts that failed (each retry counts). */
  failedAttempts: number;
  /** Tags given up after the last attempt, or dropped from a full queue. */
  lostTags: number;
}

export class CdnPurger {
  readonly stats: CdnPurgeStats = { posts: 0, purgedTags: 0, failedAttempts: 0, lostTags: 0 };
  private readonly queued = new Set<string>();
  private timer: NodeJS.Timeout | undefined;
  private sending: Promise<void> | undefined;
  private closed = false;
  private readonly batchMs: number;
  private readonly maxTagsPerPost: number;
  private readonly maxAttempts: number;
  private readonly retryDelayMs: number;
  private readonly timeoutMs: number;
  private readonly maxQueuedTags: number;
  private lastWarning = -Infinity;

  constructor(private readonly options: CdnPurgeOptions) {
    this.batchMs = options.batchMs ?? 100;
    this.maxTagsPerPost = options.maxTagsPerPost ?? 500;
    this.maxAttempts = options.maxAttempts ?? 5;
    this.retryDelayMs = options.retryDelayMs ?? 250;
    this.timeoutMs = options.timeoutMs ?? 5000;
    this.maxQueuedTags = options.maxQueuedTags ?? 50_000;
  }

  /** Queues the public ones among `tags` (returns at once). */
  purge(tags: Iterable<string>): void {
    if (this.closed) return;
    for (const tag of tags) {
      if (!isPublicTag(tag) || this.queued.has(tag)) continue;
      if (this.queued.size >= this.maxQueuedTags) {
        this.stats.lostTags++;
        this.warn('CDN purge queue full: tags dropped (the CDN keeps them until their max-age)');
        continue;
      }
      this.queued.add(tag);
    }
    if (this.queued.size > 0 && !this.timer && !this.sending) {
      this.timer = setTimeout(() => this.send(), this.batchMs);
    }
  }

  /** Tags waiting for a POST. */
  get queuedTags(): number {
    return this.queued.size;
  }

  /** Sends what is queued now and waits for every POST under way (the stream Lambda, before it returns). */
  async drain(): Promise<void> {
    while (this.sending || this.queued.size > 0) {
      clearTimeout(this.timer);
      if (!this.sending) this.send();
      await this.sending;
    }
  }

  /** Sends what is queued (bounded by the retries), then takes no more. */
  async close(): Promise<void> {
    await this.drain();
    this.closed = true;
  }

  private send(): void {
    clearTimeout(this.timer);
    this.timer = undefined;
    this.sending = (async () => {
      while (this.queued.size > 0) {
        const batch = [...this.queued].slice(0, this.maxTagsPerPost);
        for (const tag of batch) this.queued.delete(tag);
        await this.post(batch);
      }
    })().finally(() => {
      this.sending = undefined;
      // Tags queued while the last POST was under way.
      if (this.queued.size > 0 && !this.timer) this.timer = setTimeout(() => this.send(), this.batchMs);
    });
  }

  private async post(tags: string[]): Promise<void> {
    const body = JSON.stringify({ tags });
    for (let attempt = 1; attempt <= this.maxAttempts; attempt++) {
      try {
        const response = await fetch(this.options.url, {
          method: 'POST',
          headers: { ...this.options.headers, 'content-type': 'application/json' },
          body,
          signal: AbortSignal.timeout(this.timeoutMs),
        });
        await response.arrayBuffer().catch(() => undefined);
        if (response.ok) {
          this.stats.posts++;
          this.stats.purgedTags += tags.length;
          return;
        }
        this.options.log.debug({ status: response.status, attempt }, 'CDN purge refused');
      } catch (error) {
        this.options.log.debug({ err: error, attempt }, 'CDN purge failed');
      }
      this.stats.failedAttempts++;
      if (attempt < this.maxAttempts) {
        await new Promise((resolve) => setTimeout(resolve, this.retryDelayMs * 2 ** (attempt - 1)));
      }
    }
    this.stats.lostTags += tags.length;
    this.warn('CDN purge given up after its retries (the CDN keeps those tags until their max-age)');
  }

  /** At most one warning a minute: a CDN that is down must not flood the log. */
  private warn(message: string): void {
    const now = performance.now();
    if (now - this.lastWarning < 60_000) return;
    this.lastWarning = now;
    // The origin only: a purge URL may carry a token.
    this.options.log.warn({ purgeOrigin: new URL(this.options.url).origin, stats: { ...this.stats } }, message);
  }
}

/** The purger a stream-reading process runs when CDN_PURGE_URL is set (undefined otherwise). */
export function cdnPurgerFrom(
  config: { cdnPurgeUrl: string | undefined; cdnPurgeHeaders: Readonly<Record<string, string>> },
  log: CdnPurgeOptions['log'],
): CdnPurger | undefined {
  return config.cdnPurgeUrl
    ? new CdnPurger({ url: config.cdnPurgeUrl, headers: config.cdnPurgeHeaders, log })
    : undefined;
}
