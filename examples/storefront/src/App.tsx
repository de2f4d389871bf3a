import { useEffect, useRef, useState } from 'react';
import type { FormEvent } from 'react';
import { request, subscribe, VIEWER_ID } from './api';
import type { UserError } from './api';
import { useCart } from './cart';
import type { Cart } from './cart';
import {
  CatalogDocument,
  CheckoutDocument,
  MyOrdersDocument,
  OrderDetailsDocument,
  OrderStatusDocument,
  ProductDetailsDocument,
} from './gql/graphql';
import type { CatalogQuery, MyOrdersQuery, OrderDetailsQuery, ProductDetailsQuery, ProductOrder } from './gql/graphql';
import { Reviews } from './Reviews';
import { useRoute } from './route';

export function App() {
  const route = useRoute();
  const cart = useCart();
  const count = cart.lines.reduce((sum, line) => sum + line.quantity, 0);
  return (
    <>
      <header>
        <a className="brand" href="#/">
          Trailhead Outfitters
        </a>
        <nav>
          <a href="#/">Catalog</a>
          <a href="#/orders">My orders</a>
          <a href="#/cart" data-testid="cart-link">
            Cart ({count})
          </a>
          <span className="viewer">{VIEWER_ID ? `signed in as ${VIEWER_ID}` : 'not signed in'}</span>
        </nav>
      </header>
      <main>
        {route.page === 'catalog' && <CatalogPage cart={cart} />}
        {route.page === 'product' && <ProductPage productId={route.productId} cart={cart} />}
        {route.page === 'cart' && <CartPage cart={cart} />}
        {route.page === 'orders' && <OrdersPage />}
        {route.page === 'order' && <OrderPage orderId={route.orderId} />}
      </main>
    </>
  );
}

type Product = CatalogQuery['products']['nodes'][number];
const SORTS: Record<string, ProductOrder> = {
  'name-asc': { field: 'NAME', direction: 'ASC' },
  'name-desc': { field: 'NAME', direction: 'DESC' },
  'price-asc': { field: 'PRICE', direction: 'ASC' },
  'price-desc': { field: 'PRICE', direction: 'DESC' },
};
const PAGE = 12;

function CatalogPage({ cart }: { cart: Cart }) {
  const [namePrefix, setNamePrefix] = useState('');
  const [inStock, setInStock] = useState(false);
  const [sort, setSort] = useState('name-asc');
  const [minPrice, setMinPrice] = useState('');
  const [maxPrice, setMaxPrice] = useState('');
  const [products, setProducts] = useState<Product[] | null>(null);
  const [next, setNext] = useState<string | null>(null);
  const [error, setError] = useState('');
  const variables = {
    namePrefix: namePrefix || null,
    inStock: inStock ? true : null,
    minPrice: minPrice || null,
    maxPrice: maxPrice || null,
    orderBy: SORTS[sort] ?? null,
    first: PAGE,
  };
  const key = JSON.stringify(variables);

  useEffect(() => {
    let current = true;
    request(CatalogDocument, variables).then(
      (data) => {
        if (!current) return;
        setProducts(data.products.nodes);
        setNext(data.products.pageInfo.hasNextPage ? data.products.pageInfo.endCursor : null);
        setError('');
      },
      (reason: Error) => current && setError(reason.message),
    );
    return () => {
      current = false;
    };
  }, [key]);

  const more = async () => {
    const data = await request(CatalogDocument, { ...variables, after: next });
    setProducts((shown) => [...(shown ?? []), ...data.products.nodes]);
    setNext(data.products.pageInfo.hasNextPage ? data.products.pageInfo.endCursor : null);
  };

  return (
    <section>
      <form className="filters" onSubmit={(event) => event.preventDefault()}>
        <label>
          Search
          <input value={namePrefix} onChange={(e) => setNamePrefix(e.target.value)} placeholder="Name starts with…" />
        </label>
        <label className="check">
          <input type="checkbox" checked={inStock} onChange={(e) => setInStock(e.target.checked)} /> In stock only
        </label>
        <label>
          Sort
          <select value={sort} onChange={(e) => setSort(e.target.value)}>
            <option value="name-asc">Name, A–Z</option>
            <option value="name-desc">Name, Z–A</option>
            <option value="price-asc">Price, low to high</option>
            <option value="price-desc">Price, high to low</option>
          </select>
        </label>
        <label>
          Min price
          <input value={minPrice} onChange={(e) => setMinPrice(e.target.value)} inputMode="decimal" size={7} />
        </label>
        <label>
          Max price
          <input value={maxPrice} onChange={(e) => setMaxPrice(e.target.value)} inputMode="decimal" size={7} />
        </label>
      </form>
      {error && <p className="error">{error}</p>}
      {products === null ? (
        <p>Loading…</p>
      ) : products.length === 0 ? (
        <p>No products match.</p>
      ) : (
        <ul className="grid" data-testid="products">
          {products.map((product) => (
            <li key={product.productId} className="card" data-testid="product">
              <a href={`#/product/${encodeURIComponent(product.productId)}`} className="name">
                {product.name}
              </a>
              <span className="category">{product.category}</span>
              <span className="price">${product.price.amount}</span>
              <span className={product.stock > 0 ? 'stock' : 'stock out'}>
                {product.stock > 0 ? `${product.stock} in stock` : 'Sold out'}
              </span>
              <button
                disabled={product.stock === 0}
                onClick={() =>
                  cart.add({
                    productId: product.productId,
                    name: product.name,
                    unitPrice: product.price.amount,
                    quantity: 1,
                  })
                }
              >
                Add to cart
              </button>
            </li>
          ))}
        </ul>
      )}
      {next && (
        <button className="more" onClick={() => void more()}>
          More products
        </button>
      )}
    </section>
  );
}

function ProductPage({ productId, cart }: { productId: string; cart: Cart }) {
  const [product, setProduct] = useState<ProductDetailsQuery['product'] | undefined>();
  const [quantity, setQuantity] = useState(1);
  useEffect(() => {
    void request(ProductDetailsDocument, { productId }).then((data) => setProduct(data.product));
  }, [productId]);
  if (product === undefined) return <p>Loading…</p>;
  if (product === null) return <p>No such product.</p>;
  return (
    <article className="product">
      <h1>{product.name}</h1>
      <p className="category">{product.category}</p>
      <p className="price">${product.price.amount}</p>
      <p>{product.description}</p>
      <p className="stock">{product.stock > 0 ? `${product.stock} in stock` : 'Sold out'}</p>
      <label>
        Quantity
        <input
          type="number"
          min={1}
          value={quantity}
          onChange={(e) => setQuantity(Number(e.target.value))}
          aria-label="Quantity"
        />
      </label>
      <button
        onClick={() => {
          cart.add({ productId: product.productId, name: product.name, unitPrice: product.price.amount, quantity });
          location.hash = '#/cart';
        }}
      >
        Add to cart
      </button>
      <Reviews productId={product.productId} />
    </article>
  );
}

/** The userErrors that name `path` (e.g. ["items", "0", "quantity"]). */
const errorsAt = (errors: UserError[], ...path: string[]) =>
  errors.filter((error) => error.field?.join('.') === path.join('.'));

function CartPage({ cart }: { cart: Cart }) {
  const [errors, setErrors] = useState<UserError[]>([]);
  const [busy, setBusy] = useState(false);
  // One key per cart content: a retry of the same cart cannot order twice.
  const idempotencyKey = useRef('');
  const content = JSON.stringify(cart.lines);
  const keyFor = useRef('');
  if (keyFor.current !== content) {
    keyFor.current = content;
    idempotencyKey.current = crypto.randomUUID();
  }

  const submit = async (event: FormEvent) => {
    event.preventDefault();
    setBusy(true);
    try {
      const { placeOrder } = await request(CheckoutDocument, {
        input: {
          userId: VIEWER_ID,
          idempotencyKey: idempotencyKey.current,
          items: cart.lines.map((line) => ({ productId: line.productId, quantity: line.quantity })),
        },
      });
      setErrors(placeOrder.userErrors);
      if (placeOrder.order) {
        cart.clear();
        location.hash = `#/order/${encodeURIComponent(placeOrder.order.orderId)}`;
      }
    } catch (error) {
      setErrors([{ code: 'ERROR', field: null, message: (error as Error).message }]);
    } finally {
      setBusy(false);
    }
  };

  if (cart.lines.length === 0) return <p>Your cart is empty.</p>;
  const general = errors.filter((error) => !error.field || error.field[0] !== 'items');
  return (
    <form className="cart" onSubmit={(event) => void submit(event)}>
      <h1>Cart</h1>
      {cart.lines.map((line, i) => (
        <div className="line" key={line.productId} data-testid="cart-line">
          <span className="name">{line.name}</span>
          <span className="price">${line.unitPrice}</span>
          <label>
            Quantity
            <input
              type="number"
              min={1}
              value={line.quantity}
              aria-label={`Quantity of ${line.name}`}
              onChange={(e) => cart.setQuantity(line.productId, Number(e.target.value))}
            />
          </label>
          <button type="button" onClick={() => cart.remove(line.productId)}>
            Remove
          </button>
          {[
            ...errorsAt(errors, 'items', String(i), 'quantity'),
            ...errorsAt(errors, 'items', String(i), 'productId'),
            ...errorsAt(errors, 'items', String(i)),
          ].map((error) => (
            <span className="error field-error" role="alert" data-field={error.field?.join('.')} key={error.message}>
              {error.message}
            </span>
          ))}
        </div>
      ))}
      {general.map((error) => (
        <p className="error" role="alert" key={error.message}>
          {error.message}
        </p>
      ))}
      <button type="submit" disabled={busy}>
        Place order
      </button>
    </form>
  );
}

type OrderRow = NonNullable<MyOrdersQuery['viewer']>['orders']['nodes'][number];

function OrdersPage() {
  const [orders, setOrders] = useState<OrderRow[]>([]);
  const [total, setTotal] = useState<number | null>(null);
  const [next, setNext] = useState<string | null | undefined>(undefined);
  const loading = useRef(false);
  const sentinel = useRef<HTMLDivElement>(null);

  const load = async (after: string | null) => {
    if (loading.current) return;
    loading.current = true;
    try {
      const data = await request(MyOrdersDocument, { first: 10, after });
      const connection = data.viewer?.orders;
      if (!connection) return;
      setOrders((shown) => (after === null ? connection.nodes : [...shown, ...connection.nodes]));
      setTotal(connection.totalCount ?? null);
      setNext(connection.pageInfo.hasNextPage ? connection.pageInfo.endCursor : null);
    } finally {
      loading.current = false;
    }
  };

  useEffect(() => {
    void load(null);
  }, []);

  // Infinite scroll: the next page loads when the end of the list comes into view.
  useEffect(() => {
    const end = sentinel.current;
    if (!end || !next) return;
    const observer = new IntersectionObserver((entries) => {
      if (entries.some((entry) => entry.isIntersecting)) void load(next);
    });
    observer.observe(end);
    return () => observer.disconnect();
  }, [next]);

  return (
    <section>
      <h1>My orders {total !== null && <small data-testid="orders-total">({total})</small>}</h1>
      <ul className="orders" data-testid="orders">
        {orders.map((order) => (
          <li key={order.orderId} data-testid="order-row">
            <a href={`#/order/${encodeURIComponent(order.orderId)}`}>{order.orderId.slice(0, 12)}</a>
            <span>{new Date(order.placedAt).toLocaleDateString('en-US')}</span>
            <span className={`status ${order.status}`}>{order.status}</span>
            <span className="price">${order.total.amount}</span>
          </li>
        ))}
      </ul>
      <div ref={sentinel} className="sentinel">
        {next === null ? 'That is all.' : 'Loading more…'}
      </div>
    </section>
  );
}

function OrderPage({ orderId }: { orderId: string }) {
  const [order, setOrder] = useState<OrderDetailsQuery['order'] | undefined>();
  const [live, setLive] = useState<string | null>(null);
  useEffect(() => {
    void request(OrderDetailsDocument, { orderId }).then((data) => setOrder(data.order));
    // The live status: every change of this order, from the table's stream.
    return subscribe(OrderStatusDocument, { orderId }, (data) => setLive(data.orderUpdated.order.status));
  }, [orderId]);
  if (order === undefined) return <p>Loading…</p>;
  if (order === null) return <p>No such order.</p>;
  const status = live ?? order.status;
  return (
    <article className="order">
      <h1>Order {order.orderId.slice(0, 12)}</h1>
      <p>
        Status:{' '}
        <strong data-testid="order-status" className={`status ${status}`}>
          {status}
        </strong>
      </p>
      <ul>
        {order.items.map((item) => (
          <li key={item.productName}>
            {item.quantity} × {item.productName}
          </li>
        ))}
      </ul>
      <p className="price">Total ${order.total.amount}</p>
    </article>
  );
}
