/**
 * The documents this server trusts: its own manifest (client/generated/persisted-documents.json)
 * and every active app manifest of the registry in the table (src/db/documentRegistry.ts),
 * kept fresh by polling the registry's head. A server holds every text; the Lambda holds the
 * registry's index and reads a text when a request names it (`ensure`), in a bounded cache.
 * Admission, Apollo's persisted queries, the CSRF rule and the metric labels all look documents
 * up here, by sha256 hex or by a client's own id (Relay's md5), so a newly published manifest is
 * admitted everywhere at once, without a restart.
 */
import { createHash } from 'node:crypto';
import { LRUCache } from 'lru-cache';
import type { Logger } from 'pino';
import { loadActiveDocuments, loadActiveIndex, readDocumentText, readRegistryHead } from '../../db/documentRegistry.js';
import type { IndexEntry, RegistryOptions, TrustedDocument } from '../../db/documentRegistry.js';

/** The sha256 hex of a document's text: the id every trusted document is known by. */
export const sha256 = (text: string): string => createHash('sha256').update(text).digest('hex');

/** What admission and the persisted-queries cache need: a document's text by its id. */
export interface DocumentLookup {
  /** The text of the document with this id (sha256 hex or a registered id), if trusted. */
  get(id: string): string | undefined;
  has(id: string): boolean;
  /** The sha256 of a trusted document's text, for an id of any kind (undefined: not trusted). */
  sha256Of?(id: string): string | undefined;
}

/** Reads the text of an indexed document from the registry (readDocumentText). */
export type FetchDocument = (partition: string, sha256: string) => Promise<string | undefined>;

/**
 * Texts of indexed documents read on demand, kept at most: a request names one document, and a
 * function that serves a few apps asks for the same few again and again.
 */
const FETCHED_MAX_BYTES = 4 * 2 ** 20;

export class TrustedDocuments implements DocumentLookup {
  /** The texts at hand: the server's own, and the registry's (all of them, or those of unindexed manifests). */
  private byHash = new Map<string, string>();
  private aliases = new Map<string, string>();
  /** Trusted documents whose text is read when a request names one (`ensure`), by sha256: their partition. */
  private indexed = new Map<string, string>();
  private readonly fetched = new LRUCache<string, string>({
    max: 1000,
    maxSize: FETCHED_MAX_BYTES,
    sizeCalculation: (text) => Math.max(1, text.length),
  });
  private fetch: FetchDocument | undefined;
  /** The registry revision the current set was read at (-1: not read yet). */
  revision = -1;

  /** `own`: the server's manifest (sha256 hex -> document), trusted whatever the registry holds. */
  constructor(readonly own: ReadonlyMap<string, string> = new Map()) {
    this.replace([], -1);
  }

  /** The text of a trusted document; for an indexed one, only once `ensure` has read it. */
  get(id: string): string | undefined {
    const sha256 = this.sha256Of(id);
    return sha256 === undefined ? undefined : (this.byHash.get(sha256) ?? this.fetched.get(sha256));
  }

  has(id: string): boolean {
    const sha256 = this.sha256Of(id);
    return sha256 !== undefined && (this.byHash.has(sha256) || this.indexed.has(sha256));
  }

  /** The sha256 of a trusted document's text, for an id of any kind. */
  sha256Of(id: string): string | undefined {
    return this.byHash.has(id) || this.indexed.has(id) ? id : this.aliases.get(id);
  }

  get size(): number {
    return this.byHash.size + this.indexed.size;
  }

  /**
   * Reads the text of the indexed document `id` names, unless it is at hand already: a request
   * for a document by id waits for this before admission looks it up. Nothing happens for an id
   * nobody trusts, so an unknown id costs no read. A text whose sha256 is not the one indexed is
   * not kept. Rejects when the registry cannot be read.
   */
  async ensure(id: string): Promise<void> {
    const hash = this.sha256Of(id);
    if (hash === undefined || this.byHash.has(hash) || this.fetched.has(hash)) return;
    const partition = this.indexed.get(hash);
    if (partition === undefined || !this.fetch) return;
    const text = await this.fetch(partition, hash);
    if (text !== undefined && sha256(text) === hash) {
      this.fetched.set(hash, text);
    }
  }

  /** The document texts (for the operation names metrics may use as labels). */
  texts(): IterableIterator<string> {
    return this.byHash.values();
  }

  /** Swaps in the registry's documents (the server's own stay). */
  replace(documents: readonly TrustedDocument[], revision: number): void {
    this.replaceIndex([], documents, revision, undefined);
  }

  /**
   * Swaps in the registry's index: `entries` trusted, their texts read by `fetch` when asked for
   * (`ensure`), and `documents` whose texts are at hand (the server's own stay).
   */
  replaceIndex(
    entries: readonly IndexEntry[],
    documents: readonly TrustedDocument[],
    revision: number,
    fetch: FetchDocument | undefined,
  ): void {
    const byHash = new Map(this.own);
    const aliases = new Map<string, string>();
    const indexed = new Map<string, string>();
    for (const { id, sha256, document } of documents) {
      byHash.set(sha256, document);
      if (id !== sha256) aliases.set(id, sha256);
    }
    for (const { id, sha256, partition } of entries) {
      if (!byHash.has(sha256)) indexed.set(sha256, partition);
      if (id !== sha256) aliases.set(id, sha256);
    }
    this.byHash = byHash;
    this.aliases = aliases;
    this.indexed = indexed;
    // A retired manifest's texts must not outlive it.
    this.fetched.clear();
    this.fetch = fetch;
    this.revision = revision;
  }
}

export interface RegistryPollerOptions extends RegistryOptions {
  documents: TrustedDocuments;
  /**
   * `all` reads every document's text at each reload (a server, which may be asked for any);
   * `index` reads each manifest's index and a text when a request names it (the Lambda, whose
   * cold starts would otherwise read the whole registry). Default `all`.
   */
  load?: 'all' | 'index';
  /** How often the registry head is read; a change is served within about this long. */
  intervalMs: number;
  log: Pick<Logger, 'warn' | 'info'>;
  /** Called after every reload (metric labels follow the set). */
  onReload?: () => void;
}

/**
 * Polls the registry head and reloads the documents when its revision moved. A failed poll
 * keeps the last set (logged): a DynamoDB hiccup never empties the trusted documents.
 */
export function startRegistryPoller(options: RegistryPollerOptions) {
  const { documents, intervalMs, log } = options;
  let timer: NodeJS.Timeout | undefined;
  let running: Promise<void> | undefined;
  let stopped = false;
  let checkedAt = 0;

  async function refresh(): Promise<void> {
    const { revision } = await readRegistryHead(options);
    checkedAt = Date.now();
    if (revision === documents.revision) return;
    if (options.load === 'index') {
      const loaded = await loadActiveIndex(options);
      documents.replaceIndex(loaded.entries, loaded.documents, loaded.revision, (partition, sha256) =>
        readDocumentText(options, partition, sha256),
      );
      options.onReload?.();
      log.info({ revision: loaded.revision, documents: loaded.entries.length }, 'trusted documents index reloaded');
      return;
    }
    const loaded = await loadActiveDocuments(options);
    documents.replace(loaded.documents, loaded.revision);
    options.onReload?.();
    log.info({ revision: loaded.revision, documents: loaded.documents.length }, 'trusted documents reloaded');
  }

  /** One refresh at a time; callers share the one in flight. */
  const refreshOnce = (): Promise<void> =>
    (running ??= refresh()
      .catch((error: unknown) =>
        log.warn({ err: error }, 'trusted documents: registry read failed, keeping the last set'),
      )
      .finally(() => (running = undefined)));

  const schedule = () => {
    if (stopped) return;
    timer = setTimeout(() => void refreshOnce().then(schedule), intervalMs);
    timer.unref();
  };

  return {
    /** Reads the registry once, then keeps polling. */
    async start(): Promise<void> {
      await refreshOnce();
      schedule();
    },
    refresh: refreshOnce,
    /** Where no timer runs between requests (Lambda): refreshes first when the last check is older than the interval. */
    async freshen(): Promise<void> {
      if (Date.now() - checkedAt >= intervalMs) await refreshOnce();
    },
    async stop(): Promise<void> {
      stopped = true;
      clearTimeout(timer);
      await running;
    },
  };
}

export type RegistryPoller = ReturnType<typeof startRegistryPoller>;
