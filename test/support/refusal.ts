/** Helpers for asserting that a pure function refused its input as BAD_USER_INPUT. */
import { expect } from 'vitest';
import { BadUserInputError } from '../../src/errors.js';
import { InvalidKeyError } from '../../src/table/keys.js';

/** Runs `fn`, expecting it to throw; returns what it threw (fails the test if nothing was thrown). */
export function thrownBy(fn: () => unknown): unknown {
  try {
    fn();
  } catch (error) {
    return error;
  }
  expect.fail('expected the call to throw, but it returned normally');
}

/** Asserts that `fn` throws a BadUserInputError with code BAD_USER_INPUT naming `argumentName`. */
export function expectBadUserInput(fn: () => unknown, argumentName: string): BadUserInputError {
  const error = thrownBy(fn);
  expect(error).toBeInstanceOf(BadUserInputError);
  const refusal = error as BadUserInputError;
  expect(refusal.extensions.code).toBe('BAD_USER_INPUT');
  expect(refusal.extensions.argumentName).toBe(argumentName);
  expect(refusal.message).toContain(argumentName);
  return refusal;
}

/** Asserts that `fn` (a key builder) throws an InvalidKeyError naming `argumentName`. */
export function expectInvalidKey(fn: () => unknown, argumentName: string): InvalidKeyError {
  const error = thrownBy(fn);
  expect(error).toBeInstanceOf(InvalidKeyError);
  const refusal = error as InvalidKeyError;
  expect(refusal.argumentName).toBe(argumentName);
  expect(refusal.message).toContain(argumentName);
  return refusal;
}
