/**
 * Key templates: one declaration of a key attribute's grammar that both builds and parses it
 * (as dynamodb-toolbox's key transformers and ElectroDB's composite templates do), so the text a
 * writer builds and the text the dependency tags read back can never disagree.
 *
 * ```ts
 * const userPK = key`USER#${id('userId')}`;
 * userPK.build({ userId: 'alice' }); // 'USER#alice' (throws InvalidKeyError for 'a#b')
 * userPK.parse('USER#alice'); // { userId: 'alice' }
 * ```
 *
 * Building is strict: every value is checked by its part (an id must be an API id) before it
 * becomes key text. Parsing is lenient: it reads what a key written by anyone holds there (an
 * import's `PRODUCT#sku.import-42` reads as productId `sku.import-42`), and answers the raw
 * texts, so that an item written outside the API's id rules is still recognised for what it is.
 */
import { assertCategory, assertId, describe, InvalidKeyError } from '../ids.js';

/** The table's primary key of one item. */
export interface ItemKey {
  PK: string;
  SK: string;
}

/** One variable part of a key template. */
export interface Param<N extends string = string, V = unknown> {
  readonly name: N;
  /** What parsing accepts for it (a regex source, no groups): what any writer may have put there. */
  readonly pattern: string;
  /** When it ends its template, the part takes the rest of the key (an id after its last literal). */
  readonly open: boolean;
  /** The value as key text; throws (InvalidKeyError for what a client sent) when it cannot be part of a key. */
  format(value: V): string;
  /** A value it accepts (the registry's checks build a key of every kind from these). */
  readonly example: V;
  /** How the docs write it, when not as its name. */
  readonly label?: string;
}

type ValueOf<P> = P extends Param<string, infer V> ? V : never;
/** What a template's `build` takes: one value per parameter. */
export type ValuesOf<P extends readonly Param[]> = { [X in P[number] as X['name']]: ValueOf<X> };
/** What `parse` answers: the text each parameter held. */
export type Parsed<V> = { [K in keyof V]: string };

const escape = (literal: string) => literal.replace(/[.*+?^${}()|[\]\\]/g, '\\$&');

/** A key attribute's grammar: literals around typed parameters. */
export class KeyTemplate<V extends object = Record<string, unknown>> {
  /** The literal before the first parameter (the whole key when there is none). */
  readonly prefix: string;
  /** As the docs write it: `USER#<userId>`. */
  readonly text: string;
  private readonly regex: RegExp;
  /** How `parse` reads a key: the common shapes without a regex (parsing is on the read path). */
  private readonly shape: 'literal' | 'tail' | 'regex';

  constructor(
    readonly literals: readonly string[],
    readonly params: readonly Param[],
  ) {
    this.prefix = literals[0] ?? '';
    this.text = literals
      .map((literal, i) => literal + (params[i] ? `<${params[i].label ?? params[i].name}>` : ''))
      .join('');
    const last = params.length - 1;
    const source = literals
      .map((literal, i) => {
        const param = params[i];
        if (!param) return escape(literal);
        const open = i === last && literals[i + 1] === '' && param.open;
        return `${escape(literal)}(${open ? '.+' : param.pattern})`;
      })
      .join('');
    this.regex = new RegExp(`^${source}$`, 's');
    const [only] = params;
    this.shape =
      params.length === 0 ? 'literal' : params.length === 1 && only?.open && literals[1] === '' ? 'tail' : 'regex';
  }

  /** The key text of `values`; each value is checked by its part first. */
  build(values: V): string {
    let text = this.literals[0] ?? '';
    this.params.forEach((param, i) => {
      text += param.format((values as Record<string, unknown>)[param.name]) + (this.literals[i + 1] ?? '');
    });
    return text;
  }

  /**
   * The key text up to the first parameter `values` does not give (a `begins_with` prefix):
   * `STATUS#<status>#<placedAt>#<orderId>` with `{ status: 'PLACED' }` is `STATUS#PLACED#`.
   */
  prefixOf(values: Partial<V>): string {
    let text = this.literals[0] ?? '';
    for (const [i, param] of this.params.entries()) {
      const value = (values as Record<string, unknown>)[param.name];
      if (value === undefined) break;
      text += param.format(value) + (this.literals[i + 1] ?? '');
    }
    return text;
  }

  /** The texts the parameters hold in `text`; undefined when `text` is not of this template's shape. */
  parse(text: string | undefined): Parsed<V> | undefined {
    const parsed: Record<string, string> = {};
    return this.parseInto(text, parsed) ? (parsed as Parsed<V>) : undefined;
  }

  /** parse, writing the texts into `into` (nothing when `text` is not of this shape): no object per key. */
  parseInto(text: string | undefined, into: Record<string, string>): boolean {
    if (text === undefined || !text.startsWith(this.prefix)) return false;
    if (this.shape === 'literal') return text.length === this.prefix.length;
    if (this.shape === 'tail') {
      // `PREFIX<param>`: the parameter is the rest of the key, whatever it holds (never empty).
      if (text.length === this.prefix.length) return false;
      into[(this.params[0] as Param).name] = text.slice(this.prefix.length);
      return true;
    }
    const match = this.regex.exec(text);
    if (!match) return false;
    for (let i = 0; i < this.params.length; i++) into[(this.params[i] as Param).name] = match[i + 1] as string;
    return true;
  }
}

/** A key template, written as the key reads: ``key`USER#${id('userId')}` ``. */
export function key<const P extends readonly Param<string, unknown>[]>(
  strings: TemplateStringsArray,
  ...params: P
): KeyTemplate<ValuesOf<P>> {
  return new KeyTemplate([...strings], params);
}

const part = <N extends string, V>(
  name: N,
  pattern: string,
  open: boolean,
  format: (value: V) => string,
  example: V,
): Param<N, V> => ({ name, pattern, open, format, example });

/** Any text without `#` when parsed (the separator), the rest of the key when it ends it. */
const SEGMENT = '[^#]+';

/** An API id (`[A-Za-z0-9_-]{1,64}`): a bad one is InvalidKeyError naming `argumentName`. */
export const id = <N extends string>(name: N, argumentName: string = name) =>
  part<N, string>(name, SEGMENT, true, (value) => assertId(value, argumentName), `${name}-1`);

/** A category in its stored form (lower-case). */
export const category = <N extends string>(name: N) => part<N, string>(name, SEGMENT, true, assertCategory, 'books');

/** An email in its compared form (ids.ts normalizeEmail made it; it never holds `#`). */
export const email = <N extends string>(name: N) =>
  part<N, string>(
    name,
    SEGMENT,
    true,
    (value) => {
      if (value === '' || value.includes('#')) throw new InvalidKeyError(`not an email: ${describe(value)}`, name);
      return value;
    },
    'ann@example.com',
  );

/** An ISO-8601 instant: it sorts as it reads, and never holds `#`. */
export const instant = <N extends string>(name: N) =>
  part<N, string>(
    name,
    SEGMENT,
    false,
    (value) => {
      if (value.includes('#')) throw new Error(`unexpected ${name} ${describe(value)}`);
      return value;
    },
    '2026-03-01T09:30:00.000Z',
  );

/** A name as it sorts (lower-cased); it may hold `#`, so it is read up to the template's next literal. */
export const sortName = <N extends string>(name: N) =>
  part<N, string>(name, '.*', false, (value) => value.toLowerCase(), 'Tent #2');

/** One of `values` (an order status). */
export const oneOf = <N extends string, V extends string>(name: N, values: readonly [V, ...V[]]) =>
  part<N, V>(
    name,
    SEGMENT,
    false,
    (value) => {
      if (!values.includes(value)) throw new Error(`unexpected ${name} ${describe(String(value))}`);
      return value;
    },
    values[0],
  );

/** A write shard, 0 to `count - 1`. */
export const shard = <N extends string>(name: N, count: number, what: string) =>
  part<N, number>(
    name,
    '\\d+',
    false,
    (value) => {
      if (!Number.isInteger(value) || value < 0 || value >= count) throw new Error(`no ${what} shard ${value}`);
      return String(value);
    },
    count - 1,
  );

/** Cents as a fixed-width decimal, so string order is numeric order. */
export const cents = <N extends string>(name: N, digits: number) =>
  part<N, number>(
    name,
    '\\d+',
    false,
    (value) => {
      if (!Number.isSafeInteger(value) || value < 0 || String(value).length > digits) {
        throw new Error(`unexpected price ${value}`);
      }
      return String(value).padStart(digits, '0');
    },
    8999,
  );

/** Text that `check` answers unchanged or refuses by throwing (an app name, a version). */
export const checked = <N extends string>(name: N, check: (value: string) => string, example: string) =>
  part<N, string>(name, SEGMENT, true, check, example);

/**
 * Text that is not a client's input (a shard id from DynamoDB, a consumer's owner name, a
 * digest): checked against `allowed`, refused with `refusal` (an InvalidKeyError when it names
 * an argument).
 */
export const text = <N extends string>(
  name: N,
  allowed: RegExp,
  example: string,
  refusal: (value: string) => Error = (value) => new Error(`unexpected ${name} ${describe(value)}`),
) =>
  checked(
    name,
    (value) => {
      if (!allowed.test(value)) throw refusal(value);
      return value;
    },
    example,
  );

/** The largest epoch millisecond a descending instant holds (the year 2286): 13 nines. */
const LATEST_MS = 9_999_999_999_999;

/**
 * An ISO-8601 instant as a key that sorts newest first: 13 digits of LATEST_MS minus its epoch
 * milliseconds. A range read in ascending key order (the direction that can start right after
 * another item of the partition) then returns the newest first. Parsing gives those digits.
 */
export const newestFirst = <N extends string>(name: N): Param<N, string> => ({
  ...part<N, string>(
    name,
    '\\d{13}',
    false,
    (value) => {
      const ms = Date.parse(value);
      if (!Number.isInteger(ms) || ms < 0 || ms > LATEST_MS) throw new Error(`unexpected ${name} ${describe(value)}`);
      return String(LATEST_MS - ms).padStart(13, '0');
    },
    '2026-03-01T09:30:00.000Z',
  ),
  label: `${name}, newest first`,
});

/** A whole number from 1 to `max` (a star rating): one digit, so string order is numeric order. */
export const digit = <N extends string>(name: N, max: number) =>
  part<N, number>(
    name,
    `[1-${max}]`,
    false,
    (value) => {
      if (!Number.isInteger(value) || value < 1 || value > max) throw new Error(`unexpected ${name} ${value}`);
      return String(value);
    },
    max,
  );
