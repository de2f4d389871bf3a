/**
 * What each WebSocket holds against its client's bounds (pipeline/admission/clientBounds.ts), from the
 * upgrade to the close of its TCP socket:
 *
 * - its connection: under its address from the upgrade, and under its user once
 *   `connection_init` names one (`signIn`), so sockets that never say who they are share their
 *   address's bound and users behind one address do not;
 * - one hold per subscription, taken after admission (`subscribe`, which the request core calls
 *   for a subscription: pipeline/serve.ts) and released when its events end or it is refused
 *   while opening (the core releases it then).
 *
 * Whatever is still held when the TCP socket closes is released then, also when the handshake
 * never completed.
 */
import type http from 'node:http';
import { ClientLimitError, clientOf } from '../../pipeline/admission/clientBounds.js';
import type { ClientBounds, Hold } from '../../pipeline/admission/clientBounds.js';
import type { Viewer } from '../../auth/tokens.js';

interface Held {
  connection: Hold;
  subscriptions: Set<Hold>;
}

export function createSocketHolds(clients: ClientBounds, addressOf: (req: http.IncomingMessage) => string) {
  const sockets = new WeakMap<http.IncomingMessage, Held>();

  return {
    /** At the upgrade: the connection, under the request's address; the refusal when it holds its bound. */
    upgrade(req: http.IncomingMessage): ClientLimitError | undefined {
      const connection = clients.hold(clientOf(null, addressOf(req)), 'connection');
      if (connection instanceof ClientLimitError) return connection;
      const held: Held = { connection, subscriptions: new Set() };
      sockets.set(req, held);
      req.socket.once('close', () => {
        held.connection.release();
        for (const subscription of [...held.subscriptions]) subscription.release();
      });
      return undefined;
    },

    /**
     * At `connection_init`: the client the socket's holds count under from now on, and for a
     * signed-in viewer the connection moved to the user (the refusal when the user holds its bound).
     */
    signIn(req: http.IncomingMessage, viewer: Viewer | null): { client: string } | ClientLimitError {
      const client = clientOf(viewer, addressOf(req));
      const held = sockets.get(req);
      if (!viewer || !held) return { client };
      const connection = clients.hold(client, 'connection');
      if (connection instanceof ClientLimitError) return connection;
      held.connection.release();
      held.connection = connection;
      return { client };
    },

    /** After admission, for a subscription: its hold, released when its events end; the refusal over the bound. */
    subscribe(req: http.IncomingMessage, client: string): Hold | ClientLimitError {
      const held = sockets.get(req);
      const hold = clients.hold(client, 'subscription');
      if (hold instanceof ClientLimitError || !held) return hold;
      const tracked: Hold = {
        release() {
          hold.release();
          held.subscriptions.delete(tracked);
        },
      };
      held.subscriptions.add(tracked);
      return tracked;
    },
  };
}
