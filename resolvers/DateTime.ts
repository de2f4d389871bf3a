import { GraphQLScalarType, Kind } from 'graphql';
import { BadUserInputError } from '../src/errors.js';

const ISO_UTC = /^\d{4}-\d{2}-\d{2}T\d{2}:\d{2}:\d{2}\.\d{3}Z$/;

function parse(value: unknown): string {
  if (typeof value !== 'string' || !ISO_UTC.test(value) || Number.isNaN(Date.parse(value))) {
    throw new BadUserInputError('DateTime must be an ISO-8601 UTC string like "2026-03-01T09:30:00.000Z"');
  }
  return value;
}

/** Stored and served as the ISO-8601 strings the table sorts by. */
export const DateTime = new GraphQLScalarType<string, string>({
  name: 'DateTime',
  description: 'An ISO-8601 date-time in UTC with milliseconds.',
  serialize: (value) => String(value),
  parseValue: parse,
  parseLiteral: (ast) => parse(ast.kind === Kind.STRING ? ast.value : undefined),
});
