/**
 * Hash routes, so a static build needs no server routes:
 * `#/` the whole shop, `#/category/<name>`, `#/product/<id>`, `#/cart`, `#/sign-in`,
 * `#/orders`, `#/order/<id>`. The catalogue's sort and filters ride along as a query
 * (`#/category/books?sort=price-asc&min=10`), so a listing can be linked to and reloaded.
 */
import { useEffect, useState } from 'react';

export type Route =
  | { page: 'catalog'; category: string | undefined; query: URLSearchParams }
  | { page: 'product'; productId: string }
  | { page: 'cart' }
  | { page: 'sign-in'; then: string | undefined }
  | { page: 'orders' }
  | { page: 'order'; orderId: string; justPlaced: boolean }
  | { page: 'not-found' };

export function parseRoute(hash: string): Route {
  const [path = '', search = ''] = hash.replace(/^#/, '').split('?');
  const query = new URLSearchParams(search);
  const [, page = '', id] = path.split('/');
  const param = id ? decodeURIComponent(id) : undefined;
  if (page === '') return { page: 'catalog', category: undefined, query };
  if (page === 'category' && param) return { page: 'catalog', category: param, query };
  if (page === 'product' && param) return { page: 'product', productId: param };
  if (page === 'order' && param) return { page: 'order', orderId: param, justPlaced: query.get('placed') === '1' };
  if (page === 'cart') return { page: 'cart' };
  if (page === 'orders') return { page: 'orders' };
  if (page === 'sign-in') return { page: 'sign-in', then: query.get('then') ?? undefined };
  return { page: 'not-found' };
}

export const href = {
  shop: () => '#/',
  category: (name: string) => `#/category/${encodeURIComponent(name)}`,
  product: (productId: string) => `#/product/${encodeURIComponent(productId)}`,
  cart: () => '#/cart',
  signIn: (then?: string) => (then ? `#/sign-in?then=${encodeURIComponent(then)}` : '#/sign-in'),
  orders: () => '#/orders',
  order: (orderId: string) => `#/order/${encodeURIComponent(orderId)}`,
};

/** Replaces the hash without a new history entry or a hashchange (a filter edit). */
export function replaceQuery(query: URLSearchParams): void {
  const [path = '#/'] = location.hash.split('?');
  const search = query.toString();
  history.replaceState(history.state, '', `${path || '#/'}${search ? `?${search}` : ''}`);
}

export function useRoute(): Route {
  const [route, setRoute] = useState(() => parseRoute(location.hash));
  useEffect(() => {
    const onChange = () => setRoute(parseRoute(location.hash));
    window.addEventListener('hashchange', onChange);
    return () => window.removeEventListener('hashchange', onChange);
  }, []);
  return route;
}
