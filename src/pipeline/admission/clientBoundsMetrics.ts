/** The per-client bounds' Prometheus metrics (clientBounds.ts), read at each scrape. */
import { Counter, Gauge } from 'prom-client';
import type { Registry } from 'prom-client';
import type { ClientBounds } from './clientBounds.js';

export function registerClientBoundsMetrics(registry: Registry, bounds: ClientBounds): void {
  new Gauge({
    name: 'tablegraph_clients_holding',
    help: 'Clients (users, else addresses) holding a WebSocket, an event stream or a subscription open',
    registers: [registry],
    collect() {
      this.set(bounds.clients);
    },
  });
  new Counter({
    name: 'tablegraph_client_bound_refusals_total',
    help: 'Connections and subscriptions refused because their client held its bound (CLIENT_MAX_*), by kind',
    labelNames: ['kind'],
    registers: [registry],
    collect() {
      this.reset();
      this.inc({ kind: 'connection' }, bounds.refusals.connection);
      this.inc({ kind: 'subscription' }, bounds.refusals.subscription);
    },
  });
}
