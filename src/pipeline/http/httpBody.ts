/**
 * The body of a GraphQL request over HTTP, read once for every HTTP transport (node:http, SSE,
 * Lambda) under the one body limit (MAX_BODY_BYTES): a declared Content-Length over the limit is
 * refused before a byte is read, and a body that grows past it is refused as soon as it does.
 * The limit counts decoded bytes, so a small gzip body cannot inflate into a large one.
 */
import { Readable } from 'node:stream';
import { createBrotliDecompress, createGunzip, createInflate } from 'node:zlib';

/** What a request body may arrive as: a node stream (node:http), or bytes already in memory (Lambda). */
export type BodySource = AsyncIterable<Uint8Array> | Uint8Array | string;

/** Why a body was refused: `tooLarge` answers 413, the others 415 or 400. */
export class BodyRefused extends Error {
  override name = 'BodyRefused';
  constructor(
    readonly status: 400 | 413 | 415,
    message: string,
  ) {
    super(message);
  }
}

const DECODERS: Record<string, () => NodeJS.ReadWriteStream> = {
  gzip: createGunzip,
  'x-gzip': createGunzip,
  deflate: createInflate,
  br: createBrotliDecompress,
};

/** ES2024's String.prototype.isWellFormed (Node 20 and later): no lone surrogate. */
const isWellFormed = (text: string): boolean => (text as string & { isWellFormed(): boolean }).isWellFormed();

const chunksOf = (source: BodySource): Iterable<Uint8Array> | AsyncIterable<Uint8Array> =>
  typeof source === 'string' || source instanceof Uint8Array ? [Buffer.from(source)] : source;

/**
 * The body as text, at most `limit` decoded bytes. Throws BodyRefused: 413 past the limit, 415
 * for a Content-Encoding other than gzip, deflate, br or identity, 400 for a body that does not
 * decode or that stops arriving (the connection was reset).
 */
export async function readBody(
  source: BodySource,
  { limit, contentLength, contentEncoding }: { limit: number; contentLength?: string; contentEncoding?: string },
): Promise<string> {
  const tooLarge = () => new BodyRefused(413, `The request body exceeds the limit of ${limit} bytes`);
  const encoding = (contentEncoding ?? 'identity').trim().toLowerCase();
  const declared = Number(contentLength);
  // Encoded bytes are never more than decoded ones for a body worth accepting: refuse early.
  if (contentLength !== undefined && Number.isFinite(declared) && declared > limit) throw tooLarge();
  // Text in memory (the Lambda's), sent as it is: its bytes counted, not copied (text with a lone
  // surrogate goes the long way, which reads it as UTF-8 would: U+FFFD in its place).
  if (encoding === 'identity' && typeof source === 'string' && isWellFormed(source)) {
    if (Buffer.byteLength(source) > limit) throw tooLarge();
    return source;
  }
  // The common case, a node:http request sent as it is: read by its events, without an async iterator.
  if (encoding === 'identity' && source instanceof Readable)
    return (await collect(source, limit, tooLarge)).toString('utf8');
  let chunks: Iterable<Uint8Array | string> | AsyncIterable<Uint8Array | string> = chunksOf(source);
  if (encoding !== 'identity') {
    const decoder = DECODERS[encoding];
    if (!decoder) throw new BodyRefused(415, `Content-Encoding ${encoding} is not supported`);
    chunks = Readable.from(chunks).pipe(decoder()) as AsyncIterable<Uint8Array | string>;
  }
  const parts: Buffer[] = [];
  let size = 0;
  try {
    for await (const chunk of chunks) {
      size += chunk.length;
      if (size > limit) throw tooLarge();
      parts.push(
        typeof chunk === 'string' ? Buffer.from(chunk) : Buffer.from(chunk.buffer, chunk.byteOffset, chunk.length),
      );
    }
  } catch (error) {
    if (error instanceof BodyRefused) throw error;
    // The client went away mid-body (or sent bytes that do not decode): its fault, answered
    // (if anyone still listens) and logged like any refusal, never as a server error.
    throw new BodyRefused(
      400,
      encoding === 'identity' ? 'The request body was cut off' : `The request body is not valid ${encoding}`,
    );
  }
  return Buffer.concat(parts).toString('utf8');
}

/**
 * A readable stream's bytes, at most `limit` of them, by its `data` and `end` events; the same
 * outcomes as reading it with `for await`: past the limit the stream is destroyed and 413 thrown,
 * an error or a close before its end is a body cut off (400).
 */
function collect(stream: Readable, limit: number, tooLarge: () => BodyRefused): Promise<Buffer> {
  return new Promise((resolve, reject) => {
    const parts: Buffer[] = [];
    let size = 0;
    const done = () => {
      stream.off('data', onData);
      stream.off('end', onEnd);
      stream.off('error', onCut);
      stream.off('close', onCut);
    };
    const onData = (chunk: Buffer | string) => {
      const bytes = typeof chunk === 'string' ? Buffer.from(chunk) : chunk;
      size += bytes.length;
      if (size > limit) {
        done();
        stream.destroy();
        reject(tooLarge());
        return;
      }
      parts.push(bytes);
    };
    const onEnd = () => {
      done();
      resolve(parts.length === 1 ? (parts[0] as Buffer) : Buffer.concat(parts, size));
    };
    const onCut = () => {
      done();
      reject(new BodyRefused(400, 'The request body was cut off'));
    };
    if (stream.readableEnded) return resolve(Buffer.alloc(0));
    if (stream.destroyed) return onCut();
    stream.on('data', onData);
    stream.on('end', onEnd);
    stream.on('error', onCut);
    stream.on('close', onCut);
  });
}

/**
 * A JSON request body as body-parser's strict mode reads it: an object or an array at the top
 * (anything else is 400), an empty body as `{}`. Only UTF-8 is read (415 for another charset).
 */
export function parseJsonBody(text: string, charset: string | undefined): unknown {
  if (charset !== undefined && !/^utf-?8$/i.test(charset)) {
    throw new BodyRefused(415, `The charset ${charset} is not supported: send UTF-8`);
  }
  const trimmed = text.trimStart();
  if (trimmed === '') return {};
  if (trimmed[0] !== '{' && trimmed[0] !== '[') throw new BodyRefused(400, 'The request body is not valid JSON');
  try {
    return JSON.parse(trimmed) as unknown;
  } catch {
    throw new BodyRefused(400, 'The request body is not valid JSON');
  }
}
