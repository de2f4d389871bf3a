/**
 * The cart: each line with its unit price, quantity and line total, the total, and placing the
 * order. Amounts are the API's decimal strings, added up in cents (money.ts). placeOrder's
 * userErrors show beside the line they name (`["items", "0", "quantity"]`: not that many in
 * stock); a lost answer keeps the cart and its idempotency key, so trying again cannot order twice.
 */
import { useState } from 'react';
import { request } from '../api';
import type { ApiError, UserError } from '../api';
import { useSession } from '../auth';
import { cart, MAX_QUANTITY, useCart } from '../cart';
import { LinesHead } from '../components/LinesHead';
import { Empty, Problem } from '../components/States';
import { CheckoutDocument } from '../gql/graphql';
import { formatMoney } from '../money';
import { href } from '../route';

type Outcome =
  { kind: 'idle' } | { kind: 'placing' } | { kind: 'refused'; errors: UserError[] } | { kind: 'lost'; error: ApiError };

export function CartPage() {
  const { lines, total, count } = useCart();
  const { session } = useSession();
  const [outcome, setOutcome] = useState<Outcome>({ kind: 'idle' });

  const place = async () => {
    if (!session) return;
    setOutcome({ kind: 'placing' });
    try {
      const { placeOrder } = await request(
        CheckoutDocument,
        {
          input: {
            userId: session.userId,
            idempotencyKey: cart.checkoutKey(),
            items: lines.map((line) => ({ productId: line.productId, quantity: line.quantity })),
          },
        },
        { auth: true },
      );
      if (placeOrder.order) {
        cart.placed();
        location.hash = `${href.order(placeOrder.order.orderId)}?placed=1`;
        return;
      }
      setOutcome({ kind: 'refused', errors: placeOrder.userErrors });
    } catch (error) {
      setOutcome({ kind: 'lost', error: error as ApiError });
    }
  };

  if (lines.length === 0) {
    return (
      <Empty>
        <h1 id="page-title" tabIndex={-1}>
          Your cart is empty
        </h1>
        <p>
          <a href={href.shop()}>Browse the shop</a> and add what you like.
        </p>
      </Empty>
    );
  }

  const errors = outcome.kind === 'refused' ? outcome.errors : [];
  const lineErrors = (index: number) => errors.filter((e) => e.field?.[0] === 'items' && e.field[1] === String(index));
  const general = errors.filter((e) => e.field?.[0] !== 'items');

  return (
    <section aria-labelledby="page-title">
      <h1 id="page-title" tabIndex={-1}>
        Your cart
      </h1>
      <table className="cart">
        <caption className="visually-hidden">
          {count} items in the cart, total {formatMoney(total)}
        </caption>
        <LinesHead>
          <th scope="col">
            <span className="visually-hidden">Remove</span>
          </th>
        </LinesHead>
        <tbody>
          {lines.map((line, index) => (
            <tr key={line.productId} data-testid="cart-line">
              <th scope="row">
                <a href={href.product(line.productId)}>{line.name}</a>
                {lineErrors(index).map((error) => (
                  <span className="field-error" role="alert" data-field={error.field?.join('.')} key={error.message}>
                    {error.message}
                  </span>
                ))}
              </th>
              <td className="money">{formatMoney(line.unitPrice)}</td>
              <td>
                <input
                  type="number"
                  min={1}
                  max={MAX_QUANTITY}
                  value={line.quantity}
                  aria-label={`Quantity of ${line.name}`}
                  aria-invalid={lineErrors(index).length > 0}
                  onChange={(e) => cart.setQuantity(line.productId, Number(e.target.value))}
                />
              </td>
              <td className="money" data-testid="line-total">
                {formatMoney(line.lineTotal)}
              </td>
              <td>
                <button type="button" className="secondary" onClick={() => cart.remove(line.productId)}>
                  Remove<span className="visually-hidden"> {line.name}</span>
                </button>
              </td>
            </tr>
          ))}
        </tbody>
        <tfoot>
          <tr>
            <th scope="row" colSpan={3}>
              Total
            </th>
            <td className="money total" data-testid="cart-total">
              {formatMoney(total)}
            </td>
            <td />
          </tr>
        </tfoot>
      </table>

      {general.map((error) => (
        <p className="field-error" role="alert" key={error.message}>
          {error.message}
        </p>
      ))}
      {outcome.kind === 'lost' &&
        (outcome.error.kind === 'refused' || outcome.error.kind === 'signed-out' ? (
          <Problem error={outcome.error} then="cart" />
        ) : (
          <div className="problem" role="alert">
            <p>
              We could not confirm your order: {outcome.error.message} Your cart is kept, and placing it again is safe:
              it will not be ordered twice.
            </p>
          </div>
        ))}

      <div className="checkout">
        {session ? (
          <button type="button" onClick={() => void place()} disabled={outcome.kind === 'placing'}>
            {outcome.kind === 'placing' ? 'Placing your order…' : `Place order (${formatMoney(total)})`}
          </button>
        ) : (
          <p>
            <a className="button" href={href.signIn('cart')}>
              Sign in to place your order
            </a>
          </p>
        )}
      </div>
    </section>
  );
}
