/**
 * Faults where they happen: one SDK middleware, attached to a DynamoDB or DynamoDB Streams
 * client, that injects throttling, 500s, latency, timeouts and expired iterators into chosen
 * commands (or only the calls that touch a key, such as the checkpoints), and can hold
 * every call of a client (a process paused with SIGSTOP, as its peers see it: nothing leaves
 * it, and what it sent last arrives late).
 *
 * The middleware sits inside the SDK's retry loop (finalizeRequest, after retries), so an
 * injected throttle or 500 is retried by the SDK as a real one would be, and surfaces to the
 * code under test only when it persists. A `lostResponse` timeout lets the request reach
 * DynamoDB and throws afterwards: the write happened, the caller was told it failed.
 */
import { TransactionCanceledException } from '@aws-sdk/client-dynamodb';
import type { DynamoDBClient } from '@aws-sdk/client-dynamodb';

export type FaultKind = 'throttle' | 'server-error' | 'latency' | 'timeout' | 'lost-response' | 'expired-iterator';

export interface FaultRule {
  kind: FaultKind;
  /** Client labels (see attach) this applies to; every client when absent. */
  clients?: readonly string[];
  /** Command names without `Command` (`GetRecords`, `TransactWriteItems`); every command when absent. */
  commands?: readonly string[];
  /** Only calls whose input mentions this (a key prefix such as `META#stream`); every call when absent. */
  touching?: string;
  /** How many calls it hits before it is spent; default unlimited. */
  times?: number;
  /** Chance of hitting a matching call, from the injector's seeded generator; default 1. */
  probability?: number;
  /** Latency and timeouts: how long the call takes before it goes on or fails. */
  ms?: number;
}

interface Stack {
  middlewareStack: { add(middleware: unknown, options: Record<string, unknown>): void };
}

function fault(name: string, message: string, status: number): Error {
  const error = new Error(message) as Error & { $metadata: { httpStatusCode: number }; $fault: string };
  error.name = name;
  error.$metadata = { httpStatusCode: status };
  error.$fault = status >= 500 ? 'server' : 'client';
  return error;
}

const delay = (ms: number) => new Promise((resolve) => setTimeout(resolve, ms));

export class Faults {
  private rules: { rule: FaultRule; left: number }[] = [];
  private readonly paused = new Map<string, { promise: Promise<void>; resume: () => void }>();
  private readonly pauseTriggers: { label: string; command: string; paused: () => void }[] = [];
  /** Faults injected so far, by kind. */
  readonly injected = new Map<FaultKind | 'paused', number>();
  /** Calls seen, by client label. */
  readonly calls = new Map<string, number>();
  /** Called for every fault injected (a child process logs it, so its parent can count). */
  onInjected: ((kind: FaultKind, label: string, command: string) => void) | undefined;

  constructor(private readonly random: () => number = Math.random) {}

  /** Puts the middleware on `client`, under `label` (`consumer-a`, `consumer-a:streams`). */
  attach(client: Stack, label: string): void {
    client.middlewareStack.add(
      (next: (args: unknown) => Promise<unknown>, context: { commandName?: string }) => async (args: unknown) => {
        this.calls.set(label, (this.calls.get(label) ?? 0) + 1);
        const command = (context.commandName ?? '').replace(/Command$/, '');
        const trigger = this.pauseTriggers.findIndex((t) => t.label === label && t.command === command);
        if (trigger >= 0) {
          const [fired] = this.pauseTriggers.splice(trigger, 1);
          this.pause(label);
          fired?.paused();
        }
        const hold = this.paused.get(label);
        if (hold) {
          this.count('paused');
          await hold.promise;
        }
        const rule = this.match(label, command, args);
        if (!rule) return next(args);
        this.count(rule.kind);
        this.onInjected?.(rule.kind, label, command);
        switch (rule.kind) {
          case 'throttle':
            throw fault('ThrottlingException', `injected throttling of ${command}`, 400);
          case 'server-error':
            throw fault('InternalServerError', `injected 500 on ${command}`, 500);
          case 'latency':
            await delay(rule.ms ?? 50);
            return next(args);
          case 'timeout':
            await delay(rule.ms ?? 50);
            throw fault('TimeoutError', `injected timeout of ${command}`, 0);
          case 'expired-iterator':
            // Not retried by the SDK: the consumer must get a fresh iterator itself.
            throw fault('ExpiredIteratorException', `injected expiry of the iterator of ${command}`, 400);
          case 'lost-response': {
            await next(args);
            throw fault('TimeoutError', `injected timeout of ${command} after it was applied`, 0);
          }
        }
      },
      { step: 'finalizeRequest', name: `testFaults:${label}`, priority: 'low' },
    );
  }

  inject(rule: FaultRule): void {
    this.rules.push({ rule, left: rule.times ?? Infinity });
  }

  /** Drops every rule (held clients stay held: see resume). */
  clear(): void {
    this.rules = [];
  }

  /** Holds every call of the clients labelled `label` from now on until resume(label). */
  pause(label: string): void {
    if (this.paused.has(label)) return;
    let resume: () => void = () => undefined;
    const promise = new Promise<void>((resolve) => (resume = resolve));
    this.paused.set(label, { promise, resume });
  }

  /**
   * Pauses `label` (see pause) when it next sends `command`: that call is the first one held.
   * Resolves once it is held.
   */
  pauseOn(label: string, command: string): Promise<void> {
    return new Promise((paused) => this.pauseTriggers.push({ label, command, paused }));
  }

  /** Whether `label` is held now. */
  isPaused(label: string): boolean {
    return this.paused.has(label);
  }

  resume(label: string): void {
    this.paused.get(label)?.resume();
    this.paused.delete(label);
  }

  resumeAll(): void {
    for (const label of [...this.paused.keys()]) this.resume(label);
  }

  private match(label: string, command: string, args: unknown): FaultRule | undefined {
    for (const entry of this.rules) {
      const { rule } = entry;
      if (entry.left <= 0) continue;
      if (rule.clients && !rule.clients.includes(label)) continue;
      if (rule.commands && !rule.commands.includes(command)) continue;
      if (rule.touching && !JSON.stringify((args as { input?: unknown }).input ?? null).includes(rule.touching))
        continue;
      if (rule.probability !== undefined && this.random() >= rule.probability) continue;
      entry.left--;
      return rule;
    }
    return undefined;
  }

  private count(kind: FaultKind | 'paused'): void {
    this.injected.set(kind, (this.injected.get(kind) ?? 0) + 1);
  }
}

/*
 * Middlewares for one server under test (`startTestServer({ configureClient })`). They go in the
 * initialize step, inside the server's capacity middleware, so an injected failure is counted as a
 * call, and before the SDK's retries, so the server sees it as sent.
 */

/**
 * Makes every call whose input names `leaky` fail with a plain Error full of internals (table
 * name, key, AWS and DynamoDB names, a request id), and every call naming `throttled` fail as
 * DynamoDB throttling: what a client must never see of an unexpected failure.
 */
export function failOnIds({ leaky, throttled }: { leaky: string; throttled?: string }) {
  return (client: DynamoDBClient): void => {
    client.middlewareStack.add(
      (next) => async (args) => {
        const input = JSON.stringify(args.input);
        if (input.includes(leaky)) {
          const table = /t-[0-9a-f-]{36}/.exec(input)?.[0] ?? 'unknown-table';
          // A plain Error: a ConditionalCheckFailedException would rightly be read as a business failure.
          const error = new Error(
            `ConditionalCheckFailed: AWS DynamoDB rejected the request on table ${table} for key PRODUCT#${leaky}: item attribute name is not a string`,
          );
          Object.assign(error, { $fault: 'server', $metadata: { httpStatusCode: 500, requestId: 'REQ123' } });
          throw error;
        }
        if (throttled !== undefined && input.includes(throttled)) {
          const error = new Error(`Rate of requests exceeds the allowed throughput on AWS DynamoDB table ${input}`);
          error.name = 'ThrottlingException';
          throw error;
        }
        return next(args);
      },
      { step: 'initialize', name: 'testFailOnIds' },
    );
  };
}

export interface TransactInput {
  TransactItems?: unknown[];
  ClientRequestToken?: string;
}

/** What `injectTransactionConflicts` does next; a test resets it before each case. */
export interface ConflictInjection {
  /** How many of the next TransactWriteItems calls to cancel with TransactionConflict. */
  conflictsLeft: number;
  /** Which action the injected conflict blames (the others get 'None'). */
  conflictingAction: number;
  /** Every TransactWriteItems input the server sent, injected or not, in order. */
  sent: TransactInput[];
  /** Runs just before a TransactWriteItems call that is not cancelled goes to DynamoDB. */
  beforeSend: (() => Promise<void>) | undefined;
}

/**
 * Cancels TransactWriteItems calls with TransactionConflict as `injection` says (DynamoDB Local
 * runs transactions one at a time and never reports it).
 */
export function injectTransactionConflicts(injection: ConflictInjection) {
  return (client: DynamoDBClient): void => {
    client.middlewareStack.add(
      (next, context) => async (args) => {
        if (context.commandName !== 'TransactWriteItemsCommand') return next(args);
        const input = args.input as TransactInput;
        injection.sent.push(structuredClone(input));
        if (injection.conflictsLeft > 0) {
          injection.conflictsLeft -= 1;
          throw new TransactionCanceledException({
            message: 'Transaction cancelled',
            $metadata: {},
            CancellationReasons: (input.TransactItems ?? []).map((_, index) => ({
              Code: index === injection.conflictingAction ? 'TransactionConflict' : 'None',
            })),
          });
        }
        await injection.beforeSend?.();
        return next(args);
      },
      { step: 'initialize', name: 'testInjectTransactionConflict' },
    );
  };
}
