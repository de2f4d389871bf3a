import { createHash } from 'node:crypto';
import { describe, expect, it } from 'vitest';
import { ManifestFormatError, readManifest } from '../../src/pipeline/documents/manifestFormats.js';

const hash = (algorithm: string, text: string) => createHash(algorithm).update(text).digest('hex');
const DOC = 'query Shelf { products(category: "books") { nodes { name } } }';

describe('readManifest', () => {
  it.each([
    ['codegen (sha256: prefix)', { [`sha256:${hash('sha256', DOC)}`]: DOC }, 'codegen', hash('sha256', DOC)],
    ['codegen (bare sha1)', { [hash('sha1', DOC)]: DOC }, 'codegen', hash('sha1', DOC)],
    ['Relay (md5)', { [hash('md5', DOC)]: DOC }, 'relay', hash('md5', DOC)],
    [
      'Apollo',
      {
        format: 'apollo-persisted-query-manifest',
        version: 1,
        operations: [{ id: hash('sha256', DOC), name: 'Shelf', type: 'query', body: DOC }],
      },
      'apollo',
      hash('sha256', DOC),
    ],
  ])('reads %s, keeping the client id beside the sha256', (_name, json, format, id) => {
    expect(readManifest(json)).toEqual({ format, documents: [{ id, sha256: hash('sha256', DOC), document: DOC }] });
  });

  it.each([
    ['an id that is not the hash of its text', { [hash('sha256', 'other')]: DOC }, /is not the sha256 of its document/],
    ['an id of no known digest length', { abc123: DOC }, /is not a document id/],
    ['a sha256: prefix on an md5', { [`sha256:${hash('md5', DOC)}`]: DOC }, /is not a document id/],
    ['an empty document', { [hash('sha256', '')]: '' }, /is not a non-empty string/],
    ['an Apollo manifest of another version', { format: 'apollo-persisted-query-manifest', version: 2 }, /version/],
    ['a JSON array', [DOC], /is a JSON object/],
  ])('refuses %s', (_name, json, message) => {
    expect(() => readManifest(json)).toThrow(ManifestFormatError);
    expect(() => readManifest(json)).toThrow(message);
  });
});
