/**
 * graphql-sse's client, resuming a subscription where it stopped. The server numbers every event
 * of a stream (`id: <seq>`) and, given `Last-Event-ID`, first replays what the subscription missed
 * (docs/subscriptions.md). graphql-sse's client reconnects by itself after a network error, but it
 * neither exposes the event ids nor sends one back; this wraps its `fetchFn` to do both:
 *
 * ```ts
 * import { createClient } from 'graphql-sse';
 * const client = createClient(resumable({ url: 'http://localhost:4000/graphql/stream', headers }));
 * ```
 *
 * Each subscription keeps its own position (graphql-sse gives each one an AbortSignal, the same on
 * every reconnect of it): the id of the last event whose message ended, which is also the last
 * one graphql-sse hands to the subscription's sink (it delivers every message it has read before
 * it reconnects). Only graphql-sse's "distinct connections" mode (its default, and the server's) is
 * covered. Browsers and Node 18+ only: the body must be a web ReadableStream.
 */
import type { ClientOptions } from 'graphql-sse';

export interface ResumableOptions {
  /** Called with each event id as the event arrives (to keep it across a page reload, say). */
  onEventId?: (id: string, signal: AbortSignal | undefined) => void;
  /** Where a subscription starts: the id of the last event it saw before (say, from storage). */
  startAfter?: string;
}

/** `options` with a `fetchFn` that sends each subscription's last event id when it reconnects. */
export function resumable<Options extends ClientOptions>(options: Options, resume: ResumableOptions = {}): Options {
  // graphql-sse types it `unknown`: any fetch-compatible function.
  const fetchFn = (options.fetchFn as typeof fetch | undefined) ?? fetch;
  const positions = new WeakMap<AbortSignal, string>();
  return {
    ...options,
    fetchFn: async (input: Parameters<typeof fetch>[0], init: RequestInit = {}) => {
      const { signal } = init;
      const lastEventId = (signal && positions.get(signal)) ?? resume.startAfter;
      const headers = new Headers(init.headers);
      if (lastEventId) headers.set('last-event-id', lastEventId);
      const response = await fetchFn(input, { ...init, headers });
      if (!response.ok || !response.body) return response;
      const remember = (id: string) => {
        if (signal) positions.set(signal, id);
        resume.onEventId?.(id, signal ?? undefined);
      };
      return new Response(response.body.pipeThrough(eventIds(remember)), {
        status: response.status,
        statusText: response.statusText,
        headers: response.headers,
      });
    },
  };
}

/**
 * Passes the stream through unchanged, calling `onId` with the `id` of each event when the blank
 * line that ends it arrives (when an EventSource would dispatch it and set its last event id).
 */
function eventIds(onId: (id: string) => void): TransformStream<Uint8Array, Uint8Array> {
  const decoder = new TextDecoder();
  let partial = '';
  let pendingId: string | undefined;
  return new TransformStream({
    transform(chunk, controller) {
      controller.enqueue(chunk);
      const lines = (partial + decoder.decode(chunk, { stream: true })).split(/\r\n|\r|\n/);
      partial = lines.pop() ?? '';
      for (const line of lines) {
        if (line === '') {
          if (pendingId !== undefined) onId(pendingId);
          pendingId = undefined;
        } else if (line === 'id' || line.startsWith('id:')) {
          const value = line.slice(3).replace(/^ /, '');
          if (!value.includes('\0')) pendingId = value;
        }
      }
    },
  });
}
