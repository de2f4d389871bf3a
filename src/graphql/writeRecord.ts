/**
 * What an execution's writes touched: the keys each write reports, and the node as the write
 * left it. The response cache of the writing instance evicts their dependency tags before the
 * answer leaves (the stream evicts them everywhere else); without a response cache nobody asks,
 * so the tags are worked out only when asked for, not as each write completes (a placeOrder
 * touches six keys, and each key's tags walk the entity declarations and every declared range).
 *
 * A write's node is kept as the write returned it: models are never changed in place once made,
 * so its tags are the same when asked for at the end of the execution as they were then.
 */
import { tagsOfWrite, tagsOfWritten } from '../table/dependencies.js';
import type { ItemKey } from '../table/keys.js';
import type { NodeModel } from '../table/models.js';

export class WriteRecord {
  readonly #writes: { touched: readonly ItemKey[]; written: NodeModel | undefined }[] = [];

  /** A write that touched `touched` and left `written` as it now is (none for a delete). */
  note(touched: readonly ItemKey[], written?: NodeModel): void {
    this.#writes.push({ touched, written });
  }

  /**
   * The dependency tags the writes so far may have changed, each once, write by write: those of
   * every touched key, then those of the written node (a product back in stock joins its
   * category's pages, which its touched key does not show).
   */
  tags(): string[] {
    const tags = new Set<string>();
    for (const { touched, written } of this.#writes) {
      for (const key of touched) for (const tag of tagsOfWrite(key)) tags.add(tag);
      if (written) for (const tag of tagsOfWritten(written)) tags.add(tag);
    }
    return [...tags];
  }
}
