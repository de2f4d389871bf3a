/**
 * The cart: its lines, kept in localStorage (a reload or another tab keeps them), and the
 * idempotency key of the order it is about to become.
 *
 * The key is made when the cart is first sent to placeOrder and kept, in storage too, until the
 * order is placed or the cart changes: a retry after a lost answer (a timeout, a dropped
 * connection, a reload) sends the same key, and the API returns the order it already placed
 * instead of placing a second one.
 */
import { useSyncExternalStore } from 'react';
import { lineTotal, sum } from './money';

export interface CartLine {
  productId: string;
  name: string;
  /** The unit price when it was added, a decimal string ("19.99"). */
  unitPrice: string;
  quantity: number;
}

interface CartState {
  lines: CartLine[];
  /** The pending order's idempotency key and the cart content it was made for. */
  checkout?: { key: string; content: string } | undefined;
}

const KEY = 'storefront-cart';
/** placeOrder's bound on a line's quantity. */
export const MAX_QUANTITY = 1000;

function load(): CartState {
  try {
    const stored = JSON.parse(localStorage.getItem(KEY) ?? 'null') as CartState | null;
    return stored && Array.isArray(stored.lines) ? stored : { lines: [] };
  } catch {
    return { lines: [] };
  }
}

const listeners = new Set<() => void>();
let state: CartState = load();

function save(next: CartState): void {
  state = next;
  localStorage.setItem(KEY, JSON.stringify(next));
  for (const listener of listeners) listener();
}

window.addEventListener('storage', (event) => {
  if (event.key === KEY) {
    state = load();
    for (const listener of listeners) listener();
  }
});

const contentOf = (lines: readonly CartLine[]) => JSON.stringify(lines.map((line) => [line.productId, line.quantity]));

/** A changed cart is another order: its pending key no longer applies. */
const withLines = (lines: CartLine[]): CartState => ({
  lines,
  checkout: state.checkout?.content === contentOf(lines) ? state.checkout : undefined,
});

const clamp = (quantity: number) => Math.min(Math.max(Math.trunc(quantity) || 1, 1), MAX_QUANTITY);

export const cart = {
  add(line: CartLine): void {
    const existing = state.lines.find((l) => l.productId === line.productId);
    save(
      withLines(
        existing
          ? state.lines.map((l) =>
              l.productId === line.productId ? { ...l, quantity: clamp(l.quantity + line.quantity) } : l,
            )
          : [...state.lines, { ...line, quantity: clamp(line.quantity) }],
      ),
    );
  },
  setQuantity(productId: string, quantity: number): void {
    save(withLines(state.lines.map((l) => (l.productId === productId ? { ...l, quantity: clamp(quantity) } : l))));
  },
  remove(productId: string): void {
    save(withLines(state.lines.filter((l) => l.productId !== productId)));
  },
  /** The order's idempotency key: the pending one for this content, or a new one kept from now on. */
  checkoutKey(): string {
    const content = contentOf(state.lines);
    if (state.checkout?.content === content) return state.checkout.key;
    const key = crypto.randomUUID();
    save({ ...state, checkout: { key, content } });
    return key;
  },
  /** The order was placed: the cart and its key are done with. */
  placed(): void {
    save({ lines: [] });
  },
};

export interface CartView {
  lines: (CartLine & { lineTotal: string })[];
  count: number;
  total: string;
}

let view: { state: CartState; value: CartView } | undefined;
const viewOf = (current: CartState): CartView => {
  if (view?.state !== current) {
    const lines = current.lines.map((line) => ({ ...line, lineTotal: lineTotal(line.unitPrice, line.quantity) }));
    view = {
      state: current,
      value: {
        lines,
        count: lines.reduce((n, line) => n + line.quantity, 0),
        total: sum(lines.map((line) => line.lineTotal)),
      },
    };
  }
  return view.value;
};

/** The cart with its line totals and total (decimal strings), re-rendered on every change. */
export function useCart(): CartView {
  return useSyncExternalStore(
    (listener) => {
      listeners.add(listener);
      return () => listeners.delete(listener);
    },
    () => viewOf(state),
  );
}
