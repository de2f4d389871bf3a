/**
 * What each WebSocket holds against its client's bounds (pipeline/clientBounds.ts), from the
 * upgrade to the close of its TCP socket:
 *
 * - its connection: under its address from the upgrade, and under its user once
 *   `connection_init` names one (`signIn`), so sockets that never say who they are share their
 *   address's bound and users behind one address do not;
 * - one hold per subscription, taken after admission (`subscribe`) and handed to the opening of
 *   its events (`opened`) by the context it executes in (graphql-ws hands operations on by id,
 *   which a client may reuse as soon as it has completed one), released when the events end.
 *
 * Whatever is still held when the TCP socket closes is released then, also when the handshake
 * never completed.
 */
import type http from 'node:http';
import { ClientLimitError, clientOf, releasedAtEnd } from '../../pipeline/clientBounds.js';
import type { ClientBounds, Hold } from '../../pipeline/clientBounds.js';
import type { Viewer } from '../../auth/tokens.js';

interface Held {
  connection: Hold;
  subscriptions: Set<Hold>;
}

export function createSocketHolds(clients: ClientBounds, addressOf: (req: http.IncomingMessage) => string) {
  const sockets = new WeakMap<http.IncomingMessage, Held>();
  const opening = new WeakMap<object, Hold>();

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

    /** After admission, for a subscription that will execute in `context`; the refusal over the bound. */
    subscribe(req: http.IncomingMessage, client: string, context: object): ClientLimitError | undefined {
      const held = sockets.get(req);
      if (!held) return undefined;
      const hold = clients.hold(client, 'subscription');
      if (hold instanceof ClientLimitError) return hold;
      const tracked: Hold = {
        release() {
          hold.release();
          held.subscriptions.delete(tracked);
        },
      };
      held.subscriptions.add(tracked);
      opening.set(context, tracked);
      return undefined;
    },

    /**
     * When the operation executing in `context` has opened: its events, releasing its hold when
     * they end; undefined (nothing to wrap) for an operation without one, or one refused while
     * opening, whose hold is released at once.
     */
    opened<T>(context: object, result: AsyncIterable<T> | object): AsyncIterableIterator<T> | undefined {
      const hold = opening.get(context);
      if (!hold) return undefined;
      opening.delete(context);
      if (Symbol.asyncIterator in result) return releasedAtEnd(result, hold);
      hold.release();
      return undefined;
    },
  };
}
