/**
 * The shop's frame: a skip link, the header (the shop, my orders, the cart with its count, the
 * account), a notice when the session ended, and the page of the current route. Moving to another
 * page moves the keyboard focus to its heading, as a page load would, and says so to screen readers.
 */
import { useEffect, useRef } from 'react';
import { signOut, useSession } from './auth';
import { useCart } from './cart';
import { CartPage } from './pages/Cart';
import { CatalogPage } from './pages/Catalog';
import { OrderPage } from './pages/Order';
import { OrdersPage } from './pages/Orders';
import { ProductPage } from './pages/Product';
import { SignInPage } from './pages/SignIn';
import { href, useRoute } from './route';
import type { Route } from './route';

export function App() {
  const route = useRoute();
  const main = useRef<HTMLElement>(null);
  const first = useRef(true);

  useEffect(() => {
    const region = main.current;
    if (first.current || !region) {
      first.current = false;
      return;
    }
    window.scrollTo(0, 0);
    const heading = () => region.querySelector<HTMLElement>('h1');
    // The page's heading; a page still loading has none yet: the region, then the heading once it
    // renders, unless the person has moved on meanwhile.
    const now = heading();
    if (now) return void now.focus();
    region.focus();
    const observer = new MutationObserver(() => {
      const later = heading();
      if (!later) return;
      if (document.activeElement === region) later.focus();
      observer.disconnect();
    });
    observer.observe(region, { childList: true, subtree: true });
    return () => observer.disconnect();
  }, [route]);

  return (
    <>
      <a className="skip" href="#main" onClick={(event) => (event.preventDefault(), main.current?.focus())}>
        Skip to content
      </a>
      <Header route={route} />
      <SessionNotice route={route} />
      <main id="main" ref={main} tabIndex={-1}>
        <Page route={route} />
      </main>
      <footer>
        <p>Trailhead Outfitters · an example shop on tablegraph</p>
      </footer>
    </>
  );
}

function Page({ route }: { route: Route }) {
  switch (route.page) {
    case 'catalog':
      return <CatalogPage key={route.category ?? ''} category={route.category} query={route.query} />;
    case 'product':
      return <ProductPage key={route.productId} productId={route.productId} />;
    case 'cart':
      return <CartPage />;
    case 'sign-in':
      return <SignInPage then={route.then} />;
    case 'orders':
      return <OrdersPage />;
    case 'order':
      return <OrderPage key={route.orderId} orderId={route.orderId} justPlaced={route.justPlaced} />;
    case 'not-found':
      return (
        <>
          <h1 tabIndex={-1}>Page not found</h1>
          <p>
            <a href={href.shop()}>Back to the shop</a>
          </p>
        </>
      );
  }
}

function Header({ route }: { route: Route }) {
  const { session } = useSession();
  const { count } = useCart();
  const current = (page: Route['page']) => (route.page === page ? 'page' : undefined);
  return (
    <header>
      <a className="brand" href={href.shop()}>
        Trailhead Outfitters
      </a>
      <nav aria-label="Main">
        <ul>
          <li>
            <a href={href.shop()} aria-current={current('catalog')}>
              Shop
            </a>
          </li>
          <li>
            <a href={href.orders()} aria-current={current('orders')}>
              My orders
            </a>
          </li>
          <li>
            <a href={href.cart()} aria-current={current('cart')} data-testid="cart-link">
              Cart <span className="badge">{count}</span>
              <span className="visually-hidden"> items</span>
            </a>
          </li>
        </ul>
      </nav>
      <div className="account">
        {session ? (
          <>
            <span>Signed in as {session.userId}</span>
            <button type="button" className="link" onClick={signOut}>
              Sign out
            </button>
          </>
        ) : (
          <a href={href.signIn()} aria-current={current('sign-in')}>
            Sign in
          </a>
        )}
      </div>
    </header>
  );
}

/** Said once, where it matters: a page that needs a session tells how to get one back. */
function SessionNotice({ route }: { route: Route }) {
  const { session, ended } = useSession();
  // The pages that need a session say it themselves.
  if (session || ended !== 'refused' || ['sign-in', 'orders', 'order', 'cart'].includes(route.page)) return null;
  return (
    <p className="notice" role="status">
      Your session has ended. <a href={href.signIn()}>Sign in again</a> to see your orders; the shop stays open
      meanwhile.
    </p>
  );
}
