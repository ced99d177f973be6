/**
 * What a plugin adds to the `gatehouse` command (the manifest's `cli` field). A command is data, like a route: its
 * words, arguments and options are declared, and `run` gets them parsed and typed. A command does its work through
 * the HTTP API: `api` calls the running server over the data directory's local socket (`gatehouse.sock`) as the
 * operator, or, with no server running, a server this process opens for the one command. So a command sees the
 * same validation, rules and request log as the console does.
 *
 * ```ts
 * cli: [
 *   defineCommand({
 *     name: 'greet',
 *     describe: 'Print a greeting.',
 *     args: [{ name: 'who', describe: 'whom to greet' }],
 *     options: { loud: { describe: 'shout' } },
 *     async run({ args, options, out }) {
 *       out(options.loud ? `HELLO ${args.who.toUpperCase()}` : `hello ${args.who}`);
 *     },
 *   }),
 * ]
 * ```
 */

/** One call of the HTTP API as the operator; an answer of 400 or more throws an `HttpError` naming its fields. */
export type LocalCall = <T = unknown>(method: string, path: string, body?: unknown) => Promise<T>;

/** A positional argument. */
export interface CliArgument {
  readonly name: string;
  readonly describe: string;
  /** When true the argument may be left out (then `default`, if given, is used). */
  readonly optional?: boolean;
  readonly default?: string;
  /** The only values accepted. */
  readonly choices?: readonly string[];
}

/**
 * An option, written `--<key>` on the command line (a key `maxDevices` is `--max-devices`). Without `value` it is a
 * flag: `true` when given, else `false`. With `value` (the placeholder shown in help, such as `'<name>'`) it takes a
 * string, or a whole number with `integer: true`.
 */
export interface CliOption {
  readonly describe: string;
  readonly value?: string;
  readonly integer?: boolean;
  readonly required?: boolean;
  readonly default?: string | number;
}

type OptionValue<O extends CliOption> = O extends { value: string }
  ? O extends { integer: true }
    ? number
    : string
  : boolean;

/** The parsed options: flags are booleans, required options and options with a default are always present. */
export type CliOptionValues<O extends Record<string, CliOption>> = {
  [K in keyof O]: O[K] extends { value: string }
    ? O[K] extends { required: true } | { default: string | number }
      ? OptionValue<O[K]>
      : OptionValue<O[K]> | undefined
    : boolean;
};

/** The parsed arguments by name: optional ones without a default may be undefined. */
export type CliArgumentValues<A extends readonly CliArgument[]> = {
  [P in A[number] as P['name']]: P extends { optional: true }
    ? P extends { default: string }
      ? string
      : string | undefined
    : string;
};

/** What `run` gets. */
export interface CliInput<
  A extends readonly CliArgument[] = readonly CliArgument[],
  O extends Record<string, CliOption> = Record<string, CliOption>,
> {
  args: CliArgumentValues<A>;
  options: CliOptionValues<O>;
  /** Calls the HTTP API as the operator (see above); the first call opens the store when no server runs. */
  api: LocalCall;
  /** Writes one line to standard output. */
  out(line: string): void;
}

/** A command that does something: `gatehouse <name> [args] [--options]`. */
export interface CliAction<
  A extends readonly CliArgument[] = readonly CliArgument[],
  O extends Record<string, CliOption> = Record<string, CliOption>,
> {
  /** One word (letters, digits and `-`). */
  name: string;
  describe: string;
  args?: A;
  options?: O;
  /** Throw an `HttpError` (`BadRequest` and friends) to refuse: the CLI prints its message and exits with 1. */
  run(input: CliInput<A, O>): Promise<void>;
}

/**
 * A word that groups commands: `gatehouse user create`. Two plugins may add to the same group (the first one's
 * description is kept); a command name may be taken only once.
 */
export interface CliGroup {
  name: string;
  describe: string;
  commands: CliCommand[];
}

export type CliCommand = CliAction | CliGroup;

/** Identity function that types a command's arguments and options for its `run` (like `defineRoute`). */
export function defineCommand<
  const A extends readonly CliArgument[] = readonly [],
  const O extends Record<string, CliOption> = Record<never, CliOption>,
>(command: CliAction<A, O>): CliAction {
  return command as unknown as CliAction;
}
