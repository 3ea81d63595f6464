/**
 * Tells open pages when the state refs changed, by server-sent events on /events: each listener
 * gets the current version of the refs when it connects, and the new one whenever a read finds
 * that it changed. The refs are read every `pollMs` only while someone listens, so an idle
 * `nyl ui` reads nothing. (Git has no change notification that works for every host; polling
 * what `git ls-remote` or a local ref read returns is what works everywhere.)
 */
import type { IncomingMessage, ServerResponse } from 'node:http';

/** Comments keep an idle event stream open through proxies that close silent connections. */
const KEEPALIVE_MS = 15_000;

export class RefsWatcher {
  private readonly listeners = new Set<ServerResponse>();
  private version: string | undefined;
  private timer: NodeJS.Timeout | undefined;
  private stopped = false;

  constructor(
    private readonly read: () => Promise<string>,
    private readonly pollMs: number,
  ) {}

  /** Answers GET /events: the stream of versions, from the current one on. */
  async subscribe(req: IncomingMessage, res: ServerResponse, headers: Record<string, string>): Promise<void> {
    res.writeHead(200, { ...headers, 'content-type': 'text/event-stream; charset=utf-8', connection: 'keep-alive' });
    this.listeners.add(res);
    req.on('close', () => this.listeners.delete(res));
    const version = await this.readVersion();
    if (version !== undefined) res.write(eventOf(version));
    this.schedule();
  }

  stop(): void {
    this.stopped = true;
    clearTimeout(this.timer);
    for (const res of this.listeners) res.end();
    this.listeners.clear();
  }

  private async readVersion(): Promise<string | undefined> {
    try {
      this.version = await this.read();
    } catch {
      // A failed read (the host unreachable for a moment) leaves the pages as they are.
    }
    return this.version;
  }

  private schedule(): void {
    if (this.timer !== undefined || this.stopped) return;
    this.timer = setTimeout(() => void this.poll(), this.pollMs);
  }

  private async poll(): Promise<void> {
    let beats = 0;
    while (!this.stopped && this.listeners.size > 0) {
      const before = this.version;
      const now = await this.readVersion();
      if (now !== undefined && now !== before) this.broadcast(eventOf(now));
      else if (++beats * this.pollMs >= KEEPALIVE_MS) {
        beats = 0;
        this.broadcast(': keep-alive\n\n');
      }
      await new Promise<void>((resolve) => (this.timer = setTimeout(resolve, this.pollMs)));
    }
    this.timer = undefined;
  }

  private broadcast(text: string): void {
    for (const res of this.listeners) res.write(text);
  }
}

function eventOf(version: string): string {
  return `event: version\ndata: ${version}\n\n`;
}
