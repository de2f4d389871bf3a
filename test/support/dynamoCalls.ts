/**
 * The DynamoDB IAM actions a bundle's own code calls (a function's, a container's), read from the
 * bundle itself: after esbuild's tree shaking only code the entry can reach is left, and the
 * sections of the project's modules (esbuild marks each with `// src/...`) name their SDK
 * commands and their transaction actions. SDK internals (waiters, paginators) are not its calls.
 */
const COMMAND_ACTIONS: Record<string, string> = {
  Get: 'GetItem',
  GetItem: 'GetItem',
  BatchGet: 'BatchGetItem',
  BatchGetItem: 'BatchGetItem',
  Query: 'Query',
  Scan: 'Scan',
  Put: 'PutItem',
  PutItem: 'PutItem',
  Update: 'UpdateItem',
  UpdateItem: 'UpdateItem',
  Delete: 'DeleteItem',
  DeleteItem: 'DeleteItem',
  BatchWrite: 'BatchWriteItem',
  BatchWriteItem: 'BatchWriteItem',
  TransactGet: 'GetItem',
  TransactGetItems: 'GetItem',
  DescribeTable: 'DescribeTable',
  UpdateTable: 'UpdateTable',
  CreateTable: 'CreateTable',
};
const TRANSACTION_ACTIONS: Record<string, string> = {
  Put: 'PutItem',
  Update: 'UpdateItem',
  Delete: 'DeleteItem',
  ConditionCheck: 'ConditionCheckItem',
};

/** The project's own sections of an esbuild bundle (not minified), by module path. */
export function projectSections(bundle: string): Map<string, string> {
  const sections = new Map<string, string>();
  const marks = [...bundle.matchAll(/^\/\/ ((?:src|resolvers)\/\S+\.ts)$/gm)];
  // A section runs to the next module mark of any kind (node_modules included).
  const allMarks = [...bundle.matchAll(/^\/\/ (\S+\.(?:ts|js|mjs|cjs|json))$/gm)].map((mark) => mark.index);
  for (const mark of marks) {
    const next = allMarks.find((index) => index > mark.index) ?? bundle.length;
    sections.set(mark[1] ?? '', (sections.get(mark[1] ?? '') ?? '') + bundle.slice(mark.index, next));
  }
  return sections;
}

/**
 * `dynamodb:<Action>` for every command the project's code sends and every transaction part it
 * builds, but those `skip` leaves out (a module's calls that never run where the bundle is deployed).
 */
export function dynamoActionsCalled(
  bundle: string,
  skip: (module: string, action: string) => boolean = () => false,
): string[] {
  const actions = new Set<string>();
  for (const [module, code] of projectSections(bundle)) {
    const add = (action: string) => {
      if (!skip(module, action)) actions.add(action);
    };
    // esbuild turns `import { QueryCommand } from '@aws-sdk/lib-dynamodb'` into `import_lib_dynamodb3.QueryCommand`.
    for (const [, command] of code.matchAll(/\bnew import_(?:lib|client)_dynamodb\d*\.(\w+?)Command\(/g)) {
      if (command === 'TransactWrite' || command === 'TransactWriteItems') continue;
      const action = COMMAND_ACTIONS[command ?? ''];
      if (!action) throw new Error(`no IAM action known for ${command}Command: add it to test/support/dynamoCalls.ts`);
      add(`dynamodb:${action}`);
    }
    for (const [, part] of code.matchAll(/\b(Put|Update|Delete|ConditionCheck): \{/g)) {
      add(`dynamodb:${TRANSACTION_ACTIONS[part ?? '']}`);
    }
    // A transaction part passed by name: `{ Update: profileUpdate }`.
    for (const [, part] of code.matchAll(/\{ (Put|Update|Delete|ConditionCheck): \w+ \}/g)) {
      add(`dynamodb:${TRANSACTION_ACTIONS[part ?? '']}`);
    }
  }
  return [...actions].sort();
}

/** `dynamodb:<Action>` for every DynamoDB Streams command the project's code sends. */
export function streamActionsCalled(bundle: string): string[] {
  const actions = new Set<string>();
  for (const code of projectSections(bundle).values()) {
    for (const [, command] of code.matchAll(/\bnew import_client_dynamodb_streams\d*\.(\w+?)Command\(/g)) {
      actions.add(`dynamodb:${command ?? ''}`);
    }
  }
  return [...actions].sort();
}
