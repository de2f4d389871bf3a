/** createProduct and updateProduct: single conditional writes, optimistic locking on `version`. */
import { randomUUID } from 'node:crypto';
import { ConditionalCheckFailedException } from '@aws-sdk/client-dynamodb';
import { PutCommand, UpdateCommand } from '@aws-sdk/lib-dynamodb';
import { unmarshall } from '@aws-sdk/util-dynamodb';
import type { DataSources } from '../db/loaders.js';
import { itemToProduct, productToItem } from '../table/codecs.js';
import { categoryGSI1PK, productGSI1SK, productKey } from '../table/keys.js';
import type { ProductModel } from '../table/models.js';
import { failed, InputChecker, succeeded, userError } from './userErrors.js';
import type { WriteResult } from './userErrors.js';
import { checkCategory, checkId, checkInt, checkMoney, checkText, LIMITS } from './validate.js';

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
  const name = checkText(check, 'name', input.name, LIMITS.productNameLength);
  const description = checkText(check, 'description', input.description, LIMITS.descriptionLength, {
    multiline: true,
    allowEmpty: true,
  });
  const category = checkCategory(check, input.category);
  const priceCents = checkMoney(check, 'price', input.price);
  const stock = checkInt(check, ['stock'], input.stock, 0, LIMITS.maxStock);
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
  try {
    await dynamo.doc.send(
      new PutCommand({
        TableName: tableName,
        Item: productToItem(product),
        ConditionExpression: 'attribute_not_exists(PK)',
      }),
    );
    return succeeded(product, [productKey(productId)]);
  } catch (error) {
    if (error instanceof ConditionalCheckFailedException) {
      return failed(
        userError('PRODUCT_EXISTS', ['productId'], `A product with productId "${productId}" already exists`),
      );
    }
    throw error;
  }
}

/**
 * One UpdateItem conditioned on `version = expectedVersion`. The item as it was comes back
 * with a failed condition (ReturnValuesOnConditionCheckFailure), which tells NOT_FOUND from
 * VERSION_CONFLICT without a read first.
 */
export async function updateProduct(
  { dynamo, tableName }: DataSources,
  input: UpdateProductInput,
  now = new Date(),
): Promise<WriteResult<ProductModel>> {
  const check = new InputChecker();
  const productId = checkId(check, 'productId', input.productId);
  const changes: Record<string, unknown> = {};
  if (input.name != null) changes.name = checkText(check, 'name', input.name, LIMITS.productNameLength);
  if (input.description != null) {
    changes.description = checkText(check, 'description', input.description, LIMITS.descriptionLength, {
      multiline: true,
      allowEmpty: true,
    });
  }
  if (input.category != null) changes.category = checkCategory(check, input.category);
  if (input.price != null) changes.price = checkMoney(check, 'price', input.price);
  if (input.stock != null) changes.stock = checkInt(check, ['stock'], input.stock, 0, LIMITS.maxStock);
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
  // GSI1 lists a category by name: a new name or category moves the product in the index.
  if (typeof changes.name === 'string') {
    values[':gsi1sk'] = productGSI1SK(changes.name, productId);
    sets.push('GSI1SK = :gsi1sk');
  }
  if (typeof changes.category === 'string') {
    values[':gsi1pk'] = categoryGSI1PK(changes.category);
    sets.push('GSI1PK = :gsi1pk');
  }
  try {
    const result = await dynamo.doc.send(
      new UpdateCommand({
        TableName: tableName,
        Key: productKey(productId),
        UpdateExpression: `SET ${sets.join(', ')}`,
        ConditionExpression: 'attribute_exists(PK) AND #version = :expected',
        ExpressionAttributeNames: names,
        ExpressionAttributeValues: values,
        ReturnValues: 'ALL_NEW',
        ReturnValuesOnConditionCheckFailure: 'ALL_OLD',
      }),
    );
    return succeeded(itemToProduct(result.Attributes ?? {}), [productKey(productId)]);
  } catch (error) {
    if (error instanceof ConditionalCheckFailedException) {
      // The item as it was rides on the exception: absent means the product does not exist.
      return error.Item
        ? failed(
            userError(
              'VERSION_CONFLICT',
              ['expectedVersion'],
              `The product is at version ${String(unmarshall(error.Item).version)}, not ${input.expectedVersion}; re-read it and retry`,
            ),
          )
        : failed(userError('NOT_FOUND', ['productId'], `No product with productId "${productId}"`));
    }
    throw error;
  }
}
