/**
 * The documents this server trusts: its own manifest (client/generated/persisted-documents.json)
 * and every active app manifest of the registry in the table (src/db/documentRegistry.ts),
 * kept fresh by polling the registry's head. Admission, Apollo's persisted queries, the CSRF
 * rule and the metric labels all look documents up here, by sha256 hex or by a client's own
 * id (Relay's md5), so a newly published manifest is admitted everywhere at once, without a
 * restart.
 */
import type { Logger } from 'pino';
import { loadActiveDocuments, readRegistryHead } from '../db/documentRegistry.js';
import type { RegistryOptions, TrustedDocument } from '../db/documentRegistry.js';

/** What admission and the persisted-queries cache need: a document's text by its id. */
export interface DocumentLookup {
  /** The text of the document with this id (sha256 hex or a registered id), if trusted. */
  get(id: string): string | undefined;
  has(id: string): boolean;
}

export class TrustedDocuments implements DocumentLookup {
  private byHash = new Map<string, string>();
  private aliases = new Map<string, string>();
  /** The registry revision the current set was read at (-1: not read yet). */
  revision = -1;

  /** `own`: the server's manifest (sha256 hex -> document), trusted whatever the registry holds. */
  constructor(readonly own: ReadonlyMap<string, string> = new Map()) {
    this.replace([], -1);
  }

  get(id: string): string | undefined {
    return this.byHash.get(id) ?? this.byHash.get(this.aliases.get(id) ?? '');
  }

  has(id: string): boolean {
    return this.get(id) !== undefined;
  }

  /** The sha256 of a trusted document's text, for an id of any kind. */
  sha256Of(id: string): string | undefined {
    return this.byHash.has(id) ? id : this.aliases.get(id);
  }

  get size(): number {
    return this.byHash.size;
  }

  /** The document texts (for the operation names metrics may use as labels). */
  texts(): IterableIterator<string> {
    return this.byHash.values();
  }

  /** Swaps in the registry's documents (the server's own stay). */
  replace(documents: readonly TrustedDocument[], revision: number): void {
    const byHash = new Map(this.own);
    const aliases = new Map<string, string>();
    for (const { id, sha256, document } of documents) {
      byHash.set(sha256, document);
      if (id !== sha256) aliases.set(id, sha256);
    }
    this.byHash = byHash;
    this.aliases = aliases;
    this.revision = revision;
  }
}

export interface RegistryPollerOptions extends RegistryOptions {
  documents: TrustedDocuments;
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
