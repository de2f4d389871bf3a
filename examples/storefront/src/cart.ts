/** The cart: lines kept in the page (and localStorage, so a reload keeps them). */
import { useCallback, useState } from 'react';

export interface CartLine {
  productId: string;
  name: string;
  unitPrice: string;
  quantity: number;
}

const KEY = 'storefront-cart';
const load = (): CartLine[] => {
  try {
    return JSON.parse(localStorage.getItem(KEY) ?? '[]') as CartLine[];
  } catch {
    return [];
  }
};

export function useCart() {
  const [lines, setLines] = useState<CartLine[]>(load);
  const save = useCallback((next: CartLine[]) => {
    localStorage.setItem(KEY, JSON.stringify(next));
    setLines(next);
  }, []);
  return {
    lines,
    add: (line: CartLine) => {
      const existing = lines.find((l) => l.productId === line.productId);
      save(
        existing
          ? lines.map((l) => (l.productId === line.productId ? { ...l, quantity: l.quantity + line.quantity } : l))
          : [...lines, line],
      );
    },
    setQuantity: (productId: string, quantity: number) =>
      save(lines.map((l) => (l.productId === productId ? { ...l, quantity } : l))),
    remove: (productId: string) => save(lines.filter((l) => l.productId !== productId)),
    clear: () => save([]),
  };
}
export type Cart = ReturnType<typeof useCart>;
