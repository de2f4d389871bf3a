/** The part of cluster-key-slot's API (the package has no types of its own) the invalidation partitions and the cluster subscriber use. */
declare module 'cluster-key-slot' {
  /** The Redis Cluster slot (0-16383) of `key`, by its hash tag when it has one (CRC16 mod 16384, as CLUSTER KEYSLOT). */
  export default function generate(key: string): number;
}
