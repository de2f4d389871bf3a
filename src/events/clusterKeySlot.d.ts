/** The part of cluster-key-slot's API (the package has no types of its own) the cluster subscriber uses. */
declare module 'cluster-key-slot' {
  /** The cluster slot (0-16383) of a key or sharded channel: CRC16 of its hash tag, or of all of it. */
  export default function calculateSlot(key: string | Buffer): number;
}
