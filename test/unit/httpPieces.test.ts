/**
 * The pure parts of GraphQL over HTTP: the body reader and its limit, JSON body parsing, media
 * types, request ids, If-None-Match, and the negotiations of the node:http server (answer
 * encoding, the playground page versus JSON).
 */
import { Readable } from 'node:stream';
import { brotliCompressSync, gzipSync } from 'node:zlib';
import { HeaderMap } from '@apollo/server';
import { describe, expect, it } from 'vitest';
import { BodyRefused, parseJsonBody, readBody } from '../../src/pipeline/http/httpBody.js';
import { isFresh, mediaTypeOf, requestIdOf } from '../../src/pipeline/http/graphqlHttp.js';
import { preferredAnswerType } from '../../src/transports/http/playground/router.js';
import { encodingFor } from '../../src/transports/http/send.js';

const refusalOf = async (promise: Promise<unknown>): Promise<number | undefined> => {
  try {
    await promise;
    return undefined;
  } catch (error) {
    if (error instanceof BodyRefused) return error.status;
    throw error;
  }
};

describe('readBody', () => {
  it('reads a stream of chunks, a buffer and a string alike', async () => {
    const stream = Readable.from([Buffer.from('{"a":'), Buffer.from('1}')]);
    expect(await readBody(stream, { limit: 100 })).toBe('{"a":1}');
    expect(await readBody(Buffer.from('{}'), { limit: 100 })).toBe('{}');
    expect(await readBody('{}', { limit: 100 })).toBe('{}');
  });

  it('counts the UTF-8 bytes of a body given as text, and reads a lone surrogate as UTF-8 does', async () => {
    expect(await readBody('é'.repeat(5), { limit: 10 })).toBe('é'.repeat(5));
    expect(await refusalOf(readBody('é'.repeat(6), { limit: 10 }))).toBe(413);
    expect(await readBody('{"a":"\uD800"}', { limit: 100 })).toBe('{"a":"\uFFFD"}');
  });

  it('refuses a declared Content-Length over the limit before reading a byte', async () => {
    let pulled = false;
    const stream = Readable.from(
      (function* () {
        pulled = true;
        yield Buffer.from('x');
      })(),
    );
    expect(await refusalOf(readBody(stream, { limit: 10, contentLength: '11' }))).toBe(413);
    expect(pulled).toBe(false);
  });

  it('stops reading once the body grows past the limit, whatever Content-Length claimed', async () => {
    let chunks = 0;
    const stream = Readable.from(
      (function* () {
        for (;;) {
          chunks += 1;
          yield Buffer.alloc(4);
        }
      })(),
    );
    expect(await refusalOf(readBody(stream, { limit: 10, contentLength: '2' }))).toBe(413);
    expect(chunks).toBeLessThan(10);
  });

  it.each([
    ['gzip', gzipSync],
    ['br', brotliCompressSync],
  ] as const)('decodes a %s body and counts the decoded bytes', async (encoding, encode) => {
    const text = JSON.stringify({ query: '{ __typename }' });
    expect(await readBody(encode(text), { limit: 100, contentEncoding: encoding })).toBe(text);
    expect(await refusalOf(readBody(encode('x'.repeat(1000)), { limit: 100, contentEncoding: encoding }))).toBe(413);
  });

  it('answers 400 for a body whose connection was reset halfway', async () => {
    const stream = Readable.from(
      (function* () {
        yield Buffer.from('{"query":');
        throw Object.assign(new Error('aborted'), { code: 'ECONNRESET' });
      })(),
    );
    expect(await refusalOf(readBody(stream, { limit: 100 }))).toBe(400);
  });

  it('answers 400 for a body whose stream closes before its end, and destroys one past the limit', async () => {
    const cut = new Readable({ read() {} });
    const read = refusalOf(readBody(cut, { limit: 100 }));
    cut.push(Buffer.from('{"query":'));
    cut.destroy();
    expect(await read).toBe(400);
    const endless = new Readable({ read() {} });
    const refused = refusalOf(readBody(endless, { limit: 10 }));
    endless.push(Buffer.alloc(11));
    expect(await refused).toBe(413);
    expect(endless.destroyed).toBe(true);
  });

  it('answers 415 for an encoding it cannot decode and 400 for a body that does not decode', async () => {
    expect(await refusalOf(readBody('{}', { limit: 100, contentEncoding: 'compress' }))).toBe(415);
    expect(await refusalOf(readBody('not gzip', { limit: 100, contentEncoding: 'gzip' }))).toBe(400);
  });
});

describe('parseJsonBody', () => {
  it('reads an object or a list, and an empty body as {}', () => {
    expect(parseJsonBody(' {"query":"{ a }"}', undefined)).toEqual({ query: '{ a }' });
    expect(parseJsonBody('[{}]', 'utf-8')).toEqual([{}]);
    expect(parseJsonBody('', undefined)).toEqual({});
  });

  it.each([['"a string"'], ['42'], ['{"query": '], ['null']])('refuses %s with 400', (text) => {
    expect(() => parseJsonBody(text, undefined)).toThrow(expect.objectContaining({ status: 400 }));
  });

  it('refuses a charset other than UTF-8 with 415', () => {
    expect(() => parseJsonBody('{}', 'latin1')).toThrow(expect.objectContaining({ status: 415 }));
    expect(parseJsonBody('{}', 'UTF8')).toEqual({});
  });
});

describe('media types, request ids and revalidation', () => {
  it('reads the essence and the charset of a Content-Type', () => {
    expect(mediaTypeOf('Application/JSON; charset="UTF-8"')).toEqual({ essence: 'application/json', charset: 'UTF-8' });
    expect(mediaTypeOf(undefined)).toEqual({ essence: '', charset: undefined });
  });

  it('keeps a sane x-request-id, else takes the platform id, else makes one', () => {
    expect(requestIdOf('abc-1.2_3')).toBe('abc-1.2_3');
    expect(requestIdOf('has space', 'apigw-id')).toBe('apigw-id');
    expect(requestIdOf('x'.repeat(65))).toMatch(/^[0-9a-f-]{36}$/);
  });

  it('compares If-None-Match weakly, and never for a request that asks for a reload', () => {
    const etag = 'W/"abc"';
    expect(isFresh(new HeaderMap([['if-none-match', '"other", "abc"']]), etag)).toBe(true);
    expect(isFresh(new HeaderMap([['if-none-match', '*']]), etag)).toBe(true);
    expect(isFresh(new HeaderMap([['if-none-match', 'W/"other"']]), etag)).toBe(false);
    expect(isFresh(new HeaderMap(), etag)).toBe(false);
    const reload = new HeaderMap([
      ['if-none-match', etag],
      ['cache-control', 'max-age=0, no-cache'],
    ]);
    expect(isFresh(reload, etag)).toBe(false);
  });
});

describe('negotiation on node:http', () => {
  it.each([
    ['gzip, deflate, br', 'br'],
    ['gzip', 'gzip'],
    ['br;q=0.5, gzip', 'gzip'],
    ['identity', undefined],
    ['*', 'br'],
    ['gzip;q=0, *;q=0.1', 'br'],
    [undefined, undefined],
  ])('answers Accept-Encoding %s with %s', (accept, expected) => {
    expect(encodingFor(accept)).toBe(expected);
  });

  it.each([
    ['text/html,application/xhtml+xml,application/xml;q=0.9,*/*;q=0.8', 'text/html'],
    [undefined, 'application/json'],
    ['*/*', 'application/json'],
    ['application/graphql-response+json, application/json;q=0.9', 'application/graphql-response+json'],
    ['text/html;q=0.5, application/json', 'application/json'],
    ['image/png', undefined],
  ])('reads Accept %s as a wish for %s', (accept, expected) => {
    expect(preferredAnswerType(accept)).toBe(expected);
  });
});
