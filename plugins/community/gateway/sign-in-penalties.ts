import type { Logger, SshPenalties } from '@gatehouse/core';

/** What a failed sign-in earned: how long to wait before answering it, and the refusal to give, if any. */
export interface FailedSignIn {
  delayMs: number;
  /** Set when the source is now refused (its connections too), or the target's password sign-ins now paused. */
  refusal?: string;
}

/**
 * The penalties of failed sign-ins, applied alike wherever a sign-in comes through (the SSH gateway and the web
 * terminal), so that guessing a device password is exactly as hard through either: each wrong password or key
 * signature counts against its source and against the device account it aimed at (core/ssh/penalties.ts, in the
 * cache every instance shares), its answer waits the source's slowdown, and a source or target now beyond its
 * minimum is told so. A cache that cannot answer records and refuses nothing: penalties are a shield, not a gate.
 */
export class SignInPenalties {
  constructor(
    private readonly penalties: SshPenalties,
    private readonly log: Logger,
  ) {}

  /** Seconds the source stays refused (0: it may sign in). */
  async sourceRefusedFor(ip: string): Promise<number> {
    return this.penalties.blockedFor(ip).catch((err: unknown) => {
      this.log.warn({ err, ip }, 'ssh penalty check failed; sign-in allowed');
      return 0;
    });
  }

  /**
   * The refusal to answer instead of relaying a password to `target` (`label` is the address as the user gave it),
   * while the target's password sign-ins are paused; undefined when the password may be tried.
   */
  async passwordsPaused(target: string | undefined, label: string): Promise<string | undefined> {
    if (!target) return undefined;
    const seconds = await this.penalties.targetBlockedFor(target).catch((err: unknown) => {
      this.log.warn({ err }, 'ssh target penalty check failed; sign-in allowed');
      return 0;
    });
    return seconds > 0 ? pausedMessage(label, seconds) : undefined;
  }

  /**
   * A failed sign-in from `ip` aimed at `target`: a wrong password or key signature, or a password not tried
   * because its target is paused (`paused`: counted against the source only, the target is not guessed).
   */
  async failed(
    ip: string,
    target: string | undefined,
    label: string,
    paused?: string,
  ): Promise<FailedSignIn> {
    const unrecorded = (err: unknown) => {
      this.log.warn({ err, ip }, 'ssh penalty not recorded');
      return { delayMs: 0, blockedFor: 0 };
    };
    const source = await this.penalties.penalise(ip, 'authFail').catch(unrecorded);
    const targetPaused =
      target && !paused
        ? await this.penalties.penaliseTarget(ip, target).catch((err: unknown) => unrecorded(err).blockedFor)
        : 0;
    if (source.blockedFor > 0) {
      this.log.warn({ ip, seconds: source.blockedFor }, 'ssh source penalised for failed sign-ins');
      return {
        delayMs: source.delayMs,
        refusal: `too many failed sign-ins from ${ip}; try again in ${source.blockedFor} seconds`,
      };
    }
    if (targetPaused > 0) {
      this.log.warn({ ip, target, seconds: targetPaused }, 'ssh target paused for failed sign-ins');
      return { delayMs: source.delayMs, refusal: pausedMessage(label, targetPaused) };
    }
    return { delayMs: source.delayMs, ...(paused ? { refusal: paused } : {}) };
  }
}

function pausedMessage(label: string, seconds: number): string {
  return (
    `too many failed sign-ins to ${label} lately; its password sign-ins are paused for ${seconds} seconds ` +
    '(a key of the namespace still signs in)'
  );
}

export const sleep = (ms: number) => new Promise((resolve) => setTimeout(resolve, ms));
