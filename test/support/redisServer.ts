/**
 * A real redis-server (Debian's) as a child process on a free port, like DynamoDB Local: no
 * persistence, bound to 127.0.0.1. A test can kill it (SIGKILL) and start it again on the same
 * port to see clients reconnect. RedisProcess is one redis-server with any arguments: the
 * cluster's nodes (redisCluster.ts) are made of it too.
 */
import { spawn } from 'node:child_process';
import type { ChildProcess } from 'node:child_process';
import { freePort } from '../../src/db/local.js';
import type { RedisSettings } from '../../src/events/redisConnection.js';

/** One redis-server process, started with `args`, again and again on the same port. */
export class RedisProcess {
  private child: ChildProcess | undefined;
  private exited: Promise<void> | undefined;

  constructor(
    readonly port: number,
    private readonly args: readonly string[],
  ) {}

  /** `host:port`, as a cluster's slot map names the node. */
  get key(): string {
    return `127.0.0.1:${this.port}`;
  }

  /** Starts it (again, after kill()) and resolves once it accepts connections. */
  async start(): Promise<void> {
    if (this.child) throw new Error(`redis-server ${this.port} is already running`);
    const child = spawn('redis-server', [...this.args], { stdio: ['ignore', 'pipe', 'pipe'] });
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

export class RedisServer {
  readonly mode = 'single';

  private constructor(private readonly process: RedisProcess) {}

  /** Starts redis-server on a free port (or `port`) and resolves once it accepts connections. */
  static async start(port?: number): Promise<RedisServer> {
    const chosen = port ?? (await freePort());
    const server = new RedisServer(
      new RedisProcess(chosen, ['--port', String(chosen), '--bind', '127.0.0.1', '--save', '', '--appendonly', 'no']),
    );
    await server.restart();
    return server;
  }

  get port(): number {
    return this.process.port;
  }

  get url(): string {
    return `redis://127.0.0.1:${this.port}`;
  }

  get settings(): RedisSettings {
    return { url: this.url, mode: 'single' };
  }

  /** The variables of a process on this Redis. */
  get env(): Record<string, string> {
    return { REDIS_URL: this.url };
  }

  /** Starts the server again on its port (after kill()). */
  restart(): Promise<void> {
    return this.process.start();
  }

  pause(): void {
    this.process.pause();
  }

  resume(): void {
    this.process.resume();
  }

  kill(): Promise<void> {
    return this.process.kill();
  }

  /** Stops it for good (a test's clean-up). */
  dispose(): Promise<void> {
    return this.kill();
  }
}
