/**
 * The per-client bounds' pure parts (src/pipeline/admission/clientBounds.ts): who a client is (a user, else
 * an address read behind the configured proxy hops, IPv6 by its /64) and the counting of holds.
 */
import { describe, expect, it } from 'vitest';
import { clientAddressOf, clientOf, createClientBounds } from '../../src/pipeline/admission/clientBounds.js';

describe('the address of a client', () => {
  it('is the socket peer without proxy hops, whatever X-Forwarded-For claims', () => {
    expect(clientAddressOf('198.51.100.7', '203.0.113.9', 0)).toBe('198.51.100.7');
  });

  it.each([
    ['the address the one trusted proxy saw', '203.0.113.9, 192.0.2.1', 1, '192.0.2.1'],
    ['the address the outermost of two trusted proxies saw', '203.0.113.9, 192.0.2.1', 2, '203.0.113.9'],
    ['the leftmost one when the header names fewer than the hops', '192.0.2.1', 3, '192.0.2.1'],
    ['the socket peer when there is no header', undefined, 1, '10.0.0.2'],
  ])('behind proxies, reads X-Forwarded-For from the right: %s', (_, header, hops, expected) => {
    expect(clientAddressOf('10.0.0.2', header, hops)).toBe(expected);
  });

  it('reads an IPv4-mapped IPv6 peer as IPv4, and an IPv6 address by its /64', () => {
    expect(clientAddressOf('::ffff:198.51.100.7', undefined, 0)).toBe('198.51.100.7');
    expect(clientAddressOf('2001:db8:0:12::1', undefined, 0)).toBe('2001:db8:0:12::/64');
    expect(clientAddressOf('2001:db8:0:12:ffff:1:2:3', undefined, 0)).toBe('2001:db8:0:12::/64');
    expect(clientAddressOf('2001:db8::7', undefined, 0)).toBe('2001:db8:0:0::/64');
  });
});

describe('the holds of a client', () => {
  const bounds = () => createClientBounds({ maxConnectionsPerClient: 2, maxSubscriptionsPerClient: 1 });

  it('counts a signed-in user by the user, an anonymous client by the address', () => {
    const viewer = { userId: 'alice', role: 'customer' as const };
    expect(clientOf(viewer, '192.0.2.1')).toBe(clientOf(viewer, '192.0.2.2'));
    expect(clientOf(null, '192.0.2.1')).not.toBe(clientOf(null, '192.0.2.2'));
  });

  it('refuses a hold over the bound with a 429 naming the setting, and takes one again after a release', () => {
    const clients = bounds();
    const first = clients.hold('user:a', 'connection');
    clients.hold('user:a', 'connection');
    const refused = clients.hold('user:a', 'connection');
    expect(refused).toBeInstanceOf(Error);
    expect((refused as Error & { extensions: unknown }).extensions).toMatchObject({
      code: 'TOO_MANY_CONNECTIONS',
      limit: 'CLIENT_MAX_CONNECTIONS',
      maximum: 2,
      http: { status: 429 },
    });
    expect(clients.hold('user:b', 'connection')).not.toBeInstanceOf(Error);
    (first as { release(): void }).release();
    expect(clients.hold('user:a', 'connection')).not.toBeInstanceOf(Error);
    expect(clients.refusals).toEqual({ connection: 1, subscription: 0 });
  });

  it('counts connections and subscriptions apart, and a release once however often it is called', () => {
    const clients = bounds();
    const subscription = clients.hold('user:a', 'subscription') as { release(): void };
    expect(clients.hold('user:a', 'subscription')).toMatchObject({ extensions: { code: 'TOO_MANY_OPERATIONS' } });
    expect(clients.heldBy('user:a')).toEqual({ connection: 0, subscription: 1 });
    subscription.release();
    subscription.release();
    expect(clients.heldBy('user:a')).toEqual({ connection: 0, subscription: 0 });
    // A client that holds nothing is not tracked.
    expect(clients.clients).toBe(0);
  });
});
