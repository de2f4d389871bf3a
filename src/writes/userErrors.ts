/**
 * Expected business failures of mutations: returned in the payload's `userErrors`, never
 * thrown. `field` is the path inside the mutation's `input`, list indices as strings
 * (`["items", "2", "quantity"]`).
 */
import type { ItemKey } from '../table/keys.js';

/** The schema's `ErrorCode` enum; src/graphql/graphqlModels.ts checks at compile time that both agree. */
export type UserErrorCode =
  | 'EMAIL_TAKEN'
  | 'IDEMPOTENCY_KEY_REUSED'
  | 'INSUFFICIENT_STOCK'
  | 'INVALID_INPUT'
  | 'INVALID_STATUS'
  | 'NOT_FOUND'
  | 'PRODUCT_EXISTS'
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
export const failed = <T>(...userErrors: UserError[]): WriteResult<T> => ({ ok: false, userErrors });

/**
 * Collects input problems so that one response reports all of them, not only the first.
 * Each check returns the cleaned value, or undefined after recording an INVALID_INPUT.
 */
export class InputChecker {
  readonly errors: UserError[] = [];

  invalid(field: (string | number)[] | null, message: string): undefined {
    this.errors.push(userError('INVALID_INPUT', field, message));
    return undefined;
  }

  get ok(): boolean {
    return this.errors.length === 0;
  }
}
