/** A user's profile, and the guard that makes emails unique. */
import { ORDER_STATUSES } from '../models.js';
import type { OrderStatus, UserModel } from '../models.js';
import { int, str } from './attributes.js';
import type { Item } from './attributes.js';
import { defineEntity } from './entity.js';
import { EMAIL, USER_PK } from './ranges.js';
import { tagOf, TAGS } from './tags.js';
import { key } from './template.js';

const PROFILE = key`PROFILE`;

/** The profile attribute counting a user's orders in one status (O(1) totalCount). */
export const statusCountAttribute = (status: OrderStatus): string => `orderCount${status}`;

/** `orderCountPLACED`, `orderCountSHIPPED`, ...: flat attributes, so `if_not_exists(x, 0) + 1` works on any profile. */
export function statusCountAttributes(counts: Record<OrderStatus, number>): Item {
  return Object.fromEntries(ORDER_STATUSES.map((s) => [statusCountAttribute(s), counts[s]]));
}

/** Zero orders in every status: a new profile's counters. */
export const noStatusCounts = (): Record<OrderStatus, number> =>
  Object.fromEntries(ORDER_STATUSES.map((s) => [s, 0])) as Record<OrderStatus, number>;

function statusCounts(item: Item): Record<OrderStatus, number> | null {
  if (ORDER_STATUSES.some((s) => item[statusCountAttribute(s)] === undefined)) return null;
  return Object.fromEntries(ORDER_STATUSES.map((s) => [s, int(item, statusCountAttribute(s))])) as Record<
    OrderStatus,
    number
  >;
}

export const USER = defineEntity({
  type: 'User',
  item: 'user profile',
  holds: 'profile, `orderCount`, `orderCountPLACED` … `orderCountCANCELLED`, `version`',
  key: { PK: USER_PK, SK: PROFILE },
  indexes: { GSI1PK: EMAIL, GSI1SK: USER_PK },
  visibility: 'owner',
  tags: [tagOf(TAGS.user, 'userId')],
  node: 'User',
  codec: {
    toItem: (user: UserModel): Item => ({
      PK: USER_PK.build(user),
      SK: PROFILE.build({}),
      entityType: 'User',
      GSI1PK: EMAIL.build(user),
      GSI1SK: USER_PK.build(user),
      userId: user.userId,
      email: user.email,
      name: user.name,
      createdAt: user.createdAt,
      updatedAt: user.updatedAt,
      orderCount: user.orderCount,
      ...(user.statusCounts ? statusCountAttributes(user.statusCounts) : {}),
      version: user.version,
    }),
    fromItem: (item: Item): UserModel => ({
      kind: 'User',
      userId: str(item, 'userId'),
      email: str(item, 'email'),
      name: str(item, 'name'),
      createdAt: str(item, 'createdAt'),
      updatedAt: str(item, 'updatedAt'),
      orderCount: int(item, 'orderCount'),
      statusCounts: statusCounts(item),
      version: int(item, 'version'),
    }),
  },
});

/**
 * The uniqueness guard of an email: written with `attribute_not_exists(PK)` in the transaction
 * that writes (or moves) the profile's email, since a global index cannot enforce uniqueness.
 * Its change is that address's look-up changing.
 */
export const EMAIL_GUARD = defineEntity({
  type: 'EmailGuard',
  item: 'email guard',
  holds: 'userId',
  key: { PK: EMAIL, SK: key`UNIQUE` },
  visibility: 'admin',
  tags: [tagOf(TAGS.email, 'email')],
});
