/**
 * Why a fail-over of the soak took as long as it did, from the consumers' own logs (each is a
 * child process logging JSON lines at debug level): the holder's stop (`stopping`, `stream
 * consumer stopped`, `stream shard lease released`) or the expiry of its last renewal, each
 * other consumer's heartbeats (`stream lease round`: when it looked at the lease table, what the
 * lease said, how long its writes took), the faults injected into each process meanwhile, and the
 * successor's `stream shard lease taken`.
 *
 * A fail-over splits into three parts that add up to its total:
 * - **free**: from the signal until the lease was free for another consumer: released by a
 *   stopping holder (the release write answered), or expired (its last renewal's expiry);
 * - **noticed**: from then until the successor's first look at the lease table (the lease list
 *   read back in a heartbeat) that found it free;
 * - **taken**: from that look until the successor logged the lease taken (its conditional write).
 */
import type { LogLine } from '../support/serverProcess.js';

export interface FailoverRecord {
  kind: string;
  /** When the holder was signalled. */
  at: number;
  /** When the successor logged the lease taken (the monitor's time when it did not). */
  takenAt: number;
  holder: { owner: string; logs: readonly LogLine[] };
  /** Every other consumer started so far, with its logs. */
  others: readonly { owner: string; logs: readonly LogLine[] }[];
  successor: string | undefined;
}

export interface FailoverParts {
  kind: string;
  ms: number;
  free: number | undefined;
  noticed: number | undefined;
  taken: number | undefined;
  /** The timeline, one step a line, times from the signal. */
  lines: string[];
}

interface Round {
  owner: string;
  why?: string;
  at: number;
  listedAt?: number;
  sinceLastMs?: number;
  skippedTicks: number;
  announceMs?: number;
  leases: { shardId: string; owner?: string; expiresAt: number }[];
  takes: { shardId: string; sentAt: number; ms: number; outcome: string }[];
  renewed: { shardId: string; ms: number; ok: boolean; expiresAt?: number }[];
  ms: number;
}

const rounds = (owner: string, logs: readonly LogLine[]): Round[] =>
  logs.filter((line) => line.msg === 'stream lease round').map((line) => ({ ...(line as unknown as Round), owner }));

const faultsIn = (logs: readonly LogLine[], from: number, to: number): string[] =>
  logs
    .filter((line) => line.msg === 'fault injected' && (line.time as number) >= from && (line.time as number) <= to)
    .map(
      (line) =>
        `${String(line.kind)} ${typeof line.command === 'string' ? line.command : ''}@${(line.time as number) - from}`,
    );

const short = (owner: string | undefined) => (owner ? owner.split(':').slice(1).join(':') : '-');

export function explainFailover(record: FailoverRecord, ttlMs: number): FailoverParts {
  const { at, takenAt, holder } = record;
  const rel = (t: number | undefined) => (t === undefined ? '?' : `+${t - at}`);
  const lines: string[] = [];
  const window = (line: LogLine) => (line.time as number) >= at - ttlMs && (line.time as number) <= takenAt + 100;

  // When the lease was free: released by the holder, else the expiry of its last renewal.
  let freeAt: number | undefined;
  // This stop's lines only (the same consumer may be stopped in a later round).
  const ofThisStop = (line: LogLine, slackMs: number) =>
    (line.time as number) >= at && (line.time as number) <= takenAt + slackMs;
  const stopping = holder.logs.find((line) => line.msg === 'stopping' && ofThisStop(line, 0));
  const stopped =
    stopping && holder.logs.find((line) => line.msg === 'stream consumer stopped' && ofThisStop(line, 20_000));
  const released =
    stopping &&
    holder.logs.find(
      (line) => line.msg === 'stream shard lease released' && ofThisStop(line, 0) && line.released === true,
    );
  if (stopping) lines.push(`holder ${short(holder.owner)}: stopping ${rel(stopping.time as number)}`);
  if (stopped) {
    const s = stopped as unknown as {
      at: number;
      readingMs: number;
      pagesMs: number;
      checkpointsMs: number;
      releasedMs?: number;
      drainedInTime?: boolean;
      ms: number;
    };
    const release =
      s.releasedMs === undefined
        ? ''
        : `release begun ${rel(s.at + s.releasedMs)} (${s.drainedInTime ? 'drained by then' : 'not drained by then'}), `;
    lines.push(
      `  reading stopped ${rel(s.at + s.readingMs)}, pages settled ${rel(s.at + s.pagesMs)}, ` +
        `checkpoints settled ${rel(s.at + s.checkpointsMs)}, ${release}stop done ${rel(s.at + s.ms)}` +
        ` (faults: ${faultsIn(holder.logs, at, s.at + s.ms).join(', ') || 'none'})`,
    );
  }
  if (released) {
    freeAt = (released.sentAt as number) + (released.ms as number);
    lines.push(`  lease released: write sent ${rel(released.sentAt as number)}, answered ${rel(freeAt)}`);
  }
  // The holder's own last renewal before the signal, and any lease list read by the others.
  const holderRounds = rounds(holder.owner, holder.logs).filter((r) => r.at <= at);
  const lastRenewal = holderRounds
    .flatMap((r) => r.renewed.filter((x) => x.ok).map((x) => ({ ...x, at: r.at })))
    .at(-1);
  const expiresAt =
    lastRenewal?.expiresAt ??
    Math.max(
      0,
      ...record.others.flatMap((o) =>
        rounds(o.owner, o.logs)
          .filter((r) => r.listedAt !== undefined && r.listedAt <= takenAt)
          .flatMap((r) => r.leases.filter((l) => l.owner === holder.owner).map((l) => l.expiresAt)),
      ),
    );
  if (lastRenewal) lines.push(`holder's last renewal at ${rel(lastRenewal.at)}: expires ${rel(expiresAt)}`);
  if (freeAt === undefined && expiresAt > 0) freeAt = expiresAt;
  // A lease already expired at the signal (its holder had missed its renewals) was free from then.
  if (freeAt !== undefined) freeAt = Math.max(at, freeAt);

  // Each other consumer's heartbeats in the window.
  let noticedAt: number | undefined;
  for (const other of record.others) {
    const seen = rounds(other.owner, other.logs).filter((r) => r.at >= at - ttlMs / 3 && r.at <= takenAt + 50);
    if (seen.length === 0) continue;
    lines.push(`consumer ${short(other.owner)}${other.owner === record.successor ? ' (successor)' : ''}:`);
    for (const r of seen) {
      const lease = r.leases[0];
      const what = lease
        ? lease.owner === undefined || lease.expiresAt < (r.listedAt ?? r.at)
          ? 'free'
          : `held by ${short(lease.owner)} until ${rel(lease.expiresAt)}`
        : 'no lease read';
      const takes = r.takes.map((t) => `${t.outcome} (write sent ${rel(t.sentAt)}, ${t.ms} ms)`).join(', ');
      lines.push(
        `  ${r.why === 'expiry' ? 'look after expiry' : 'round'} ${rel(r.at)} (${r.sinceLastMs ?? '-'} ms after the last, ${r.skippedTicks} ticks skipped; ` +
          `announce ${r.announceMs ?? '?'} ms) listed ${rel(r.listedAt)}: ${what}${takes ? `; ${takes}` : ''}` +
          `; done ${rel(r.at + r.ms)}` +
          (faultsIn(other.logs, r.at, r.at + r.ms).length > 0
            ? ` faults: ${faultsIn(other.logs, r.at, r.at + r.ms).join(', ')}`
            : ''),
      );
      if (
        other.owner === record.successor &&
        noticedAt === undefined &&
        r.listedAt !== undefined &&
        lease &&
        (lease.owner === undefined || lease.expiresAt < r.listedAt) &&
        r.listedAt >= (freeAt ?? at)
      ) {
        noticedAt = r.listedAt;
      }
    }
    const starts = other.logs.filter((line) => line.msg === 'stream consumer started' && window(line));
    for (const line of starts) lines.push(`  started ${rel(line.time as number)}`);
  }
  lines.push(`lease taken ${rel(takenAt)}`);
  const part = (from: number | undefined, to: number | undefined) =>
    from === undefined || to === undefined ? undefined : Math.max(0, to - from);
  return {
    kind: record.kind,
    ms: takenAt - at,
    free: part(at, freeAt),
    noticed: part(freeAt, noticedAt),
    taken: part(noticedAt, takenAt),
    lines,
  };
}

const percentile = (values: number[], p: number) => {
  const sorted = [...values].sort((a, b) => a - b);
  return sorted[Math.min(sorted.length - 1, Math.ceil((p / 100) * sorted.length) - 1)] ?? 0;
};

/** p50/p99/max per kind of the total and of each part. */
export function failoverDistribution(parts: readonly FailoverParts[]): Record<string, Record<string, string>> {
  const kinds = [...new Set(parts.map((p) => p.kind))].sort();
  return Object.fromEntries(
    kinds.map((kind) => {
      const ofKind = parts.filter((p) => p.kind === kind);
      const stats = (pick: (p: FailoverParts) => number | undefined) => {
        const values = ofKind.map(pick).filter((v): v is number => v !== undefined);
        return values.length === 0 ? '-' : `${percentile(values, 50)}/${percentile(values, 99)}/${Math.max(...values)}`;
      };
      return [
        `${kind} (${ofKind.length})`,
        {
          'total p50/p99/max': stats((p) => p.ms),
          free: stats((p) => p.free),
          noticed: stats((p) => p.noticed),
          taken: stats((p) => p.taken),
        },
      ];
    }),
  );
}
