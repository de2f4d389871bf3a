/**
 * A real redis-server (Debian's) as a child process on a free port, like DynamoDB Local: no
 * persistence, bound to 127.0.0.1. A test can kill it (SIGKILL) and start it again on the same
 * port to see clients reconnect.
 */
import { spawn } from 'node:child_process';
import type { ChildProcess } from 'node:child_process';
import { freePort } from '../../src/db/local.js';
import type { RedisSettings } from '../../src/events/redisConnection.js';

export class RedisServer {
  private child: ChildProcess | undefined;
  private exited: Promise<void> | undefined;

  private constructor(readonly port: number) {}

  /** Starts redis-server on a free port (or `port`) and resolves once it accepts connections. */
  static async start(port?: number): Promise<RedisServer> {
    const server = new RedisServer(port ?? (await freePort()));
    await server.restart();
    return server;
  }

  get url(): string {
    return `redis://127.0.0.1:${this.port}`;
  }

  readonly mode = 'single';

  get settings(): RedisSettings {
    return { url: this.url, mode: 'single' };
  }

  /** The variables of a process on this Redis. */
  get env(): Record<string, string> {
    return { REDIS_URL: this.url };
  }

  /** Starts the server again on its port (after kill()). */
  async restart(): Promise<void> {
    if (this.child) throw new Error('redis-server is already running');
    const child = spawn(
      'redis-server',
      ['--port', String(this.port), '--bind', '127.0.0.1', '--save', '', '--appendonly', 'no'],
      { stdio: ['ignore', 'pipe', 'pipe'] },
    );
    this.child = child;
    this.exited = new Promise((resolve) => child.once('exit', () => resolve()));
    let output = '';
    await new Promise<void>((resolve, reject) => {
      child.stdout?.setEncoding('utf8');
      child.stdout?.on('data', (chunk: string) => {
        output += chunk;
        if (output.includes('Ready to accept connections')) resolve();
      });
      child.once('error', reject);
      child.once('exit', (code) =>
        reject(new Error(`redis-server exited (code ${code}) before it was ready:\n${output}`)),
      );
    });
  }

  /** SIGSTOP: Redis hangs, its connections stay open and nothing answers (a stalled host, a full stop-the-world). */
  pause(): void {
    this.child?.kill('SIGSTOP');
  }

  /** SIGCONT after pause(): Redis answers again, everything sent meanwhile included. */
  resume(): void {
    this.child?.kill('SIGCONT');
  }

  /** Stops it for good (a test's clean-up). */
  dispose(): Promise<void> {
    return this.kill();
  }

  /** SIGKILL, the way a crashed Redis goes away; resolves once it has exited. */
  async kill(): Promise<void> {
    if (!this.child) return;
    this.child.kill('SIGKILL');
    // A stopped process takes SIGKILL too, but only once it runs again.
    this.child.kill('SIGCONT');
    await this.exited;
    this.child = undefined;
  }
}
