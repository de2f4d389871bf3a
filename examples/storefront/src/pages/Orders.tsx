/** "My orders": the signed-in customer's orders, newest first, a page at a time, each with its full id. */
import { useState } from 'react';
import { ApiError, request } from '../api';
import { useSession } from '../auth';
import type { SessionEnd } from '../auth';
import { StatusBadge } from '../components/StatusBadge';
import { Empty, Loading, Problem } from '../components/States';
import { MyOrdersDocument } from '../gql/graphql';
import type { MyOrdersQuery } from '../gql/graphql';
import { formatMoney } from '../money';
import { href } from '../route';
import { useQuery } from '../useQuery';

type OrderRow = NonNullable<MyOrdersQuery['viewer']>['orders']['nodes'][number];
const PAGE_SIZE = 10;

/** What a page that needs a session says without one: sign in, or sign in again. */
export const sessionNeeded = (ended: SessionEnd, what: string): ApiError =>
  ended === 'refused'
    ? new ApiError('refused', `Your session has ended. Sign in again ${what}.`)
    : new ApiError('signed-out', `Sign in ${what}.`);

export const formatDate = (iso: string) =>
  new Date(iso).toLocaleString('en-US', { dateStyle: 'medium', timeStyle: 'short', timeZone: 'UTC' }) + ' UTC';

export function OrdersPage() {
  const { session, ended } = useSession();
  const first = useQuery(MyOrdersDocument, { first: PAGE_SIZE }, { auth: true, skip: !session });
  const [more, setMore] = useState<{ rows: OrderRow[]; after: string | null }>();
  const [moreState, setMoreState] = useState<'idle' | 'loading' | ApiError>('idle');

  const heading = (
    <h1 id="page-title" tabIndex={-1}>
      My orders
      {first.status === 'done' && first.data.viewer?.orders.totalCount != null && (
        <span className="n" data-testid="orders-total">
          {' '}
          ({first.data.viewer.orders.totalCount})
        </span>
      )}
    </h1>
  );
  if (!session) {
    return (
      <section aria-labelledby="page-title">
        {heading}
        <Problem error={sessionNeeded(ended, 'to see your orders')} then="orders" />
      </section>
    );
  }
  if (first.status === 'loading') return <Loading label="Loading your orders" />;
  if (first.status === 'failed') return <Problem error={first.error} onRetry={first.retry} then="orders" />;
  const connection = first.data.viewer?.orders;
  const rows = [...(connection?.nodes ?? []), ...(more?.rows ?? [])];
  const after = more ? more.after : connection?.pageInfo.hasNextPage ? connection.pageInfo.endCursor : null;

  const loadMore = async () => {
    setMoreState('loading');
    try {
      const data = await request(MyOrdersDocument, { first: PAGE_SIZE, after }, { auth: true });
      const page = data.viewer?.orders;
      setMore({
        rows: [...(more?.rows ?? []), ...(page?.nodes ?? [])],
        after: page?.pageInfo.hasNextPage ? page.pageInfo.endCursor : null,
      });
      setMoreState('idle');
    } catch (error) {
      setMoreState(error as ApiError);
    }
  };

  return (
    <section aria-labelledby="page-title">
      {heading}
      {rows.length === 0 ? (
        <Empty>
          <p>You have no orders yet.</p>
          <a href={href.shop()}>Browse the shop</a>
        </Empty>
      ) : (
        <table className="orders">
          <thead>
            <tr>
              <th scope="col">Order</th>
              <th scope="col">Placed</th>
              <th scope="col">Items</th>
              <th scope="col">Status</th>
              <th scope="col" className="money">
                Total
              </th>
            </tr>
          </thead>
          <tbody>
            {rows.map((order) => (
              <tr key={order.orderId} data-testid="order-row">
                <th scope="row">
                  <a href={href.order(order.orderId)} className="order-id">
                    {order.orderId}
                  </a>
                </th>
                <td>{formatDate(order.placedAt)}</td>
                <td>{order.items.reduce((n, item) => n + item.quantity, 0)}</td>
                <td>
                  <StatusBadge status={order.status} />
                </td>
                <td className="money">{formatMoney(order.total.amount, order.total.currencyCode)}</td>
              </tr>
            ))}
          </tbody>
        </table>
      )}
      {after && (
        <div className="more">
          <button type="button" onClick={() => void loadMore()} disabled={moreState === 'loading'}>
            {moreState === 'loading' ? 'Loading more…' : 'Show older orders'}
          </button>
          {typeof moreState === 'object' && <Problem error={moreState} onRetry={() => void loadMore()} />}
        </div>
      )}
    </section>
  );
}
