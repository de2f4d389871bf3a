/**
 * What may become part of a key. Every id is checked before any key is built: an id holding `#`
 * could otherwise address another item (`alice#ORDER` would forge a key inside alice's
 * partition). The key templates (entities/template.ts) call these when they build a key.
 */
import { canonicalEmail, unicodeProblem } from './text.js';

/**
 * A value that cannot become part of a key. Thrown before any key exists; the GraphQL layer
 * answers it as BAD_USER_INPUT naming `argumentName`, the writes record it as INVALID_INPUT.
 */
export class InvalidKeyError extends Error {
  override name = 'InvalidKeyError';
  constructor(
    message: string,
    readonly argumentName: string,
  ) {
    super(message);
  }
}

export const ID_PATTERN = /^[A-Za-z0-9_-]{1,64}$/;
/** Categories are keys too (`CATEGORY#<category>`); lower-case so "Books" and "books" agree. */
export const CATEGORY_PATTERN = /^[a-z0-9_-]{1,64}$/;
export const MAX_EMAIL_LENGTH = 254;
/** local@domain.tld without whitespace, control characters or `#` (which would forge a key). */
// eslint-disable-next-line no-control-regex
const EMAIL_PATTERN = /^[^\s@\u0000-\u001f\u007f#]+@[^\s@\u0000-\u001f\u007f#]+\.[^\s@\u0000-\u001f\u007f#]+$/;

/** Returns `id` if it is a valid raw id; throws InvalidKeyError naming the argument otherwise. */
export function assertId(id: string, argumentName: string = 'id'): string {
  if (!ID_PATTERN.test(id)) {
    throw new InvalidKeyError(
      `${argumentName} must be 1-64 characters of A-Z a-z 0-9 _ -, got ${describe(id)}`,
      argumentName,
    );
  }
  return id;
}

export function assertCategory(category: string): string {
  if (!CATEGORY_PATTERN.test(category)) {
    throw new InvalidKeyError(`category must be 1-64 characters of a-z 0-9 _ -, got ${describe(category)}`, 'category');
  }
  return category;
}

/**
 * Brings a category to its stored form (trimmed, lower-case) and checks it: reads and writes
 * both go through here, so `products(category: "Books")` finds what `createProduct` stored as `books`.
 */
export const normalizeCategory = (category: string): string => assertCategory(category.trim().toLowerCase());

/**
 * Brings an email to its compared form (NFKC, then lower-case: see text.ts) and checks it.
 * Only the shape DynamoDB keys need is enforced here (one `@`, no whitespace, control, format
 * or separator characters, well-formed, bounded length); delivery is not our concern.
 */
export function normalizeEmail(email: string, argumentName = 'email'): string {
  // Surrounding whitespace (a pasted tab or newline) is trimmed, as before; inside, nothing invisible passes.
  const problem = unicodeProblem(email.trim());
  if (problem) throw new InvalidKeyError(`${argumentName} ${problem}`, argumentName);
  const normalized = canonicalEmail(email);
  const ok =
    normalized.length <= MAX_EMAIL_LENGTH && EMAIL_PATTERN.test(normalized) && unicodeProblem(normalized) === undefined;
  if (!ok) throw new InvalidKeyError(`${argumentName} must be an email address, got ${describe(email)}`, argumentName);
  return normalized;
}

/** App names are lower-case like categories; versions allow semver's dots and `+` (never `#`). */
export const APP_NAME_PATTERN = /^[a-z0-9][a-z0-9_-]{0,63}$/;
export const APP_VERSION_PATTERN = /^[A-Za-z0-9][A-Za-z0-9._+-]{0,63}$/;

export function assertAppName(app: string): string {
  if (!APP_NAME_PATTERN.test(app)) {
    throw new InvalidKeyError(`app must be 1-64 characters of a-z 0-9 _ -, got ${describe(app)}`, 'app');
  }
  return app;
}

export function assertAppVersion(version: string): string {
  if (!APP_VERSION_PATTERN.test(version)) {
    throw new InvalidKeyError(
      `version must be 1-64 characters of A-Z a-z 0-9 . _ + -, got ${describe(version)}`,
      'version',
    );
  }
  return version;
}

/** Quotes a rejected value for an error message, shortened so a huge input is not echoed back. */
export function describe(value: string): string {
  const shown = value.length > 40 ? `${value.slice(0, 40)}…` : value;
  return JSON.stringify(shown);
}
