/**
 * `npm run example:client`: a typed client that uses only the documents codegen generated
 * from client/operations (see codegen.yml). It signs up (createUser: the profile is the
 * token's subject's, so a token is required; alice's exists in the demo data), walks alice's
 * orders page by page and places an order against a running server (GRAPHQL_URL, default
 * http://localhost:4000/graphql), as alice (TABLEGRAPH_TOKEN: a bearer token).
 *
 * Each request first sends only the document's sha256 hash (a persisted document: the server
 * knows every document in client/generated/persisted-documents.json); should the server not
 * know it, the client resends with the full document, as automatic persisted queries do.
 */
import { randomUUID } from 'node:crypto';
import { parseArgs } from 'node:util';
import { CreateUserDocument, PlaceOrderDocument, UserOrdersPageDocument } from './generated/graphql.js';
import type { TypedDocumentString, UserOrdersPageQuery } from './generated/graphql.js';

// Standalone like the rest of client/: the command line with node:util alone.
const USAGE = `usage: npm run example:client

Signs up as alice, walks her orders page by page and places an order, against a running server
(GRAPHQL_URL, default http://localhost:4000/graphql) with a bearer token (TABLEGRAPH_TOKEN; npm run
example:client mints one). Takes no flags.
`;
try {
  const { values } = parseArgs({ options: { help: { type: 'boolean', short: 'h' } } });
  if (values.help) {
    process.stdout.write(USAGE);
    process.exit(0);
  }
} catch (error) {
  process.stderr.write(
    `example:client: ${(error as Error).message.split('.')[0]} (npm run example:client -- --help shows the usage)\n`,
  );
  process.exit(2);
}

const endpoint = process.env.GRAPHQL_URL ?? 'http://localhost:4000/graphql';
/** A bearer token for alice; `npm run example:client` mints a local one with `npm run token`. */
const token = process.env.TABLEGRAPH_TOKEN;

interface GraphQLResponse<T> {
  data?: T | null;
  errors?: { message: string; extensions?: { code?: string } }[];
}

async function post<T>(body: Record<string, unknown>): Promise<GraphQLResponse<T>> {
  const response = await fetch(endpoint, {
    method: 'POST',
    headers: {
      'content-type': 'application/json',
      accept: 'application/graphql-response+json',
      ...(token ? { authorization: `Bearer ${token}` } : {}),
    },
    body: JSON.stringify(body),
  });
  return (await response.json()) as GraphQLResponse<T>;
}

/** Runs a generated document; the result and variables are typed by the document itself. */
export async function execute<TResult, TVariables>(
  document: TypedDocumentString<TResult, TVariables>,
  variables: TVariables,
): Promise<TResult> {
  const hash = String(document.__meta__?.hash ?? '').replace(/^sha256:/, '');
  const persistedQuery = { version: 1, sha256Hash: hash };
  let result = await post<TResult>({ variables, extensions: { persistedQuery } });
  if (result.errors?.some((error) => error.extensions?.code === 'PERSISTED_QUERY_NOT_FOUND')) {
    result = await post<TResult>({ query: document.toString(), variables });
  }
  if (result.errors?.length || !result.data) {
    throw new Error(`GraphQL errors: ${result.errors?.map((error) => error.message).join('; ') ?? 'no data'}`);
  }
  return result.data;
}

async function main(): Promise<void> {
  if (!token) throw new Error('set TABLEGRAPH_TOKEN to a bearer token (npm run token -- --sub alice)');
  // No userId in the input: the server takes the token's subject.
  const signUp = await execute(CreateUserDocument, { input: { email: 'alice@example.com', name: 'Alice Example' } });
  const signUpCodes = signUp.createUser.userErrors.map((error) => error.code);
  if (signUp.createUser.user) console.log(`signed up as ${signUp.createUser.user.userId}`);
  else if (signUpCodes.includes('USER_EXISTS')) console.log('profile exists already (the demo data has alice)');
  else throw new Error(`createUser failed: ${signUp.createUser.userErrors.map((error) => error.message).join('; ')}`);

  let after: string | null = null;
  let page = 0;
  let seen = 0;
  do {
    // Annotated because `after` feeds back into the loop: TypeScript cannot infer through that cycle.
    const data: UserOrdersPageQuery = await execute(UserOrdersPageDocument, { userId: 'alice', first: 10, after });
    if (!data.user) throw new Error('user alice not found: is the demo data seeded? (npm run seed)');
    const { orders } = data.user;
    page += 1;
    seen += orders.edges.length;
    console.log(
      `page ${page}: ${orders.edges.map((edge) => `${edge.node.orderId} ${edge.node.total.amount}`).join(', ')}`,
    );
    after = orders.pageInfo.hasNextPage ? orders.pageInfo.endCursor : null;
  } while (after);
  console.log(`walked ${seen} orders of alice in ${page} pages`);

  const placed = await execute(PlaceOrderDocument, {
    input: {
      userId: 'alice',
      idempotencyKey: `example-${randomUUID()}`,
      items: [{ productId: 'mouse-m3', quantity: 1 }],
    },
  });
  const { order, userErrors } = placed.placeOrder;
  if (!order)
    throw new Error(`placeOrder failed: ${userErrors.map((error) => `${error.code} ${error.message}`).join('; ')}`);
  console.log(`placed order ${order.orderId} (${order.status}) for ${order.total.amount} ${order.total.currencyCode}`);
}

main().catch((error: unknown) => {
  console.error(`example client: ${error instanceof Error ? error.message : String(error)}`);
  process.exit(1);
});
