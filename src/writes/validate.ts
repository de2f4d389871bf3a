/**
 * Input rules shared by the mutations. Each records an INVALID_INPUT on the checker and
 * returns undefined when the value is refused, so every problem of a request is reported.
 */
import { BadUserInputError } from '../errors.js';
import { parseMoney } from '../money.js';
import { assertId, InvalidKeyError, normalizeCategory, normalizeEmail } from '../table/keys.js';
import { unicodeProblem } from '../table/text.js';
import type { InputChecker } from './userErrors.js';

/** Runs a check that throws (a key or money refusal) and turns it into a recorded INVALID_INPUT. */
function viaKeyCheck<T>(check: InputChecker, field: (string | number)[], fn: () => T): T | undefined {
  try {
    return fn();
  } catch (error) {
    if (error instanceof InvalidKeyError || error instanceof BadUserInputError) {
      return check.invalid(field, error.message);
    }
    throw error;
  }
}

/** `field` is the input path, e.g. ["items", 2, "productId"]; the message names its last part. */
export const checkId = (check: InputChecker, field: string | (string | number)[], value: string) => {
  const path = typeof field === 'string' ? [field] : field;
  return viaKeyCheck(check, path, () => assertId(value, String(path.at(-1))));
};

export const checkEmail = (check: InputChecker, value: string) =>
  viaKeyCheck(check, ['email'], () => normalizeEmail(value));

export const checkCategory = (check: InputChecker, value: string) =>
  viaKeyCheck(check, ['category'], () => normalizeCategory(value));

export const checkMoney = (check: InputChecker, field: string, value: string) =>
  viaKeyCheck(check, [field], () => parseMoney(value, field));

/**
 * A trimmed, non-empty single-line (or multi-line when `multiline`) text of at most `max`
 * characters, in NFC, with no invisible or text-moving characters (see table/text.ts).
 */
export function checkText(
  check: InputChecker,
  field: string,
  value: string,
  max: number,
  { multiline = false, allowEmpty = false } = {},
): string | undefined {
  const problem = unicodeProblem(value, { multiline });
  if (problem) return check.invalid([field], `${field} ${problem}`);
  const text = value.normalize('NFC').trim();
  if (!allowEmpty && text.length === 0) return check.invalid([field], `${field} must not be empty`);
  if (text.length > max) return check.invalid([field], `${field} must be at most ${max} characters`);
  return text;
}

export function checkInt(
  check: InputChecker,
  field: (string | number)[],
  value: number,
  min: number,
  max: number,
): number | undefined {
  if (!Number.isInteger(value) || value < min || value > max) {
    return check.invalid(field, `${field.at(-1)} must be an integer from ${min} to ${max}`);
  }
  return value;
}
