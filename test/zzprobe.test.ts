import { it } from 'vitest';
import { putItems } from '../src/db/batchWrite.js';
import { demoItems } from '../src/seed/seed.js';
import { startTestServer } from './support/harness.js';

it('probe', async () => {
  const s = await startTestServer({
    introspection: false,
    configureClient: (client) =>
      client.middlewareStack.add(
        (next) => async (args) => {
          const input = JSON.stringify(args.input);
          if (input.includes('boom')) {
            const table = (args.input as { TableName?: string }).TableName ?? JSON.stringify(args.input).slice(0, 100);
            const e = new Error(`ConditionalCheckFailed: DynamoDB table ${table} said no (AWS)`);
            e.name = 'ConditionalCheckFailedException';
            throw e;
          }
          return next(args);
        },
        { step: 'initialize', name: 'boom' },
      ),
  });
  await putItems(s.dynamo.doc, s.tableName, demoItems());
  const show = async (label: string, q: string, v?: Record<string, unknown>, h?: Record<string, string>) =>
    console.log(label, JSON.stringify(await s.gql(q, v, h)));
  console.log(s.tableName);
  await show('boom', '{ product(productId: "boom") { name } }');
  await show('boomorder', '{ order(orderId: "boom") { orderId } }');
  await show('boomcreate', 'mutation { createProduct(input: {productId: "boom", name: "b", description: "d", category: "c", price: "1.00", stock: 1}) { product { productId } userErrors { code } } }');
  await show('boomcancel', 'mutation { cancelOrder(input: {orderId: "boom"}) { order { orderId } userErrors { code } } }');
  await s.stop();
});
