/** Hash routes (`#/product/<id>`, `#/cart`, `#/orders`, `#/order/<id>`): a static build needs no server routes. */
import { useEffect, useState } from 'react';

export type Route =
  | { page: 'catalog' }
  | { page: 'product'; productId: string }
  | { page: 'cart' }
  | { page: 'orders' }
  | { page: 'order'; orderId: string };

export function parseRoute(hash: string): Route {
  const [, page, id] = hash.replace(/^#/, '').split('/');
  if (page === 'product' && id) return { page: 'product', productId: decodeURIComponent(id) };
  if (page === 'order' && id) return { page: 'order', orderId: decodeURIComponent(id) };
  if (page === 'cart') return { page: 'cart' };
  if (page === 'orders') return { page: 'orders' };
  return { page: 'catalog' };
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
