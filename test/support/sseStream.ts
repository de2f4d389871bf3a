/**
 * A Server-Sent Events stream of the server's `/stream`, opened with fetch and read event by
 * event, as a browser's EventSource would (a `Last-Event-ID` to resume), and dropped without a
 * word when the test says so.
 */
import { parseSse } from './transports.js';
import type { SseEvent } from './transports.js';

const ORDER_EVENTS = 'subscription { orderEvents { type order { orderId } } }';

export class SseStream {
  private buffered = '';
  private readonly queue: SseEvent[] = [];
  private wake: (() => void) | undefined;
  /** Whether the response has ended (the server closed it, or close() aborted it). */
  private ended = false;
  private constructor(
    private readonly abort: AbortController,
    readonly status: number,
  ) {}

  /** Opens `query` (default: the viewer's order events) at `url` (a server's /graphql) + `/stream`. */
  static async open(url: string, token: string, lastEventId?: string, query = ORDER_EVENTS): Promise<SseStream> {
    const abort = new AbortController();
    const response = await fetch(`${url}/stream`, {
      method: 'POST',
      signal: abort.signal,
      headers: {
        'content-type': 'application/json',
        accept: 'text/event-stream',
        authorization: `Bearer ${token}`,
        ...(lastEventId ? { 'last-event-id': lastEventId } : {}),
      },
      body: JSON.stringify({ query }),
    });
    const stream = new SseStream(abort, response.status);
    void stream.pump(response.body!);
    return stream;
  }

  private async pump(body: ReadableStream<Uint8Array>) {
    const decoder = new TextDecoder();
    try {
      for await (const chunk of body as unknown as AsyncIterable<Uint8Array>) {
        this.buffered += decoder.decode(chunk, { stream: true });
        const end = this.buffered.lastIndexOf('\n\n');
        if (end < 0) continue;
        this.queue.push(...parseSse(this.buffered.slice(0, end + 2)));
        this.buffered = this.buffered.slice(end + 2);
        this.wake?.();
      }
    } catch {
      // aborted by close()
    }
    this.ended = true;
    this.wake?.();
  }

  /** The next event; rejects once the stream has ended (or was closed) with nothing more to read. */
  async next(): Promise<SseEvent> {
    while (this.queue.length === 0) {
      if (this.ended) throw new Error('the stream ended');
      await new Promise<void>((resolve) => (this.wake = resolve));
    }
    return this.queue.shift()!;
  }

  /** A forced disconnect: the client goes away without a word. */
  close(): void {
    this.abort.abort();
  }
}
