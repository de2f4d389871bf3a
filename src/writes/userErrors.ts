/**
 * Expected business failures of mutations: returned in the payload's `userErrors`, never
 * thrown. `field` is the path inside the mutation's `input`, list indices as strings
 * (`["items", "2", "quantity"]`).
 */
import type { ItemKey } from '../table/keys.js';
import { MAX_USER_ERRORS } from '../table/limits.js';

/** The schema's `ErrorCode` enum; src/graphql/graphqlModels.ts checks at compile time that both agree. */
export type UserErrorCode =
  | 'EMAIL_TAKEN'
  | 'IDEMPOTENCY_KEY_REUSED'
  | 'INSUFFICIENT_STOCK'
  | 'INVALID_INPUT'
  | 'INVALID_STATUS'
  | 'NOT_FOUND'
  | 'PRODUCT_EXISTS'
  | 'REVIEW_EXISTS'
  | 'USER_EXISTS'
  | 'VERSION_CONFLICT';

export interface UserError {
  code: UserErrorCode;
  field: string[] | null;
  message: string;
}

/** The name codegen's mapper uses (the generated types declare their own `UserError`). */
export type UserErrorModel = UserError;

export const userError = (code: UserErrorCode, field: (string | number)[] | null, message: string): UserError => ({
  code,
  field: field ? field.map(String) : null,
  message,
});

/**
 * What a write returns: the changed entity and the keys of every item it wrote (so the
 * caller's caches can drop them without knowing the key design), or the reasons it changed
 * nothing.
 */
export type WriteResult<T> =
  { ok: true; value: T; touched: readonly ItemKey[] } | { ok: false; userErrors: UserError[] };

export const succeeded = <T>(value: T, touched: readonly ItemKey[]): WriteResult<T> => ({
  ok: true,
  value,
  touched,
});
/** A refusal; past MAX_USER_ERRORS reasons, the last one reported counts the rest. */
export const failed = <T>(...userErrors: UserError[]): WriteResult<T> => ({
  ok: false,
  userErrors: capped(userErrors),
});

function capped(errors: UserError[]): UserError[] {
  if (errors.length <= MAX_USER_ERRORS) return errors;
  return [...errors.slice(0, MAX_USER_ERRORS - 1), moreProblems(errors.length - MAX_USER_ERRORS + 1)];
}

const moreProblems = (count: number): UserError =>
  userError(
    'INVALID_INPUT',
    null,
    `${count === 1 ? '1 more problem was' : `${count} more problems were`} found in the input; fix these and retry`,
  );

/**
 * Collects input problems so that one response reports all of them, not only the first, up to
 * MAX_USER_ERRORS (the last of which then counts the rest). Each check returns the cleaned
 * value, or undefined after recording an INVALID_INPUT.
 */
export class InputChecker {
  private readonly reported: UserError[] = [];
  private dropped = 0;

  invalid(field: (string | number)[] | null, message: string): undefined {
    if (this.reported.length < MAX_USER_ERRORS - 1) this.reported.push(userError('INVALID_INPUT', field, message));
    else this.dropped += 1;
    return undefined;
  }

  /** The problems found, capped: past the cap, one last error counts those left out. */
  get errors(): UserError[] {
    return this.dropped === 0 ? [...this.reported] : [...this.reported, moreProblems(this.dropped)];
  }

  get ok(): boolean {
    return this.reported.length === 0;
  }
}
