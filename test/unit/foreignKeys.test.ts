/**
 * Items written outside the API's id rules (an import, a console edit) still map to dependency
 * tags, and never to a tag a receiver's tag pattern refuses: the producer side of invalidation.
 */
import { marshall } from '@aws-sdk/util-dynamodb';
import { describe, expect, it } from 'vitest';
import { newDependencyRecord, rangeQuery, recordItems } from '../../src/db/dependencyRecord.js';
import { categoryProductsQuery } from '../../src/db/pageQueries.js';
import { productToItem } from '../../src/table/codecs.js';
import type { Item } from '../../src/table/codecs.js';
import { emailTag, TAG_PATTERN, tagsOfChange, tagsOfWrite } from '../../src/table/dependencies.js';
import type { ItemKey } from '../../src/table/keys.js';
import { aProduct } from '../support/factories.js';

const image = (item: Item | ItemKey) => marshall(item, { removeUndefinedValues: true });

/** The Query of a category page, as pagination.ts sends it. */
const categoryPage = () => {
  const query = categoryProductsQuery('T', 'books');
  return rangeQuery(
    { TableName: 'T', IndexName: query.indexName, KeyConditionExpression: query.keyConditionExpression },
    query.range,
  );
};

describe('keys written outside the API (an import, a console edit)', () => {
  const odd = {
    ...productToItem(aProduct({ productId: 'p1', category: 'books' })),
    PK: 'PRODUCT#sku.import-42',
    SK: 'DETAILS',
    productId: 'sku.import-42',
  };
  const valid = (tags: string[]) => tags.every((tag) => TAG_PATTERN.test(tag));

  it('maps an id outside the id rules to a tag every receiver accepts, the one a page listing the item records', () => {
    const tags = tagsOfChange({ Keys: image({ PK: odd.PK, SK: odd.SK }), NewImage: image(odd) });
    expect(valid(tags)).toBe(true);
    const listed = newDependencyRecord();
    recordItems(listed, categoryPage(), { Items: [odd] });
    expect(listed.tags.size).toBe(1);
    expect(tags).toContain([...listed.tags][0]);
    expect(tags).toContain('category:books');
  });

  it('still names tags from the key alone (a KEYS_ONLY stream)', () => {
    const tags = tagsOfChange({ Keys: image({ PK: odd.PK, SK: odd.SK }) });
    expect(tags.length).toBeGreaterThan(0);
    expect(valid(tags)).toBe(true);
  });

  it.each([
    [
      "a sort key of no declared shape in a user's orders",
      { PK: 'USER#u1', SK: 'ORDER#junk' },
      ['user:u1', 'user-orders:u1', 'order'],
    ],
    // Any kind of the product's partition: the product, a review's copy, the rating.
    ['a partition key that names no id', { PK: 'PRODUCT#', SK: 'DETAILS' }, ['product', 'review', 'reviews']],
    ['an email guard of an odd address', { PK: 'EMAIL#A b@example.com', SK: 'UNIQUE' }, [emailTag('A b@example.com')]],
  ])('maps %s to what its partition tells, widening where a parameter is missing', (_, key, expected) => {
    const tags = tagsOfChange({ Keys: image(key), NewImage: image({ ...key, anything: 1 }) });
    expect(tags.sort()).toEqual([...expected].sort());
    expect(valid(tags)).toBe(true);
  });

  it('never emits a tag a receiver would refuse, whatever a key in a known partition holds', () => {
    const parts = ['', '#', 'a', 'sku.import-42', 'ü', 'x'.repeat(80), 'a#b', ' ', ':', 'ORDER#', 'PROFILE'];
    for (const prefix of ['USER#', 'PRODUCT#', 'ORDER#', 'EMAIL#', 'META#categories', 'META#stream', 'DOCUMENTS#']) {
      for (const pk of parts) {
        for (const sk of parts) {
          const key = { PK: `${prefix}${pk}`, SK: sk };
          const item = {
            ...key,
            GSI1PK: `CATEGORY#${pk}`,
            GSI2PK: `ORDERS#STATUS#${sk}#${pk}`,
            GSI4PK: `PRODUCTS#${sk}`,
          };
          const tags = [...tagsOfChange({ Keys: image(key), NewImage: image(item) }), ...tagsOfWrite(key)];
          expect(tags.filter((tag) => !TAG_PATTERN.test(tag))).toEqual([]);
        }
      }
    }
  });
});
