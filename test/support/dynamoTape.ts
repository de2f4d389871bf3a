/**
 * The DynamoDB calls of one execution, recorded so that a second executor can run the same
 * operation on the same data without asking DynamoDB again (differentialExecutor.ts), now or
 * later from a file (the corpus of the integration suite's requests, corpus.ts).
 *
 * `taped` is the client a server under test is given: while an execution runs inside
 * `tapes.run(tape, ...)`, every call it sends (its loaders' batches included: they are scheduled
 * from within it) is recorded into that tape; other calls pass through. `replayer` answers the
 * second execution's calls from the record and never sends anything: no request is counted twice
 * by DynamoDB, by the process's metrics or by a test that counts calls, and the second execution
 * sees exactly the items the first one saw.
 *
 * A call is matched by its command and its input (a batch's keys in any order). Loaders may batch
 * differently when answers come back at once instead of over the network (and a batch of one key
 * goes as a GetItem); a BatchGetItem or GetItem that matches no recorded call is then answered item
 * by item from every item the first execution read (by BatchGetItem, by GetItem, or by a Query of
 * the table whose items a loader may have been primed with), and the replay is marked inexact (its request counts no longer comparable). A call the
 * first execution never made cannot be answered: it fails with ReplayMissError.
 */
import { AsyncLocalStorage } from 'node:async_hooks';
import type { DynamoDBDocumentClient } from '@aws-sdk/lib-dynamodb';

/** The second execution asked for something the first one never read. */
export class ReplayMissError extends Error {
  override name = 'ReplayMissError';
  constructor(readonly call: string) {
    super(`The replayed execution made a DynamoDB call the recorded one did not: ${call.slice(0, 300)}`);
  }
}

export type Outcome = { ok: true; output: unknown } | { ok: false; error: unknown };

/** One call as a file keeps it: the call's key, its input (for the item index) and its outcome. */
export interface RecordedCall {
  key: string;
  input: unknown;
  outcome: Outcome;
}

interface Recorded {
  key: string;
  /** Settles with the call: a replay may ask for a call the first execution still waits for. */
  outcome: Promise<Outcome>;
  used: boolean;
}

type Item = Record<string, unknown>;
interface BatchGetInput {
  RequestItems?: Record<string, { Keys?: Item[] }>;
}
interface BatchGetOutput {
  Responses?: Record<string, Item[]>;
  UnprocessedKeys?: Record<string, { Keys?: Item[] }>;
}

/** JSON with object keys sorted: the same input gives the same text whatever the order it was built in. */
function canonical(value: unknown): string {
  return JSON.stringify(value, (_key, field: unknown) => {
    if (field instanceof Set) return { $set: [...(field as Set<unknown>)].map((item) => canonical(item)).sort() };
    if (field === null || typeof field !== 'object' || Array.isArray(field) || ArrayBuffer.isView(field)) return field;
    return Object.fromEntries(Object.entries(field as Item).sort(([a], [b]) => (a < b ? -1 : a > b ? 1 : 0)));
  });
}

/** A key attribute in either form the reads use: the document client's string, the low-level `{ S }`. */
const keyText = (value: unknown): unknown =>
  typeof value === 'object' && value !== null && typeof (value as { S?: unknown }).S === 'string'
    ? (value as { S: string }).S
    : value;

const itemKey = (table: string, key: Item): string =>
  `${table}\n${canonical({ PK: keyText(key.PK), SK: keyText(key.SK) })}`;

/** BatchGetItem in the document client's form or the low-level one (what batchGet.ts sends). */
const BATCH_GETS = new Set(['BatchGetCommand', 'BatchGetItemCommand']);
/** GetItem in the low-level form batchGet.ts sends for a batch of one key (items in the same form as its batches'). */
const GET_ITEM = 'GetItemCommand';
interface GetInput {
  TableName?: string;
  Key?: Item;
}

/** A command's name and input as one string; a batch's keys sorted (DynamoDB answers a batch unordered anyway). */
export function callKey(command: object): string {
  const name = command.constructor.name;
  const input = (command as { input?: unknown }).input;
  if (BATCH_GETS.has(name)) {
    const { RequestItems = {}, ...rest } = input as BatchGetInput;
    const tables = Object.fromEntries(
      Object.entries(RequestItems).map(([table, request]) => [
        table,
        { ...request, Keys: (request.Keys ?? []).map((key) => canonical(key)).sort() },
      ]),
    );
    return `${name}:${canonical({ ...rest, RequestItems: tables })}`;
  }
  return `${name}:${canonical(input)}`;
}

/** The tape of the execution running now (see `taped`). */
export const tapes = new AsyncLocalStorage<DynamoTape>();

/** `doc`, with every call sent while a tape is current recorded into that tape. */
export function taped(doc: DynamoDBDocumentClient): DynamoDBDocumentClient {
  const send = (command: object, options?: object): Promise<unknown> => {
    const tape = tapes.getStore();
    return tape ? tape.send(doc, command, options) : doc.send(command as never, options as never);
  };
  return Object.create(doc, { send: { value: send } }) as DynamoDBDocumentClient;
}

export class DynamoTape {
  private readonly calls: (Recorded & { input: unknown })[] = [];
  /** Items by table and key, from every BatchGetItem and GetItem recorded: null for a key asked and not found. */
  private readonly items = new Map<string, Item | null>();
  /** False once a call was answered item by item: request counts are then not comparable. */
  exact = true;

  /** A tape of calls recorded earlier (a corpus file's). */
  static of(recorded: readonly RecordedCall[]): DynamoTape {
    const tape = new DynamoTape();
    for (const { key, input, outcome } of recorded) {
      tape.calls.push({ key, input, outcome: Promise.resolve(outcome), used: false });
      tape.index(key, input, outcome);
    }
    return tape;
  }

  /** Sends `command` with `shared`, recording it. */
  send(shared: DynamoDBDocumentClient, command: object, options?: object): Promise<unknown> {
    const key = callKey(command);
    const input = (command as { input?: unknown }).input;
    const sent = shared.send(command as never, options as never) as Promise<unknown>;
    const outcome = sent.then(
      // A copy: the first execution's code may change what it was given.
      (output): Outcome => ({ ok: true, output: structuredClone(output) }),
      (error: unknown): Outcome => ({ ok: false, error }),
    );
    this.calls.push({ key, input: structuredClone(input), outcome, used: false });
    void outcome.then((settled) => this.index(key, input, settled));
    return sent;
  }

  /** Every call recorded, once settled (what a corpus file keeps). */
  async recorded(): Promise<RecordedCall[]> {
    return Promise.all(this.calls.map(async ({ key, input, outcome }) => ({ key, input, outcome: await outcome })));
  }

  /** A client that answers from this tape and sends nothing (everything else is `shared`'s). */
  replayer(shared: DynamoDBDocumentClient): DynamoDBDocumentClient {
    const send = async (command: object): Promise<unknown> => {
      const key = callKey(command);
      const recorded = this.calls.find((call) => !call.used && call.key === key);
      if (recorded) {
        recorded.used = true;
        const outcome = await recorded.outcome;
        if (!outcome.ok) throw outcome.error;
        return structuredClone(outcome.output);
      }
      const name = command.constructor.name;
      if (BATCH_GETS.has(name) || name === GET_ITEM) {
        // Item by item needs every read the first execution made.
        await Promise.all(this.calls.map((call) => call.outcome));
        const input = (command as { input: unknown }).input;
        const answer = name === GET_ITEM ? this.oneItem(input as GetInput) : this.itemByItem(input as BatchGetInput);
        if (answer) {
          this.exact = false;
          return answer;
        }
      }
      throw new ReplayMissError(key);
    };
    return Object.create(shared, { send: { value: send } }) as DynamoDBDocumentClient;
  }

  /** Recorded calls the replay never asked for (a replay that read less). */
  get unused(): number {
    return this.calls.filter((call) => !call.used).length;
  }

  /** Files the items a settled read returned by key (the item-by-item answers). */
  private index(key: string, input: unknown, outcome: Outcome): void {
    if (!outcome.ok) return;
    // A Query's items too: a loader primed with them in one run may ask for them in the other.
    const { Items, TableName } = outcome.output as { Items?: Item[] } & { TableName?: string };
    const table = (input as { TableName?: string }).TableName ?? TableName;
    if (key.startsWith('QueryCommand:') && table && !(input as { IndexName?: string }).IndexName) {
      for (const item of Items ?? [])
        if (typeof keyText(item.PK) === 'string') this.items.set(itemKey(table, item), item);
    }
    if (key.startsWith(`${GET_ITEM}:`)) {
      const { TableName: got, Key } = input as GetInput;
      const found = (outcome.output as { Item?: Item }).Item;
      if (!got || !Key) return;
      const id = itemKey(got, Key);
      if (found) this.items.set(id, found);
      else if (!this.items.has(id)) this.items.set(id, null);
      return;
    }
    if (![...BATCH_GETS].some((name) => key.startsWith(`${name}:`))) return;
    const { RequestItems = {} } = input as BatchGetInput;
    const { Responses = {}, UnprocessedKeys = {} } = outcome.output as BatchGetOutput;
    const unprocessed = new Set(
      Object.entries(UnprocessedKeys).flatMap(([table, request]) => (request.Keys ?? []).map((k) => itemKey(table, k))),
    );
    for (const [table, request] of Object.entries(RequestItems)) {
      for (const requested of request.Keys ?? []) {
        const id = itemKey(table, requested);
        if (!unprocessed.has(id) && !this.items.has(id)) this.items.set(id, null);
      }
    }
    for (const [table, items] of Object.entries(Responses)) {
      for (const item of items) this.items.set(itemKey(table, item), item);
    }
  }

  private oneItem({ TableName: table, Key }: GetInput): { Item?: Item } | undefined {
    if (!table || !Key) return undefined;
    const item = this.items.get(itemKey(table, Key));
    if (item === undefined) return undefined;
    return item ? { Item: structuredClone(item) } : {};
  }

  private itemByItem(input: BatchGetInput): BatchGetOutput | undefined {
    const responses: Record<string, Item[]> = {};
    for (const [table, request] of Object.entries(input.RequestItems ?? {})) {
      const found: Item[] = (responses[table] = []);
      for (const requested of request.Keys ?? []) {
        const item = this.items.get(itemKey(table, requested));
        if (item === undefined) return undefined;
        if (item) found.push(structuredClone(item));
      }
    }
    return { Responses: responses, UnprocessedKeys: {} };
  }
}
