/**
 * The version of the state refs as open pages ask for it: `GET /version?environment=ENV` every
 * few seconds from each open tab (the refresh script in assets.ts), answered from here.
 *
 * A version covers the declared environments, the instances state holds, and the one
 * environment the asking page shows (an instance may be neither). Each such set is read at most
 * once per `freshMs`, however many tabs ask; a page rendered now stores the version it was
 * rendered at, so that the tabs asking next get that one. Nothing is read while no page asks,
 * and nothing outlives its use: entries not asked for in a while are dropped, so a GET of a
 * made-up environment name costs one read and leaves nothing behind.
 *
 * Why pages ask instead of being told (server-sent events): a browser opens at most six
 * connections to one host over HTTP/1.1, and a stream held by every open tab would leave the
 * seventh tab unable to load. A short request holds nothing.
 */

interface Entry {
  version: string;
  at: number;
}

/** Entries not read or asked for in this many freshness periods are dropped. */
const KEEP_PERIODS = 10;

export class VersionCache {
  private readonly entries = new Map<string, Entry>();
  private readonly pending = new Map<string, Promise<string>>();

  constructor(
    /** Reads the version of the declared environments, the instances state holds and `environment`. */
    private readonly read: (environment: string | undefined) => Promise<string>,
    private readonly freshMs: number,
    private readonly now: () => number = Date.now,
  ) {}

  /** The version for a page showing `environment`: read now unless a read within freshMs has it. */
  async get(environment: string | undefined): Promise<string> {
    this.prune();
    const entry = this.entries.get(environment ?? '');
    if (entry && this.now() - entry.at < this.freshMs) return entry.version;
    return this.fresh(environment);
  }

  /** Reads the version now (a page about to be rendered), sharing a read already under way. */
  fresh(environment: string | undefined): Promise<string> {
    const key = environment ?? '';
    const running = this.pending.get(key);
    if (running) return running;
    const read = this.read(environment).then((version) => {
      this.entries.set(key, { version, at: this.now() });
      return version;
    });
    this.pending.set(key, read);
    const done = () => this.pending.delete(key);
    read.then(done, done);
    return read;
  }

  private prune(): void {
    const oldest = this.now() - KEEP_PERIODS * this.freshMs;
    for (const [key, entry] of this.entries) if (entry.at < oldest) this.entries.delete(key);
  }
}
