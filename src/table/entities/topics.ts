/**
 * The topics change events are published on: one name per thing a subscription can watch (an
 * order, a user's orders, the whole shop's orders). An event declaration (events.ts) names the
 * topics of each event from its node; a subscription listens to exactly one topic, built here
 * from its arguments, so the two sides always spell a topic alike. Every instance hears every
 * event today and delivers it by topic; a router (sharded pub/sub, a history per topic) can send
 * each event only where its topics are heard, reading nothing but these names.
 *
 * A topic is `<name>` or `<name>:<id>` and holds only `a-z A-Z 0-9 _ - :`, so it can name a
 * channel: an id outside that alphabet (an item an import wrote) is digested as in a tag, which
 * no subscription names (their arguments are API ids), so such an event reaches the wider topics
 * of its node only.
 */
import { paramText } from './tags.js';

export interface TopicKind {
  /** The topic's first part. */
  readonly name: string;
  /** The parameter it takes, if any (docs). */
  readonly param: string | undefined;
  /** What it carries (docs). */
  readonly carries: string;
  /** The topic of `id`. */
  of(id?: string): string;
  /** How the docs write it: `order:<orderId>`. */
  readonly text: string;
}

function topicKind(name: string, param: string | undefined, carries: string): TopicKind {
  return {
    name,
    param,
    carries,
    text: param === undefined ? name : `${name}:<${param}>`,
    of: (id) => {
      if (param === undefined) return name;
      if (id === undefined) throw new Error(`topic ${name} takes ${param}`);
      return `${name}:${paramText(id)}`;
    },
  };
}

/** Every topic, by name. */
export const TOPICS = {
  order: topicKind('order', 'orderId', "one order's changes"),
  userOrders: topicKind('user-orders', 'userId', 'the changes of every order of one user'),
  shopOrders: topicKind('orders', undefined, 'the changes of every order of the shop (admins)'),
  productReviews: topicKind('product-reviews', 'productId', 'the reviews added to one product'),
} as const satisfies Record<string, TopicKind>;
