/**
 * One order: its lines with unit prices and line totals, its total, and its status kept live by
 * the orderUpdated subscription (a shipment made anywhere shows at once). While it is PLACED it
 * can be cancelled; afterwards the button is gone.
 */
import { useEffect, useState } from 'react';
import { ApiError, request, subscribe } from '../api';
import { useSession } from '../auth';
import { LinesHead } from '../components/LinesHead';
import { StatusBadge } from '../components/StatusBadge';
import { Empty, Loading, Problem } from '../components/States';
import { CancelOrderDocument, OrderDetailsDocument, OrderStatusDocument } from '../gql/graphql';
import { formatMoney } from '../money';
import { href } from '../route';
import { useQuery } from '../useQuery';
import { formatDate, sessionNeeded } from './Orders';

export function OrderPage({ orderId, justPlaced }: { orderId: string; justPlaced: boolean }) {
  const { session, ended } = useSession();
  const details = useQuery(OrderDetailsDocument, { orderId }, { auth: true, skip: !session });
  const [live, setLive] = useState<{ status: string; updatedAt: string } | undefined>();
  const [liveProblem, setLiveProblem] = useState<ApiError | undefined>();
  const [cancelling, setCancelling] = useState(false);
  const [cancelRefusal, setCancelRefusal] = useState('');

  useEffect(() => {
    if (!session) return;
    setLive(undefined);
    setLiveProblem(undefined);
    return subscribe(
      OrderStatusDocument,
      { orderId },
      (data) => setLive({ status: data.orderUpdated.order.status, updatedAt: data.orderUpdated.order.updatedAt }),
      setLiveProblem,
    );
    // A renewed token is read on reconnection; the subscription is kept for the session's user.
  }, [orderId, session?.userId]);

  if (!session) {
    return <Problem error={sessionNeeded(ended, 'to see this order')} then={`order/${orderId}`} />;
  }
  if (details.status === 'loading') return <Loading label="Loading the order" />;
  if (details.status === 'failed') return <Problem error={details.error} onRetry={details.retry} then="orders" />;
  const order = details.data.order;
  if (!order) {
    return (
      <Empty>
        <h1 tabIndex={-1}>No such order</h1>
        <p>
          There is no order {orderId} among yours. <a href={href.orders()}>See your orders</a>
        </p>
      </Empty>
    );
  }
  // The later of what was read and what the stream said.
  const status = live && live.updatedAt >= order.updatedAt ? live.status : order.status;

  const cancelOrder = async () => {
    setCancelling(true);
    setCancelRefusal('');
    try {
      const { cancelOrder: result } = await request(CancelOrderDocument, { input: { orderId } }, { auth: true });
      const refused = result.userErrors[0];
      if (refused) setCancelRefusal(refused.message);
      else if (result.order) setLive({ status: result.order.status, updatedAt: result.order.updatedAt });
    } catch (error) {
      setCancelRefusal(error instanceof ApiError ? error.message : 'The order could not be cancelled. Try again.');
    } finally {
      setCancelling(false);
    }
  };

  return (
    <article className="order" aria-labelledby="page-title">
      {justPlaced && (
        <p className="notice" role="status">
          Thank you: your order is placed.
        </p>
      )}
      <h1 id="page-title" tabIndex={-1}>
        Order <span className="order-id">{order.orderId}</span>
      </h1>
      <p>
        Placed {formatDate(order.placedAt)} · Status:{' '}
        <strong aria-live="polite" data-testid="order-status">
          <StatusBadge status={status} />
        </strong>
      </p>
      {liveProblem && <p className="hint">{liveProblem.message}</p>}
      <table className="lines">
        <LinesHead />
        <tbody>
          {order.items.map((item) => (
            <tr key={item.productId}>
              <th scope="row">
                <a href={href.product(item.productId)}>{item.productName}</a>
              </th>
              <td className="money">{formatMoney(item.unitPrice.amount, item.unitPrice.currencyCode)}</td>
              <td>{item.quantity}</td>
              <td className="money">{formatMoney(item.lineTotal.amount, item.lineTotal.currencyCode)}</td>
            </tr>
          ))}
        </tbody>
        <tfoot>
          <tr>
            <th scope="row" colSpan={3}>
              Total
            </th>
            <td className="money total">{formatMoney(order.total.amount, order.total.currencyCode)}</td>
          </tr>
        </tfoot>
      </table>
      {status === 'PLACED' && (
        <div className="cancel">
          <button type="button" className="secondary" onClick={() => void cancelOrder()} disabled={cancelling}>
            {cancelling ? 'Cancelling…' : 'Cancel this order'}
          </button>
        </div>
      )}
      {cancelRefusal && (
        <p className="field-error" role="alert">
          {cancelRefusal}
        </p>
      )}
      <p>
        <a href={href.orders()}>All my orders</a>
      </p>
    </article>
  );
}
