/**
 * TransactWriteItems with the two things every caller needs: bounded retries of conflicts
 * and throttling (with backoff and jitter), and CancellationReasons lined up with the
 * actions that caused them, so a caller maps each one back to its input field.
 */
import { TransactionCanceledException, TransactionInProgressException } from '@aws-sdk/client-dynamodb';
import type { AttributeValue } from '@aws-sdk/client-dynamodb';
import { TransactWriteCommand } from '@aws-sdk/lib-dynamodb';
import type { DynamoDBDocumentClient, TransactWriteCommandInput } from '@aws-sdk/lib-dynamodb';
import { unmarshall } from '@aws-sdk/util-dynamodb';
import { GraphQLError } from 'graphql';
import { asPromise } from './continuation.js';
import type { Continuation } from './continuation.js';
import { backoffDelay } from './retry.js';
import type { RetryPolicy } from './retry.js';
import { ErrorCode } from '../errors.js';
import { noteCommand } from '../telemetry/dynamoSpans.js';
import type { Item } from '../table/codecs.js';
import type { ItemKey } from '../table/keys.js';

export type TransactItem = NonNullable<TransactWriteCommandInput['TransactItems']>[number];

export const DEFAULT_TRANSACTION_RETRY: RetryPolicy = { maxAttempts: 5, baseDelayMs: 20, maxDelayMs: 500 };

/**
 * The actions of one TransactWriteItems, each under a name (`stock:2`, `details`), so that a
 * cancellation is read by name instead of by position in the list.
 */
export class Transaction {
  readonly #names: string[] = [];
  readonly #items: TransactItem[] = [];

  /** Adds an action; a name may be used once (throws otherwise: that is a bug, not input). */
  add(name: string, action: TransactItem): this {
    if (this.#names.includes(name)) throw new Error(`transaction action "${name}" added twice`);
    this.#names.push(name);
    this.#items.push(action);
    return this;
  }

  /** The actions in the order they were added: what TransactItems takes. */
  get items(): TransactItem[] {
    return [...this.#items];
  }

  get names(): readonly string[] {
    return this.#names;
  }

  /** The key of every item an action writes (condition checks excluded), once each. */
  get touched(): ItemKey[] {
    const keys: ItemKey[] = [];
    const seen = new Set<string>();
    for (const action of this.#items) {
      const key = action.Update?.Key ?? action.Delete?.Key ?? action.Put?.Item;
      if (!key) continue;
      const touched = { PK: String(key.PK), SK: String(key.SK) };
      const id = `${touched.PK}\n${touched.SK}`;
      if (seen.has(id)) continue;
      seen.add(id);
      keys.push(touched);
    }
    return keys;
  }
}

/** Why a transaction was refused, by action name. */
export class Cancellation {
  readonly #byName: ReadonlyMap<string, { code: string; item: Item | undefined }>;

  constructor(names: readonly string[], reasons: readonly { code: string; item: Item | undefined }[]) {
    this.#byName = new Map(names.map((name, index) => [name, reasons[index] ?? { code: 'None', item: undefined }]));
  }

  /**
   * True when DynamoDB reported the named action's condition as failed. A false is no proof
   * that the condition held: when several conditions fail, DynamoDB need not report them all,
   * so a caller that must know what is stored reads it (consistently) instead.
   */
  failed(name: string): boolean {
    return this.#byName.get(name)?.code === 'ConditionalCheckFailed';
  }

  /** The names whose condition failed, in action order. */
  get failedNames(): string[] {
    return [...this.#byName].flatMap(([name, reason]) => (reason.code === 'ConditionalCheckFailed' ? [name] : []));
  }

  /** The item as it was when the named action failed, where the action asked for it (ALL_OLD). */
  old(name: string): Item | undefined {
    return this.#byName.get(name)?.item;
  }

  /** Every reason code, for messages about transactions that should not have been cancelled. */
  describe(): string {
    return [...this.#byName].map(([name, reason]) => `${name}=${reason.code}`).join(', ');
  }
}

export type TransactionOutcome = { committed: true } | { committed: false; cancellation: Cancellation };

/** Conflicts persisted through every retry: the client may retry the mutation later. */
export class TransactionConflictError extends GraphQLError {
  constructor(attempts: number) {
    super(`The write conflicted with concurrent writes ${attempts} times and changed nothing; retry it`, {
      extensions: { code: ErrorCode.CONFLICT },
    });
  }
}

const RETRYABLE_REASONS = new Set(['TransactionConflict', 'ThrottlingError', 'ProvisionedThroughputExceeded']);

const delay = (ms: number) => new Promise<void>((resolve) => setTimeout(resolve, ms));

/**
 * Sends the transaction (the very same request on each retry, so its ClientRequestToken stays
 * valid), retrying while DynamoDB cancels only for conflicts or throttling. Returns the
 * cancellation, by action name, when a condition failed; throws TransactionConflictError when
 * retries run out.
 */
export function transactWrite(
  doc: DynamoDBDocumentClient,
  transaction: Transaction,
  options: { clientRequestToken?: string; retry?: RetryPolicy } = {},
): Promise<TransactionOutcome> {
  return transactWriteThen(doc, transaction, options, asPromise());
}

/**
 * `transactWrite` handing its outcome (or its failure) to `then` within the request's own last
 * `then` (continuation.ts): one promise per attempt, whatever the caller does next.
 */
export function transactWriteThen<R>(
  doc: DynamoDBDocumentClient,
  transaction: Transaction,
  { clientRequestToken, retry = DEFAULT_TRANSACTION_RETRY }: { clientRequestToken?: string; retry?: RetryPolicy },
  then: Continuation<TransactionOutcome, R>,
): Promise<R> {
  const input: TransactWriteCommandInput = {
    TransactItems: transaction.items,
    ...(clientRequestToken ? { ClientRequestToken: clientRequestToken } : {}),
  };
  const attempt = (number: number): Promise<R> => {
    let sent: Promise<unknown>;
    try {
      const command = new TransactWriteCommand(input);
      // The span of a cancelled attempt names each reason by its action.
      noteCommand(command, { actions: transaction.names });
      sent = doc.send(command);
    } catch (error) {
      sent = Promise.reject(error instanceof Error ? error : new Error(String(error)));
    }
    return sent.then(
      () => then.done({ committed: true }),
      (error: unknown) => {
        const retryable =
          error instanceof TransactionInProgressException ||
          (error instanceof TransactionCanceledException &&
            (error.CancellationReasons ?? []).some((reason) => RETRYABLE_REASONS.has(reason.Code ?? '')) &&
            !(error.CancellationReasons ?? []).some((reason) => reason.Code === 'ConditionalCheckFailed'));
        if (retryable) {
          if (number + 1 >= retry.maxAttempts) return then.failed(new TransactionConflictError(number + 1));
          return delay(backoffDelay(number + 1, retry)).then(() => attempt(number + 1));
        }
        if (error instanceof TransactionCanceledException) {
          const reasons = (error.CancellationReasons ?? []).map(toReason);
          return then.done({ committed: false, cancellation: new Cancellation(transaction.names, reasons) });
        }
        return then.failed(error);
      },
    );
  };
  return attempt(0);
}

function toReason(reason: { Code?: string | undefined; Item?: Record<string, unknown> | undefined }): {
  code: string;
  item: Item | undefined;
} {
  const raw = reason.Item;
  // The document client does not unmarshall items inside exceptions: they arrive as AttributeValues.
  const item = raw && Object.keys(raw).length > 0 ? unmarshall(raw as Record<string, AttributeValue>) : undefined;
  return { code: reason.Code ?? 'None', item };
}
