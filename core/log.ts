import { type Logger, pino } from 'pino';
import type { Config } from './config/schema';

export type { Logger };

/** One logger per kernel; secrets are redacted by key wherever they appear in a logged object. */
export function createLogger(config: Pick<Config, 'log'>): Logger {
  return pino({
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
      ],
      censor: '[redacted]',
    },
    ...(config.log.pretty
      ? { transport: { target: 'pino-pretty', options: { colorize: true, translateTime: 'HH:MM:ss.l' } } }
      : {}),
  });
}
