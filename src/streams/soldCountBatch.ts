/**
 * The soldCount changes of a whole page of stream records, written in as few transactions as
 * fit (soldCount.ts says what each line writes and why it is idempotent). One transaction per
 * order made a page of twenty orders wait for twenty round trips; here its lines share one
 * TransactWriteItems of up to 100 actions: each line's sale marker, each product's soldCount
 * change summed over the page's lines, each buyer record's change, and the lease's fence.
 *
 * - Lines are packed in record order. A transaction may name an item once, so a line whose
 *   marker is already in the transaction (the same order placed and cancelled in one page),
 *   or whose buyer record is (unless both lines only add to it), starts the next transaction:
 *   the two changes of one marker are written in their stream order.
 * - The transactions run one after the other, each under the fence. A sale is applied once
 *   every line of it has settled (`onApplied`), and only then may its event go out.
 * - A line already applied (a redelivery after a crash or a hand-over) fails its marker's
 *   condition; the transaction is sent again without it (soldCount.ts's settleLines), so it
 *   is never counted twice. A product gone settles its lines as missing.
 * - Anything else that refuses a transaction (conflicts past their retries, a throttled or
 *   failed call, a lease lost) rejects: the sales of that transaction and every later one are
 *   not applied, and the caller fails their records for a retry. Nothing is dropped.
 */
import type { DynamoDBDocumentClient } from '@aws-sdk/lib-dynamodb';
import type { Fence } from './leases.js';
import { MAX_ACTIONS, linesOf, namesOf, settleLines } from './soldCount.js';
import type { PendingLine, Sale, SaleState, SoldCountOutcome, TransactionTiming } from './soldCount.js';

export interface ApplySalesOptions {
  now?: Date | undefined;
  /** The lease tenure the sales are applied under: every transaction is conditioned on it. */
  fence?: Fence | undefined;
  /**
   * The client a sale's writes go through (a record's traced client); `doc` when undefined. A
   * transaction goes through that of its first line's sale.
   */
  docOf?: ((sale: number) => DynamoDBDocumentClient | undefined) | undefined;
  /** At most this many lines per transaction; default as many as 100 actions hold. */
  maxLines?: number | undefined;
  /** Called once per sale, as soon as every line of it has settled. */
  onApplied?: ((sale: number, outcome: SoldCountOutcome) => void) | undefined;
  /** Told of each TransactWriteItems sent, once it is answered (for the stage figures). */
  onTransaction?: ((timing: TransactionTiming) => void) | undefined;
}

const none = (): SoldCountOutcome => ({ changed: 0, unchanged: 0, missingProducts: 0 });

/**
 * Applies `sales` in their order, in as few transactions as fit. Rejects with the first
 * transaction's error that is no line's own (LeaseLostError when fenced off): the sales not
 * reported to `onApplied` by then were not applied.
 */
export async function applySales(
  doc: DynamoDBDocumentClient,
  tableName: string,
  sales: readonly Sale[],
  options: ApplySalesOptions = {},
): Promise<void> {
  const { fence, docOf, onApplied } = options;
  const now = options.now ?? new Date();
  const lines = linesOf(sales);
  const remaining = sales.map(() => 0);
  for (const line of lines) remaining[line.sale] = (remaining[line.sale] ?? 0) + 1;
  const outcomes: SoldCountOutcome[] = [];
  remaining.forEach((count, sale) => count === 0 && onApplied?.(sale, none()));
  for (let start = 0; start < lines.length;) {
    const chunk = pack(lines, start, options.maxLines ?? MAX_ACTIONS);
    const first = chunk[0] as PendingLine;
    await settleLines(docOf?.(first.sale) ?? doc, tableName, chunk, now, fence, outcomes, options.onTransaction);
    for (const line of chunk) {
      remaining[line.sale] = (remaining[line.sale] ?? 1) - 1;
      if (remaining[line.sale] === 0) onApplied?.(line.sale, outcomes[line.sale] ?? none());
    }
    start += chunk.length;
  }
}

/**
 * Moves the sale marker of every line of one order to `target` (applySales with one sale).
 * Throws for anything but "already applied" and "product gone" (the caller retries the record
 * later).
 */
export async function updateSoldCount(
  doc: DynamoDBDocumentClient,
  tableName: string,
  order: Sale['order'],
  target: SaleState,
  now: Date = new Date(),
  fence?: Fence,
): Promise<SoldCountOutcome> {
  let outcome = none();
  await applySales(doc, tableName, [{ order, target }], { now, fence, onApplied: (_, settled) => (outcome = settled) });
  return outcome;
}

/**
 * The lines from `start` on that go into one transaction: in order, until one would name an item
 * twice or the actions would pass 100 (a line's marker, its product and its buyer record, the
 * last two shared with lines before it). A cancellation's buyer action depends on what its
 * marker turns out to hold, so it is counted, and its buyer record kept to itself, whatever it
 * is expected to be now.
 */
function pack(lines: readonly PendingLine[], start: number, maxLines: number): PendingLine[] {
  const chunk: PendingLine[] = [];
  const markers = new Set<string>();
  const products = new Set<string>();
  /** Each buyer record in the transaction, and whether a cancellation claimed it. */
  const buyers = new Map<string, boolean>();
  let actions = 1; // the fence
  for (let i = start; i < lines.length && chunk.length < maxLines; i++) {
    const line = lines[i] as PendingLine;
    const names = namesOf(line);
    const cancelling = line.target === 'CANCELLED';
    const buyer = buyers.get(names.buyer);
    if (markers.has(names.marker) || (buyer !== undefined && (buyer || cancelling))) break;
    const cost = 1 + (products.has(names.product) ? 0 : 1) + (buyer === undefined ? 1 : 0);
    if (actions + cost > MAX_ACTIONS) break;
    actions += cost;
    markers.add(names.marker);
    products.add(names.product);
    buyers.set(names.buyer, cancelling);
    chunk.push(line);
  }
  // A line always fits an empty transaction (at most 4 actions).
  return chunk.length > 0 ? chunk : [lines[start] as PendingLine];
}
