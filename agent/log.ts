/** The agent's log: one line per event on stderr, which journald and docker both keep. */
export interface AgentLog {
  info(message: string): void;
  warn(message: string): void;
  error(message: string): void;
}

export function consoleLog(write: (line: string) => void = (line) => process.stderr.write(line)): AgentLog {
  const line = (level: string, message: string) => write(`${new Date().toISOString()} ${level} ${message}\n`);
  return {
    info: (message) => line('info', message),
    warn: (message) => line('warn', message),
    error: (message) => line('error', message),
  };
}
