import { RE2JS } from 're2js';

/**
 * Regular expressions typed by users (firewall rules, public-key filters) run on RE2 semantics: linear time in the
 * input, so a pattern like `(a+)+$` can never stall the gateway (see docs/content/developers/gateway.md). Matching is unanchored, as
 * in the API these rules come from: anchor with `^...$` to match a whole name.
 */
export class UserPattern {
  private constructor(
    readonly source: string,
    private readonly re: RE2JS,
  ) {}

  /** Compiles `source`, or answers undefined when it is not a valid RE2 expression. */
  static compile(source: string): UserPattern | undefined {
    try {
      return new UserPattern(source, RE2JS.compile(source));
    } catch {
      return undefined;
    }
  }

  test(input: string): boolean {
    return this.re.matcher(input).find();
  }
}

/** Whether `source` compiles as an RE2 expression (validation at create and update). */
export function isValidPattern(source: string): boolean {
  return UserPattern.compile(source) !== undefined;
}

/**
 * A small cache of compiled patterns: rules are re-read on each connection, and compiling the same few
 * expressions again each time is wasted work. Bounded so a namespace with many rules cannot grow it forever.
 */
export class PatternCache {
  private readonly compiled = new Map<string, UserPattern | undefined>();

  constructor(private readonly max = 1000) {}

  get(source: string): UserPattern | undefined {
    if (this.compiled.has(source)) return this.compiled.get(source);
    if (this.compiled.size >= this.max) this.compiled.clear();
    const p = UserPattern.compile(source);
    this.compiled.set(source, p);
    return p;
  }

  /** An invalid stored pattern matches nothing: a broken rule must not open or close access by accident. */
  test(source: string, input: string): boolean {
    return this.get(source)?.test(input) ?? false;
  }
}
