/**
 * Writes a whole answer on node:http, compressed as the client asks (Accept-Encoding: br, gzip
 * or deflate) when it is over 1 kB: JSON answers are repetitive and shrink several times. The
 * settings are the `compression` middleware's (gzip level 6, brotli quality 4), but the body is
 * compressed in one call on libuv's thread pool instead of through a stream wrapped around the
 * response, which keeps the main thread free while it runs. A cache hit's body is compressed once
 * and kept with its entry (`encoded`); any other body sent again byte for byte is not compressed
 * again either: recent results are kept by the body's sha256.
 */
import { createHash } from 'node:crypto';
import type { IncomingMessage, ServerResponse } from 'node:http';
import { promisify } from 'node:util';
import { brotliCompress, constants, deflate, gzip } from 'node:zlib';
import { LRUCache } from 'lru-cache';

/** Answers smaller than this go unencoded: the saving would not pay for the work. */
export const COMPRESSION_THRESHOLD = 1024;

type Encoding = 'br' | 'gzip' | 'deflate';
const CODECS: Record<Encoding, (body: Buffer) => Promise<Buffer>> = {
  br: (body) =>
    promisify(brotliCompress)(body, {
      params: { [constants.BROTLI_PARAM_QUALITY]: 4, [constants.BROTLI_PARAM_SIZE_HINT]: body.length },
    }),
  gzip: (body) => promisify(gzip)(body),
  deflate: (body) => promisify(deflate)(body),
};
/** Compressed bodies kept for a body sent again; larger bodies are compressed each time. */
const REUSED_MAX_BODY_BYTES = 256 * 1024;
const reused = new LRUCache<string, Buffer>({ maxSize: 4 * 1024 * 1024, sizeCalculation: (b) => b.length + 64 });

async function compress(encoding: Encoding, body: Buffer): Promise<Buffer> {
  if (body.length > REUSED_MAX_BODY_BYTES) return CODECS[encoding](body);
  const key = `${encoding}:${createHash('sha256').update(body).digest('base64url')}`;
  const known = reused.get(key);
  if (known) return known;
  const compressed = await CODECS[encoding](body);
  reused.set(key, compressed);
  return compressed;
}

/** On a tie of q-values: the smallest result first. */
const PREFERENCE: readonly Encoding[] = ['br', 'gzip', 'deflate'];

/** The encoding to answer with: the client's best q-value among br, gzip and deflate; undefined for none. */
export function encodingFor(acceptEncoding: string | undefined): Encoding | undefined {
  if (!acceptEncoding) return undefined;
  const weights = new Map<string, number>();
  for (const part of acceptEncoding.split(',')) {
    const [coding = '', ...parameters] = part.split(';');
    const q = parameters.map((p) => /^\s*q\s*=\s*([0-9.]+)\s*$/i.exec(p)?.[1]).find((v) => v !== undefined);
    weights.set(coding.trim().toLowerCase(), q === undefined ? 1 : Number(q));
  }
  const wildcard = weights.get('*') ?? 0;
  let best: Encoding | undefined;
  let bestWeight = 0;
  for (const encoding of PREFERENCE) {
    const weight = weights.get(encoding) ?? wildcard;
    if (weight > bestWeight) [best, bestWeight] = [encoding, weight];
  }
  return best;
}

/** Content types not worth compressing (already compressed). */
const INCOMPRESSIBLE = /^(font\/woff2?|image\/(png|jpeg|gif|webp)|application\/(zip|gzip))/i;

/**
 * Sends `body` with `status` and `headers` (names lower-case), compressed when it pays. A HEAD
 * request gets the headers alone. A body sent as it is stays a string: Node writes the status
 * line, the headers and a string body in one `write` (a Buffer would be copied first and go out
 * with the headers in a `writev`).
 */
export async function sendBody(
  req: IncomingMessage,
  res: ServerResponse,
  status: number,
  headers: Iterable<[string, string]>,
  body: string | Buffer,
  /** Compressed forms of this very body kept elsewhere (a cache hit's, with its entry): used, and filled, first. */
  encoded?: { get(encoding: string): Buffer | undefined; keep(encoding: string, bytes: Buffer): void },
): Promise<void> {
  let sent = body;
  let length = typeof body === 'string' ? Buffer.byteLength(body) : body.length;
  for (const [name, value] of headers) {
    // CORS has already said `Vary: Origin`; the answer's own Vary adds to it.
    res.setHeader(name, name === 'vary' ? mergeVary(res.getHeader('vary'), value) : value);
  }
  const contentType = String(res.getHeader('content-type') ?? '');
  const compressible = status !== 304 && status !== 204 && length > 0 && !INCOMPRESSIBLE.test(contentType);
  if (compressible) {
    res.setHeader('vary', mergeVary(res.getHeader('vary'), 'Accept-Encoding'));
    const encoding = length >= COMPRESSION_THRESHOLD ? encodingFor(req.headers['accept-encoding']) : undefined;
    if (encoding) {
      const kept = encoded?.get(encoding);
      if (kept) sent = kept;
      else {
        const bytes = typeof body === 'string' ? Buffer.from(body) : body;
        sent = encoded ? await CODECS[encoding](bytes) : await compress(encoding, bytes);
        encoded?.keep(encoding, sent);
      }
      length = sent.length;
      res.setHeader('content-encoding', encoding);
    }
  }
  if (status !== 304 && status !== 204) res.setHeader('content-length', length);
  res.statusCode = status;
  res.end(req.method === 'HEAD' || status === 304 || status === 204 ? undefined : sent);
}

/** Vary values merged lately (an answer's are the same few on every request): at most 64. */
const mergedVary = new Map<string, string>();
const MERGED_VARY_KEPT = 64;

const mergeVary = (current: number | string | string[] | undefined, added: string): string => {
  if (current === undefined || typeof current === 'string') {
    const key = `${current ?? ''}\n${added}`;
    let merged = mergedVary.get(key);
    if (merged === undefined) {
      merged = mergeVaryFields(current, added);
      if (mergedVary.size >= MERGED_VARY_KEPT) mergedVary.clear();
      mergedVary.set(key, merged);
    }
    return merged;
  }
  return mergeVaryFields(current, added);
};

const mergeVaryFields = (current: number | string | string[] | undefined, added: string): string => {
  const split = (value: string) =>
    value
      .split(',')
      .map((part) => part.trim())
      .filter(Boolean);
  const fields = split(Array.isArray(current) ? current.join(',') : String(current ?? ''));
  for (const field of split(added)) {
    if (!fields.some((value) => value === '*' || value.toLowerCase() === field.toLowerCase())) fields.push(field);
  }
  return fields.join(', ');
};

/** A JSON body (health, refusals of the server itself). */
export const sendJson = (
  req: IncomingMessage,
  res: ServerResponse,
  status: number,
  body: unknown,
  headers: Record<string, string> = {},
): Promise<void> =>
  sendBody(
    req,
    res,
    status,
    Object.entries({ 'content-type': 'application/json; charset=utf-8', ...headers }),
    JSON.stringify(body),
  );
