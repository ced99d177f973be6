/**
 * Caps on connections that have not signed in yet, as OpenSSH's MaxStartups and PerSourceMaxStartups: each costs
 * a key exchange and a slot until it signs in or times out, so a flood of them must not crowd out real users.
 * From `start` unauthenticated connections on, a new one is refused with `rate` percent probability, rising
 * linearly to every one at `full`; one source may hold at most `perSource` at once.
 */
export class StartupLimits {
  private total = 0;
  private readonly bySource = new Map<string, number>();
  private readonly start: number;
  private readonly rate: number;
  private readonly full: number;

  constructor(
    maxStartups: string,
    private readonly perSource: number,
    private readonly random: () => number = Math.random,
  ) {
    const [start = 10, rate = 30, full = 100] = maxStartups.split(':').map(Number);
    this.start = start;
    this.rate = rate;
    this.full = Math.max(full, start);
  }

  /** Unauthenticated connections now. */
  get size(): number {
    return this.total;
  }

  /** Takes a slot for a new connection from `source`; otherwise nothing is taken and the answer says which cap. */
  admit(source: string): 'ok' | 'source' | 'full' {
    if ((this.bySource.get(source) ?? 0) >= this.perSource) return 'source';
    if (this.total >= this.full) return 'full';
    if (this.total >= this.start) {
      const span = this.full - this.start;
      const chance = span === 0 ? 100 : this.rate + ((100 - this.rate) * (this.total - this.start)) / span;
      if (this.random() * 100 < chance) return 'full';
    }
    this.total += 1;
    this.bySource.set(source, (this.bySource.get(source) ?? 0) + 1);
    return 'ok';
  }

  /** Gives the slot back: the connection signed in or went away. */
  release(source: string): void {
    this.total = Math.max(0, this.total - 1);
    const left = (this.bySource.get(source) ?? 1) - 1;
    if (left <= 0) this.bySource.delete(source);
    else this.bySource.set(source, left);
  }
}
