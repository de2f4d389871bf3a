/**
 * The catalogue: the whole shop or one category, sorted by name or price either way, narrowed by
 * name (its start: the API matches name prefixes), a price range and stock, a page at a time.
 * The filters live in the address (`?sort=price-asc&min=10`), so a listing can be shared.
 */
import { useEffect, useState } from 'react';
import { request } from '../api';
import type { ApiError } from '../api';
import { cart } from '../cart';
import { Empty, Loading, Problem } from '../components/States';
import { CatalogDocument, CategoriesDocument } from '../gql/graphql';
import type { CatalogQuery, ProductOrder } from '../gql/graphql';
import { formatMoney, parsePriceInput, toCents } from '../money';
import { href, replaceQuery } from '../route';
import { useQuery } from '../useQuery';

type Product = CatalogQuery['products']['nodes'][number];

const SORTS: Record<string, { label: string; order: ProductOrder }> = {
  'name-asc': { label: 'Name, A to Z', order: { field: 'NAME', direction: 'ASC' } },
  'name-desc': { label: 'Name, Z to A', order: { field: 'NAME', direction: 'DESC' } },
  'price-asc': { label: 'Price, low to high', order: { field: 'PRICE', direction: 'ASC' } },
  'price-desc': { label: 'Price, high to low', order: { field: 'PRICE', direction: 'DESC' } },
};
const PAGE_SIZE = 12;

const title = (category: string | undefined) =>
  category ? category.charAt(0).toUpperCase() + category.slice(1) : 'All products';

export function CatalogPage({ category, query }: { category: string | undefined; query: URLSearchParams }) {
  const [search, setSearch] = useState(query.get('q') ?? '');
  const [sort, setSort] = useState(SORTS[query.get('sort') ?? ''] ? (query.get('sort') as string) : 'name-asc');
  const [min, setMin] = useState(query.get('min') ?? '');
  const [max, setMax] = useState(query.get('max') ?? '');
  const [inStock, setInStock] = useState(query.get('stock') === '1');
  const minPrice = parsePriceInput(min);
  const maxPrice = parsePriceInput(max);
  const rangeError =
    (min && !minPrice) || (max && !maxPrice)
      ? 'Enter prices like 20 or 19.99.'
      : minPrice && maxPrice && toCents(minPrice) > toCents(maxPrice)
        ? 'The lowest price is above the highest.'
        : '';

  useEffect(() => {
    const next = new URLSearchParams();
    if (search) next.set('q', search);
    if (sort !== 'name-asc') next.set('sort', sort);
    if (min) next.set('min', min);
    if (max) next.set('max', max);
    if (inStock) next.set('stock', '1');
    replaceQuery(next);
  }, [search, sort, min, max, inStock]);

  const variables = {
    category: category ?? null,
    namePrefix: search.trim() || null,
    inStock: inStock ? true : null,
    minPrice: rangeError ? null : (minPrice ?? null),
    maxPrice: rangeError ? null : (maxPrice ?? null),
    orderBy: SORTS[sort]?.order ?? null,
    first: PAGE_SIZE,
  };
  const listing = useQuery(CatalogDocument, variables);
  const [more, setMore] = useState<{ key: string; products: Product[]; after: string | null } | undefined>();
  const [moreState, setMoreState] = useState<'idle' | 'loading' | ApiError>('idle');
  const key = JSON.stringify(variables);
  const extra = more?.key === key ? more.products : [];
  const first = listing.status === 'done' ? listing.data.products : undefined;
  const after = more?.key === key ? more.after : first?.pageInfo.hasNextPage ? first.pageInfo.endCursor : null;

  const loadMore = async () => {
    setMoreState('loading');
    try {
      const data = await request(CatalogDocument, { ...variables, after });
      const page = data.products;
      setMore({
        key,
        products: [...extra, ...page.nodes],
        after: page.pageInfo.hasNextPage ? page.pageInfo.endCursor : null,
      });
      setMoreState('idle');
    } catch (error) {
      setMoreState(error as ApiError);
    }
  };

  const clear = () => {
    setSearch('');
    setMin('');
    setMax('');
    setInStock(false);
  };
  const products = first ? [...first.nodes, ...extra] : [];

  return (
    <section aria-labelledby="page-title">
      <h1 id="page-title" tabIndex={-1}>
        {title(category)}
      </h1>
      <CategoryNav current={category} />
      <form className="filters" onSubmit={(event) => event.preventDefault()} aria-label="Sort and filter">
        <label>
          Name starts with
          <input type="search" value={search} onChange={(e) => setSearch(e.target.value)} maxLength={100} />
        </label>
        <label>
          Sort by
          <select value={sort} onChange={(e) => setSort(e.target.value)}>
            {Object.entries(SORTS).map(([value, { label }]) => (
              <option key={value} value={value}>
                {label}
              </option>
            ))}
          </select>
        </label>
        <fieldset className="price-range" aria-describedby={rangeError ? 'range-error' : undefined}>
          <legend>Price ($)</legend>
          <label>
            From
            <input value={min} onChange={(e) => setMin(e.target.value)} inputMode="decimal" size={7} />
          </label>
          <label>
            To
            <input value={max} onChange={(e) => setMax(e.target.value)} inputMode="decimal" size={7} />
          </label>
        </fieldset>
        <label className="check">
          <input type="checkbox" checked={inStock} onChange={(e) => setInStock(e.target.checked)} />
          In stock only
        </label>
      </form>
      {rangeError && (
        <p id="range-error" className="field-error" role="alert">
          {rangeError}
        </p>
      )}

      {listing.status === 'loading' && <Loading label="Loading products" />}
      {listing.status === 'failed' && <Problem error={listing.error} onRetry={listing.retry} />}
      {listing.status === 'done' && products.length === 0 && (
        <Empty>
          <p>No products match these filters.</p>
          <button type="button" onClick={clear}>
            Clear the filters
          </button>
        </Empty>
      )}
      {products.length > 0 && (
        <>
          <p className="count" aria-live="polite">
            {first?.totalCount != null ? `${first.totalCount} products` : `${products.length} shown`}
          </p>
          <ul className="grid" aria-label="Products">
            {products.map((product) => (
              <ProductCard key={product.productId} product={product} />
            ))}
          </ul>
        </>
      )}
      {listing.status === 'done' && after && (
        <div className="more">
          <button type="button" onClick={() => void loadMore()} disabled={moreState === 'loading'}>
            {moreState === 'loading' ? 'Loading more…' : 'Show more products'}
          </button>
          {typeof moreState === 'object' && <Problem error={moreState} onRetry={() => void loadMore()} />}
        </div>
      )}
    </section>
  );
}

function ProductCard({ product }: { product: Product }) {
  const soldOut = product.stock === 0;
  return (
    <li className="card" data-testid="product">
      <a href={href.product(product.productId)} className="name">
        {product.name}
      </a>
      <span className="category">{product.category}</span>
      <span className="price">{formatMoney(product.price.amount, product.price.currencyCode)}</span>
      <span className={soldOut ? 'stock out' : 'stock'}>{soldOut ? 'Sold out' : `${product.stock} in stock`}</span>
      <button
        type="button"
        disabled={soldOut}
        onClick={() =>
          cart.add({ productId: product.productId, name: product.name, unitPrice: product.price.amount, quantity: 1 })
        }
      >
        {soldOut ? 'Sold out' : 'Add to cart'}
        <span className="visually-hidden">: {product.name}</span>
      </button>
    </li>
  );
}

/** The shop's categories (from their counters: one read), the current one marked. */
function CategoryNav({ current }: { current: string | undefined }) {
  const categories = useQuery(CategoriesDocument, {});
  if (categories.status === 'loading') return null;
  if (categories.status === 'failed') {
    return (
      <p className="hint">
        The categories could not be loaded.{' '}
        <button type="button" className="link" onClick={categories.retry}>
          Load them again
        </button>
      </p>
    );
  }
  return (
    <nav aria-label="Categories" className="categories">
      <ul>
        <li>
          <a href={href.shop()} aria-current={current === undefined ? 'page' : undefined}>
            All
          </a>
        </li>
        {categories.data.categories.map(({ name, productCount }) => (
          <li key={name}>
            <a href={href.category(name)} aria-current={current === name ? 'page' : undefined}>
              {title(name)} <span className="n">({productCount})</span>
            </a>
          </li>
        ))}
      </ul>
    </nav>
  );
}
