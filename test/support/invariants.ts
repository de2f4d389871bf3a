/**
 * The write invariants of the orders, checked on a full-table snapshot (see scanTable). Each
 * check returns readable violations rather than throwing, so a failing test lists them all.
 */
import type { Item } from '../../src/table/codecs.js';

export interface InvariantScope {
  /** The users whose partitions the load wrote to. */
  userIds: readonly string[];
  /** productId -> stock before the load. */
  startingStock: Readonly<Record<string, number>>;
}

interface StoredLine {
  productId: string;
  quantity: number;
}

/**
 * Every order stored twice (details and the user-partition copy, same status, version and
 * lines, LSI1SK of that status), no copy without its details, orderCount equal to the orders
 * in the user's partition, no negative stock, and starting stock = stock + units in orders
 * that are not cancelled. Empty when all hold.
 */
export function orderInvariantViolations(snapshot: readonly Item[], scope: InvariantScope): string[] {
  const violations: string[] = [];
  const inScope = (item: Item) => scope.userIds.includes(String(item.userId));
  const details = snapshot.filter((item) => item.entityType === 'Order' && inScope(item));
  const copies = snapshot.filter((item) => item.entityType === 'UserOrder' && inScope(item));

  for (const order of details) {
    const orderId = String(order.orderId);
    const expectedSK = `ORDER#${String(order.placedAt)}#${orderId}`;
    const copy = copies.find((item) => item.orderId === orderId);
    if (!copy) {
      violations.push(`order ${orderId}: details without the copy in USER#${String(order.userId)}`);
      continue;
    }
    if (copy.PK !== `USER#${String(order.userId)}` || copy.SK !== expectedSK) {
      violations.push(`order ${orderId}: copy stored under ${String(copy.PK)} / ${String(copy.SK)}`);
    }
    if (copy.status !== order.status || copy.version !== order.version) {
      violations.push(
        `order ${orderId}: details say ${String(order.status)} v${String(order.version)}, copy says ${String(copy.status)} v${String(copy.version)}`,
      );
    }
    const expectedLSI1SK = `STATUS#${String(order.status)}#${String(order.placedAt)}#${orderId}`;
    if (copy.LSI1SK !== expectedLSI1SK) {
      violations.push(`order ${orderId}: LSI1SK ${String(copy.LSI1SK)}, expected ${expectedLSI1SK}`);
    }
    if (JSON.stringify(copy.items) !== JSON.stringify(order.items) || copy.total !== order.total) {
      violations.push(`order ${orderId}: the copy's lines or total differ from the details`);
    }
  }
  for (const copy of copies) {
    if (!details.some((order) => order.orderId === copy.orderId)) {
      violations.push(`order ${String(copy.orderId)}: copy in ${String(copy.PK)} without its details`);
    }
  }

  for (const userId of scope.userIds) {
    const profile = snapshot.find((item) => item.PK === `USER#${userId}` && item.SK === 'PROFILE');
    const inPartition = snapshot.filter(
      (item) => item.PK === `USER#${userId}` && String(item.SK).startsWith('ORDER#'),
    ).length;
    const detailCount = details.filter((order) => order.userId === userId).length;
    if (!profile) violations.push(`user ${userId}: no profile`);
    else if (Number(profile.orderCount) !== inPartition || inPartition !== detailCount) {
      violations.push(
        `user ${userId}: orderCount ${String(profile.orderCount)}, ${inPartition} order copies, ${detailCount} order details`,
      );
    }
  }

  for (const [productId, starting] of Object.entries(scope.startingStock)) {
    const product = snapshot.find((item) => item.PK === `PRODUCT#${productId}` && item.SK === 'DETAILS');
    if (!product) {
      violations.push(`product ${productId}: missing`);
      continue;
    }
    const stock = Number(product.stock);
    const sold = details
      .filter((order) => order.status !== 'CANCELLED')
      .flatMap((order) => order.items as StoredLine[])
      .filter((line) => line.productId === productId)
      .reduce((sum, line) => sum + Number(line.quantity), 0);
    if (stock < 0) violations.push(`product ${productId}: negative stock ${stock}`);
    if (stock + sold !== starting) {
      violations.push(`product ${productId}: started with ${starting}, now ${stock} in stock + ${sold} sold`);
    }
  }
  return violations;
}

/** The orderIds of the stored order details of `userIds`. */
export const storedOrderIds = (snapshot: readonly Item[], userIds: readonly string[]): Set<string> =>
  new Set(
    snapshot
      .filter((item) => item.entityType === 'Order' && userIds.includes(String(item.userId)))
      .map((item) => String(item.orderId)),
  );
