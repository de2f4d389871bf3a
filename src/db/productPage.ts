/**
 * A product's reviews (access patterns 19-21 in docs/access-patterns.md), as pure functions: the
 * connection's Query (newest first on the table's sort key, by stars on LSI1), and the product
 * page's one read of the product's item collection. In the product's partition the product
 * (`DETAILS`) sorts right before its rating (`RATING`), and that right before its reviews, newest
 * first (src/table/entities/review.ts): one ascending Query over `SK BETWEEN 'DETAILS' AND
 * 'REVIEW#~'` returns the product, its rating and the first page of reviews.
 *
 * The page the fused read builds is the one readPage would build (the same cursors, bound to
 * the same connection; `hasNextPage` from one item more than the page).
 */
import type { DynamoDBDocumentClient, QueryCommandInput } from '@aws-sdk/lib-dynamodb';
import type { Item } from '../table/codecs.js';
import { LSI1 } from '../table/definition.js';
import { PRODUCT } from '../table/entities/product.js';
import { PRODUCT_PK, PRODUCT_REVIEWS, REVIEW_SK, STARS_SK } from '../table/entities/ranges.js';
import { PRODUCT_RATING, PRODUCT_REVIEW } from '../table/entities/review.js';
import type { ProductModel, ProductRatingModel, ReviewModel } from '../table/models.js';
import { unmarshallItems } from './attributeValues.js';
import type { CursorCodec } from './cursor.js';
import { rangeQuery } from './dependencyRecord.js';
import { buildPage, planPage, readPage } from './pagination.js';
import type { ConnectionArgs, Page, PageQuery } from './pagination.js';

/** The orders of a product's reviews (the schema's ReviewOrder). */
export type ReviewOrder = 'NEWEST' | 'HIGHEST_RATING' | 'LOWEST_RATING';

/**
 * A product's reviews: newest first (the table's sort key, stored newest first, read
 * ascending), or by stars through LSI1 (most first reads it descending; fewest first is the
 * same order the other way round). Strongly consistent: a review shows at once.
 */
export function productReviewsQuery(tableName: string, productId: string, order: ReviewOrder): PageQuery<ReviewModel> {
  const common = {
    tableName,
    consistentRead: true,
    decode: PRODUCT_REVIEW.codec.fromItem,
    range: PRODUCT_REVIEWS.read({ productId }),
    expressionAttributeValues: {
      ':pk': PRODUCT_PK.build({ productId }),
      ':prefix': order === 'NEWEST' ? REVIEW_SK.prefix : STARS_SK.prefix,
    },
  };
  if (order === 'NEWEST') {
    return {
      ...common,
      connection: `Product.reviews:${productId}`,
      keyAttributes: ['PK', 'SK'],
      keyConditionExpression: 'PK = :pk AND begins_with(SK, :prefix)',
      ascending: true,
    };
  }
  return {
    ...common,
    connection: `Product.reviews:${productId}:${order}`,
    indexName: LSI1,
    keyAttributes: ['PK', 'SK', 'LSI1SK'],
    keyConditionExpression: 'PK = :pk AND begins_with(LSI1SK, :prefix)',
    ascending: order === 'LOWEST_RATING',
  };
}

/**
 * The page size if `Product.reviews(orderBy, args)` can come with the product in one read:
 * newest first, no cursor, forward. Null otherwise, and for arguments planPage refuses (the
 * ordinary path reports those, on the field that has them).
 */
export function fusableReviewsPage(
  order: ReviewOrder,
  args: ConnectionArgs,
  reviewsQuery: PageQuery<ReviewModel>,
  codec: CursorCodec,
): number | null {
  if (order !== 'NEWEST' || args.after != null || args.before != null || args.last != null) return null;
  try {
    return planPage(args, reviewsQuery, codec).size;
  } catch {
    return null;
  }
}

const PRODUCT_SK = PRODUCT.spec.key.SK.prefix;
const RATING_SK = PRODUCT_RATING.spec.key.SK.prefix;

/** The Query: from the product up to the end of its reviews, the product, its rating, `size` reviews and one more. */
export function productPageParams(tableName: string, productId: string, size: number): QueryCommandInput {
  return {
    TableName: tableName,
    KeyConditionExpression: 'PK = :pk AND SK BETWEEN :product AND :reviewsEnd',
    // `~` sorts after every character of a review's sort key.
    ExpressionAttributeValues: {
      ':pk': PRODUCT_PK.build({ productId }),
      ':product': PRODUCT_SK,
      ':reviewsEnd': `${REVIEW_SK.prefix}~`,
    },
    ScanIndexForward: true,
    // Strongly consistent, as the BatchGetItem and the Query it replaces.
    ConsistentRead: true,
    Limit: size + 3,
  };
}

export interface ProductPage {
  product: ProductModel | null;
  rating: ProductRatingModel | null;
  reviews: Page<ReviewModel>;
}

/**
 * Reads the product, its rating and the first `size` of its reviews (`reviewsQuery` is the
 * connection the page belongs to). Costs one Query; a second read by readPage only where
 * DynamoDB cut the first short (its 1 MB limit) or the range held an item of another kind.
 */
export async function readProductPage(
  doc: DynamoDBDocumentClient,
  tableName: string,
  productId: string,
  size: number,
  reviewsQuery: PageQuery<ReviewModel>,
  codec: CursorCodec,
): Promise<ProductPage> {
  const params = productPageParams(tableName, productId, size);
  // It reads the product, its rating and its reviews' range: it depends on all three.
  const tags = [...PRODUCT.tagsOf({ productId }), ...PRODUCT_RATING.tagsOf({ productId }), ...reviewsQuery.range.tags];
  const result = await doc.send(rangeQuery(params, { tags, byIndex: false }));
  const items: Item[] = unmarshallItems(result.Items);
  let at = 0;
  const productItem = items[at]?.SK === PRODUCT_SK ? items[at++] : undefined;
  const ratingItem = items[at]?.SK === RATING_SK ? items[at++] : undefined;
  const reviews = items.slice(at);
  const product = productItem ? PRODUCT.codec.fromItem(productItem) : null;
  const rating = ratingItem ? PRODUCT_RATING.codec.fromItem(ratingItem) : null;
  const complete = result.LastEvaluatedKey === undefined || reviews.length > size;
  const onlyReviews = reviews.every((item) => typeof item.SK === 'string' && item.SK.startsWith(REVIEW_SK.prefix));
  if (!complete || !onlyReviews) {
    return { product, rating, reviews: (await readPage(doc, reviewsQuery, { first: size }, codec)).page };
  }
  const plan = { size, backward: false, cursor: undefined };
  return { product, rating, reviews: buildPage(reviews, plan, reviews.length > size, reviewsQuery, codec).page };
}
