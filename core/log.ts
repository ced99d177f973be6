import { type DestinationStream, type Logger, pino } from 'pino';
import pretty from 'pino-pretty';
import type { Config } from './config/schema';

export type { Logger };

/** Where logs go: standard output, or (tests) any stream that says whether it is a terminal. */
export type LogDestination = DestinationStream & { isTTY?: boolean };

/** Human-readable lines when asked for, or by default when the logs go to a terminal; JSON lines otherwise. */
export function prettyLogs(
  config: Pick<Config, 'log'>,
  destination: { isTTY?: boolean } = process.stdout,
): boolean {
  return config.log.pretty ?? Boolean(destination.isTTY);
}

/** One logger per kernel; secrets are redacted by key wherever they appear in a logged object. */
export function createLogger(
  config: Pick<Config, 'log'>,
  destination: LogDestination = process.stdout as unknown as LogDestination,
): Logger {
  const options = {
    level: config.log.level,
    base: undefined,
    redact: {
      paths: [
        'password',
        '*.password',
        'token',
        '*.token',
        'req.headers.authorization',
        'req.headers["x-api-key"]',
        '*.recovery_code',
        '*.secret',
        // An agent's install key, wherever a registration body is logged.
        'install_key',
        '*.install_key',
        // Billing (cloud): the Stripe keys wherever a config object is logged.
        '*.stripeSecretKey',
        '*.stripeWebhookSecret',
      ],
      censor: '[redacted]',
    },
  };
  const stdout = destination === (process.stdout as unknown);
  if (!prettyLogs(config, destination)) return stdout ? pino(options) : pino(options, destination);
  // In this thread (no worker): a line is written before the next statement, and nothing is lost at exit.
  const stream = pretty({
    destination: stdout ? 1 : destination,
    colorize: Boolean(destination.isTTY),
    translateTime: 'HH:MM:ss.l',
    ignore: 'pid,hostname',
    sync: true,
    singleLine: true,
  });
  return pino(options, stream);
}
