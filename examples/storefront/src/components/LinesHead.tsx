/** The header row of a table of order lines (the cart's, an order's): product, unit price, quantity, line total. */
import type { ReactNode } from 'react';

export function LinesHead({ children }: { children?: ReactNode }) {
  return (
    <thead>
      <tr>
        <th scope="col">Product</th>
        <th scope="col" className="money">
          Unit price
        </th>
        <th scope="col">Quantity</th>
        <th scope="col" className="money">
          Line total
        </th>
        {children}
      </tr>
    </thead>
  );
}
