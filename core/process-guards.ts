import type { Logger } from './log';
import type { Metrics } from './metrics';

/**
 * What the `gatehouse serve` process does with an error nothing else caught. One request, SSH connection or agent
 * must never end the server (API, gateway and every tunnel at once), so neither kind exits:
 * - an unhandled promise rejection is a bug in the code that made the promise: logged at error level with its
 *   stack and counted, and the server goes on;
 * - an uncaught exception is logged at fatal level and counted, and the server goes on as well. The code paths
 *   that serve clients catch their own failures and close only the connection concerned, so what reaches here
 *   is a bug to fix from the log, not a reason to drop every user.
 * Both count in `gatehouse_process_errors_total{kind}` so monitoring sees them even when nobody reads the log.
 */
export function guardProcess(log: Logger, metrics?: Metrics): () => void {
  const onRejection = (reason: unknown) => {
    metrics?.processErrors.inc({ kind: 'unhandledRejection' });
    log.error(
      { err: reason instanceof Error ? reason : new Error(String(reason)), kind: 'unhandledRejection' },
      'BUG: unhandled promise rejection; the server keeps running',
    );
  };
  const onException = (err: Error, origin: string) => {
    metrics?.processErrors.inc({ kind: 'uncaughtException' });
    log.fatal(
      { err, origin, kind: 'uncaughtException' },
      'BUG: uncaught exception; the server keeps running',
    );
  };
  process.on('unhandledRejection', onRejection);
  process.on('uncaughtException', onException);
  return () => {
    process.off('unhandledRejection', onRejection);
    process.off('uncaughtException', onException);
  };
}
