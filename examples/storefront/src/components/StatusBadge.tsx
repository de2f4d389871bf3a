/** An order's status in words, with a colour that is never the only cue. */
const LABELS: Record<string, string> = {
  PLACED: 'Placed',
  SHIPPED: 'Shipped',
  DELIVERED: 'Delivered',
  CANCELLED: 'Cancelled',
};

export function StatusBadge({ status }: { status: string }) {
  return (
    <span className={`status ${status}`} data-status={status}>
      {LABELS[status] ?? status}
    </span>
  );
}
