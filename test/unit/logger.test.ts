/**
 * The pretty development log: an operation's "graphql request" line is one line, its fields only
 * at debug level; other lines keep their fields; JSON lines keep everything.
 */
import { describe, expect, it } from 'vitest';
import { createLogger } from '../../src/logger.js';

/** A logger of `format` at `level` whose output is collected, as a list of lines. */
function collected(logFormat: 'pretty' | 'json', logLevel: 'info' | 'debug') {
  const written: string[] = [];
  const log = createLogger({ logLevel, logFormat, nodeEnv: 'development' }, false, {
    write: (chunk: string) => void written.push(chunk),
  });
  return { log, lines: () => written.join('').split('\n').filter(Boolean) };
}

const REQUEST = {
  transport: 'http',
  operationName: 'Catalog',
  durationMs: 12.34,
  dynamodb: { requests: 2, readCapacityUnits: 1.5, writeCapacityUnits: 0, byOperation: { Query: 1, BatchGetItem: 1 } },
  errors: 0,
};

describe('the pretty log', () => {
  it('writes a request as one line saying what ran, how long, what it read and for whom', () => {
    const { log, lines } = collected('pretty', 'info');
    log.child({ requestId: 'r-1', viewer: 'alice' }).info(REQUEST, 'graphql request');
    expect(lines()).toHaveLength(1);
    expect(lines()[0]).toMatch(/INFO.*graphql Catalog \(http\) 12\.34 ms · 2 DynamoDB requests, 1\.5 RCU · alice$/);
  });

  it('counts the errors of a request on its line', () => {
    const { log, lines } = collected('pretty', 'info');
    log.info({ ...REQUEST, operationName: null, errors: 2 }, 'graphql request');
    expect(lines()).toEqual([expect.stringMatching(/graphql \(anonymous\) \(http\) 12\.34 ms · .* · 2 errors$/)]);
  });

  it('adds the fields of a request at debug level', () => {
    const { log, lines } = collected('pretty', 'debug');
    log.child({ requestId: 'r-1' }).info(REQUEST, 'graphql request');
    expect(lines().length).toBeGreaterThan(3);
    expect(lines().join('\n')).toMatch(/requestId: "r-1"[\s\S]*"BatchGetItem": 1/);
  });

  it('keeps the fields of every other line', () => {
    const { log, lines } = collected('pretty', 'info');
    log.info({ table: 'MainTable' }, 'created table');
    expect(lines()).toHaveLength(2);
    expect(lines()[1]).toMatch(/table: "MainTable"/);
  });
});

describe('the JSON log', () => {
  it('keeps every field of a request line', () => {
    const { log, lines } = collected('json', 'info');
    log.info(REQUEST, 'graphql request');
    expect(JSON.parse(lines()[0]!)).toMatchObject({ ...REQUEST, msg: 'graphql request' });
  });
});
