/**
 * A low-level command sent with its middleware resolved once per command class. The SDK's
 * `send` resolves the client's middleware stack for every command it sends: it copies the stack,
 * sorts it and builds the chain of handlers again (about a tenth of the SDK's CPU for a one-Query
 * page). The SDK's own `cacheMiddleware` option keeps that chain per command class instead; the
 * document client refuses the option, because its own commands add middleware per instance. This
 * is that option for the commands it is safe for: the low-level ones, sent without options and
 * without middleware of their own (a traced call adds its span's, telemetry/dynamoSpans.ts), by a
 * client whose `send` is the SDK's. Every middleware of the client still runs on every call
 * (retries, signing, errors, the capacity and metrics middleware), in the same order. A chain is
 * dropped when the client's stack changes (a middleware added or removed), so a middleware added
 * later is on every later call.
 */
import { DynamoDBDocumentClient } from '@aws-sdk/lib-dynamodb';

type Handler = (command: object) => Promise<{ output: unknown }>;

interface Resolvable {
  resolveMiddleware(stack: unknown, config: unknown, options: undefined): Handler;
}

interface Stack {
  add: (...args: never[]) => unknown;
  addRelativeTo: (...args: never[]) => unknown;
  use: (...args: never[]) => unknown;
  remove: (...args: never[]) => unknown;
  removeByTag: (...args: never[]) => unknown;
}

const MUTATORS = ['add', 'addRelativeTo', 'use', 'remove', 'removeByTag'] as const;

// Compared, never called: a client whose `send` is another (a test's, the bench's) is left as it is.
const SDK_SEND: unknown = Reflect.get(DynamoDBDocumentClient.prototype, 'send');

/** The chains of a client's stack by command class, emptied whenever the stack changes. */
const chains = new WeakMap<Stack, Map<unknown, Handler>>();

function chainsOf(stack: Stack): Map<unknown, Handler> {
  let byClass = chains.get(stack);
  if (byClass) return byClass;
  const created = (byClass = new Map<unknown, Handler>());
  chains.set(stack, created);
  for (const name of MUTATORS) {
    const original = stack[name].bind(stack) as (...args: unknown[]) => unknown;
    (stack as unknown as Record<string, unknown>)[name] = (...args: unknown[]) => {
      created.clear();
      return original(...args);
    };
  }
  return created;
}

/**
 * Sends `command` through `client` with its class's chain of middleware, kept; undefined when the
 * command cannot take this path (the caller sends it as the SDK does).
 */
export function leanSend(client: DynamoDBDocumentClient, command: object): Promise<unknown> | undefined {
  if (client.send !== SDK_SEND) return undefined; // a client that watches its calls sees every one
  const { middlewareStack, config } = client as unknown as { middlewareStack: Stack; config: unknown };
  const byClass = chainsOf(middlewareStack);
  let handler = byClass.get(command.constructor);
  if (!handler) {
    handler = (command as Resolvable).resolveMiddleware(middlewareStack, config, undefined);
    byClass.set(command.constructor, handler);
  }
  return handler(command).then((result) => result.output);
}
