/**
 * The names of everything tablegraph keeps in Redis: channels and keys, each table's apart
 * (several deployments, or test files, can share one Redis without seeing each other's data).
 *
 * Every name holds a hash tag (`{...}`). In a cluster, Redis places a key, and a sharded
 * channel, by its tag alone, so what must live together shares a tag and what may spread has
 * a tag of its own:
 * - a channel's tag is its table and topic: `tablegraph:{<table>:<topic>}`. Each topic lands on
 *   some primary; a key a topic needs beside its channel (a history of its messages, say)
 *   takes the same tag through `topicKey`, so one script can touch both;
 * - the shared cache tier is cut into partitions (sharedTier.ts), one tag each: an entry, the
 *   counter and the tag versions its scripts read are in one partition, so each script runs in
 *   one slot, and the partitions spread over the primaries.
 * On one node the braces are only characters of the names.
 *
 * A table name is `[A-Za-z0-9_.-]`: it cannot close a tag early.
 */

/**
 * The topics whose channels exist: the invalidations' partitions (invalidationPartitions.ts), and one per change-event topic
 * (src/table/entities/topics.ts: `events:order:<orderId>`, `events:user-orders:<userId>`,
 * `events:orders`), each on the primary its tag hashes to.
 */
export type Topic = `invalidations:${string}` | `events:${string}`;

/** The topic of change-event topic `topic` (its channel and its history share its tag). */
export const eventsTopic = (topic: string): Topic => `events:${topic}`;

const tag = (tableName: string, topic: string): string => `{${tableName}:${topic}}`;

/** The pub/sub channel of `topic` in `tableName`'s deployment. */
export const topicChannel = (tableName: string, topic: Topic): string => `tablegraph:${tag(tableName, topic)}`;

/** A key that lives in the same slot as `topic`'s channel (`suffix` names what it holds). */
export const topicKey = (tableName: string, topic: Topic, suffix: string): string =>
  `${topicChannel(tableName, topic)}:${suffix}`;

/** The prefix of partition `partition` of the response cache's shared tier. */
export const cachePartitionPrefix = (tableName: string, partition: number): string =>
  `tablegraph:rc:${tag(tableName, `p${partition}`)}:`;
