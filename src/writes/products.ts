/**
 * createProduct and updateProduct, optimistic locking on `version`. Each category's product
 * counter (`META#categories`, src/table/entities/product.ts) moves in the same transaction as the product that
 * enters or leaves the category; an update that keeps the category is one UpdateItem.
 */
import { randomUUID } from 'node:crypto';
import { ConditionalCheckFailedException } from '@aws-sdk/client-dynamodb';
import { GetCommand, UpdateCommand } from '@aws-sdk/lib-dynamodb';
import type { UpdateCommandInput } from '@aws-sdk/lib-dynamodb';
import { unmarshall } from '@aws-sdk/util-dynamodb';
import type { DataSources } from '../db/loaders.js';
import { EntityType, itemToProduct, productToItem } from '../table/codecs.js';
import { categoryCounterKey, categoryGSI1PK, productGSI1SK, productKey, productPriceGSI3SK } from '../table/keys.js';
import type { ProductModel } from '../table/models.js';
import { Transaction, transactWrite } from '../db/transact.js';
import type { TransactItem } from '../db/transact.js';
import { failed, InputChecker, succeeded, userError } from './userErrors.js';
import type { WriteResult } from './userErrors.js';
import { INPUT_LIMITS } from '../table/limits.js';
import { checkCategory, checkId, checkInt, checkMoney, checkText } from './validate.js';

export interface CreateProductInput {
  productId?: string | null | undefined;
  name: string;
  description: string;
  category: string;
  price: string;
  stock: number;
}

export interface UpdateProductInput {
  productId: string;
  expectedVersion: number;
  name?: string | null | undefined;
  description?: string | null | undefined;
  category?: string | null | undefined;
  price?: string | null | undefined;
  stock?: number | null | undefined;
}

/** PutItem conditioned on the product not existing. */
export async function createProduct(
  { dynamo, tableName }: DataSources,
  input: CreateProductInput,
  now = new Date(),
): Promise<WriteResult<ProductModel>> {
  const check = new InputChecker();
  const productId = input.productId == null ? randomUUID() : checkId(check, 'productId', input.productId);
  const name = checkText(check, 'name', input.name, INPUT_LIMITS.productNameLength);
  const description = checkText(check, 'description', input.description, INPUT_LIMITS.descriptionLength, {
    multiline: true,
    allowEmpty: true,
  });
  const category = checkCategory(check, input.category);
  const priceCents = checkMoney(check, 'price', input.price);
  const stock = checkInt(check, ['stock'], input.stock, 0, INPUT_LIMITS.maxStock);
  if (
    !check.ok ||
    productId === undefined ||
    name === undefined ||
    description === undefined ||
    category === undefined ||
    priceCents === undefined ||
    stock === undefined
  ) {
    return failed(...check.errors);
  }
  const at = now.toISOString();
  const product: ProductModel = {
    kind: 'Product',
    productId,
    name,
    description,
    category,
    priceCents,
    stock,
    soldCount: 0,
    createdAt: at,
    updatedAt: at,
    version: 1,
  };
  const transaction = new Transaction()
    .add('product', {
      Put: { TableName: tableName, Item: productToItem(product), ConditionExpression: 'attribute_not_exists(PK)' },
    })
    .add('categoryCount', counterUpdate(tableName, category, +1));
  const outcome = await transactWrite(dynamo.doc, transaction);
  if (outcome.committed) return succeeded(product, transaction.touched);
  if (outcome.cancellation.failed('product')) {
    return failed(userError('PRODUCT_EXISTS', ['productId'], `A product with productId "${productId}" already exists`));
  }
  throw new Error(`createProduct cancelled unexpectedly: ${outcome.cancellation.describe()}`);
}

/** Moves a category's product counter by `delta`; creates the counter item the first time. */
function counterUpdate(tableName: string, category: string, delta: 1 | -1): TransactItem {
  return {
    Update: {
      TableName: tableName,
      Key: categoryCounterKey(category),
      UpdateExpression: 'SET entityType = :type, #name = :name ADD productCount :delta',
      ExpressionAttributeNames: { '#name': 'name' },
      ExpressionAttributeValues: { ':type': EntityType.Category, ':name': category, ':delta': delta },
    },
  };
}

/**
 * One UpdateItem conditioned on `version = expectedVersion`. The item as it was comes back
 * with a failed condition (ReturnValuesOnConditionCheckFailure), which tells NOT_FOUND from
 * VERSION_CONFLICT without a read first. A category change is a read and a transaction
 * instead (moveCategory), as the old category's counter must move too.
 */
export async function updateProduct(
  data: DataSources,
  input: UpdateProductInput,
  now = new Date(),
): Promise<WriteResult<ProductModel>> {
  const { dynamo, tableName } = data;
  const check = new InputChecker();
  const productId = checkId(check, 'productId', input.productId);
  const changes: Record<string, unknown> = {};
  if (input.name != null) changes.name = checkText(check, 'name', input.name, INPUT_LIMITS.productNameLength);
  if (input.description != null) {
    changes.description = checkText(check, 'description', input.description, INPUT_LIMITS.descriptionLength, {
      multiline: true,
      allowEmpty: true,
    });
  }
  if (input.category != null) changes.category = checkCategory(check, input.category);
  if (input.price != null) changes.price = checkMoney(check, 'price', input.price);
  if (input.stock != null) changes.stock = checkInt(check, ['stock'], input.stock, 0, INPUT_LIMITS.maxStock);
  if (Object.keys(changes).length === 0) check.invalid(null, 'Give at least one field to change');
  if (!check.ok || productId === undefined) return failed(...check.errors);

  const names: Record<string, string> = { '#version': 'version', '#updatedAt': 'updatedAt' };
  const values: Record<string, unknown> = { ':expected': input.expectedVersion, ':one': 1, ':now': now.toISOString() };
  const sets = ['#version = #version + :one', '#updatedAt = :now'];
  for (const [attribute, value] of Object.entries(changes)) {
    names[`#${attribute}`] = attribute;
    values[`:${attribute}`] = value;
    sets.push(`#${attribute} = :${attribute}`);
  }
  // A new name moves the product in GSI1 and GSI4 (by name), a new category in GSI1 and GSI3.
  if (typeof changes.name === 'string') {
    values[':gsi1sk'] = productGSI1SK(changes.name, productId);
    sets.push('GSI1SK = :gsi1sk');
  }
  // GSI3 and GSI5 list by price: a new price moves the product there.
  if (typeof changes.price === 'number') {
    values[':gsi3sk'] = productPriceGSI3SK(changes.price, productId);
    sets.push('GSI3SK = :gsi3sk');
  }
  if (typeof changes.category === 'string') {
    values[':gsi1pk'] = categoryGSI1PK(changes.category);
    sets.push('GSI1PK = :gsi1pk');
  }
  const update: UpdateCommandInput = {
    TableName: tableName,
    Key: productKey(productId),
    UpdateExpression: `SET ${sets.join(', ')}`,
    ConditionExpression: 'attribute_exists(PK) AND #version = :expected',
    ExpressionAttributeNames: names,
    ExpressionAttributeValues: values,
  };
  const versionConflict = (version: unknown) =>
    failed<ProductModel>(
      userError(
        'VERSION_CONFLICT',
        ['expectedVersion'],
        `The product is at version ${String(version)}, not ${input.expectedVersion}; re-read it and retry`,
      ),
    );
  const notFound = () =>
    failed<ProductModel>(userError('NOT_FOUND', ['productId'], `No product with productId "${productId}"`));
  if (typeof changes.category === 'string') {
    return moveCategory(data, productId, changes, update, { versionConflict, notFound });
  }
  try {
    const result = await dynamo.doc.send(
      new UpdateCommand({ ...update, ReturnValues: 'ALL_NEW', ReturnValuesOnConditionCheckFailure: 'ALL_OLD' }),
    );
    return succeeded(itemToProduct(result.Attributes ?? {}), [productKey(productId)]);
  } catch (error) {
    if (error instanceof ConditionalCheckFailedException) {
      // The item as it was rides on the exception: absent means the product does not exist.
      return error.Item ? versionConflict(unmarshall(error.Item).version) : notFound();
    }
    throw error;
  }
}

/**
 * A category change: the product's update plus both counters in one transaction. The old
 * category comes from a strongly consistent read, and the update is conditioned on it too, so a
 * concurrent move cannot make the counters count the product twice.
 */
async function moveCategory(
  { dynamo, tableName }: DataSources,
  productId: string,
  changes: Record<string, unknown>,
  update: UpdateCommandInput,
  answers: {
    versionConflict: (version: unknown) => WriteResult<ProductModel>;
    notFound: () => WriteResult<ProductModel>;
  },
): Promise<WriteResult<ProductModel>> {
  const read = await dynamo.doc.send(
    new GetCommand({ TableName: tableName, Key: productKey(productId), ConsistentRead: true }),
  );
  if (!read.Item) return answers.notFound();
  const before = itemToProduct(read.Item);
  if (before.version !== update.ExpressionAttributeValues?.[':expected'])
    return answers.versionConflict(before.version);
  const transaction = new Transaction().add('product', {
    Update: {
      TableName: tableName,
      Key: productKey(productId),
      UpdateExpression: update.UpdateExpression as string,
      ConditionExpression: `${update.ConditionExpression} AND #category = :oldCategory`,
      ExpressionAttributeNames: { ...update.ExpressionAttributeNames, '#category': 'category' },
      ExpressionAttributeValues: { ...update.ExpressionAttributeValues, ':oldCategory': before.category },
      ReturnValuesOnConditionCheckFailure: 'ALL_OLD',
    },
  });
  const category = String(changes.category);
  if (before.category !== category) {
    transaction.add('oldCategoryCount', counterUpdate(tableName, before.category, -1));
    transaction.add('newCategoryCount', counterUpdate(tableName, category, +1));
  }
  const outcome = await transactWrite(dynamo.doc, transaction);
  if (!outcome.committed) {
    const old = outcome.cancellation.old('product');
    if (!old) return answers.notFound();
    // Someone else wrote the product between the read and the transaction.
    return answers.versionConflict(old.version);
  }
  // A transaction returns no item; the version condition held, so the product is now exactly
  // the one read plus the changes.
  const after: ProductModel = {
    ...before,
    ...(typeof changes.name === 'string' ? { name: changes.name } : {}),
    ...(typeof changes.description === 'string' ? { description: changes.description } : {}),
    ...(typeof changes.price === 'number' ? { priceCents: changes.price } : {}),
    ...(typeof changes.stock === 'number' ? { stock: changes.stock } : {}),
    category,
    version: before.version + 1,
    updatedAt: String(update.ExpressionAttributeValues?.[':now']),
  };
  return succeeded(after, transaction.touched);
}
