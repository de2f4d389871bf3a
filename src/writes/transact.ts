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
import { backoffDelay } from '../db/batchGet.js';
import type { RetryPolicy } from '../db/batchGet.js';
import { ErrorCode } from '../errors.js';
import type { Item } from '../table/codecs.js';

export type TransactItem = NonNullable<TransactWriteCommandInput['TransactItems']>[number];

export const DEFAULT_TRANSACTION_RETRY: RetryPolicy = { maxAttempts: 5, baseDelayMs: 20, maxDelayMs: 500 };

/** One entry per action, in action order. `item` is the item as it was, where the action asked for it. */
export interface Cancellation {
  code: string;
  item: Item | undefined;
}

export type TransactionOutcome = { committed: true } | { committed: false; reasons: Cancellation[] };

/** Conflicts persisted through every retry: the client may retry the mutation later. */
export class TransactionConflictError extends GraphQLError {
  constructor(attempts: number) {
    super(`The write conflicted with concurrent writes ${attempts} times and changed nothing; retry it`, {
      extensions: { code: ErrorCode.CONFLICT },
    });
  }
}

const RETRYABLE_REASONS = new Set(['TransactionConflict', 'ThrottlingError', 'ProvisionedThroughputExceeded']);

/**
 * Sends `input` (the very same request on each retry, so its ClientRequestToken stays valid),
 * retrying while DynamoDB cancels only for conflicts or throttling. Returns the per-action
 * reasons when a condition failed; throws TransactionConflictError when retries run out.
 */
export async function transactWrite(
  doc: DynamoDBDocumentClient,
  input: TransactWriteCommandInput,
  retry: RetryPolicy = DEFAULT_TRANSACTION_RETRY,
): Promise<TransactionOutcome> {
  for (let attempt = 0; ; attempt++) {
    if (attempt > 0) await new Promise((resolve) => setTimeout(resolve, backoffDelay(attempt, retry)));
    try {
      await doc.send(new TransactWriteCommand(input));
      return { committed: true };
    } catch (error) {
      const retryable =
        error instanceof TransactionInProgressException ||
        (error instanceof TransactionCanceledException &&
          (error.CancellationReasons ?? []).some((reason) => RETRYABLE_REASONS.has(reason.Code ?? '')) &&
          !(error.CancellationReasons ?? []).some((reason) => reason.Code === 'ConditionalCheckFailed'));
      if (retryable) {
        if (attempt + 1 >= retry.maxAttempts) throw new TransactionConflictError(attempt + 1);
        continue;
      }
      if (error instanceof TransactionCanceledException) {
        return { committed: false, reasons: (error.CancellationReasons ?? []).map(toCancellation) };
      }
      throw error;
    }
  }
}

function toCancellation(reason: {
  Code?: string | undefined;
  Item?: Record<string, unknown> | undefined;
}): Cancellation {
  const raw = reason.Item;
  // The document client does not unmarshall items inside exceptions: they arrive as AttributeValues.
  const item = raw && Object.keys(raw).length > 0 ? unmarshall(raw as Record<string, AttributeValue>) : undefined;
  return { code: reason.Code ?? 'None', item };
}

/** The indices of actions whose condition failed. */
export const failedConditions = (reasons: Cancellation[]): number[] =>
  reasons.flatMap((reason, index) => (reason.code === 'ConditionalCheckFailed' ? [index] : []));
