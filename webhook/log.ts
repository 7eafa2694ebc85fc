/**
 * Structured logs: one JSON object per line, so a log pipeline can index every admission decision
 * without parsing prose. The sink is injected; the server writes to stdout, tests to an array.
 */

/** Where log lines go (without the trailing newline). */
export type LogSink = (line: string) => void;

/** Extra fields of a log line. An `Error` value is written as its message and stack. */
export type LogFields = Readonly<Record<string, unknown>>;

/** The webhook's logger. */
export interface Logger {
  info(message: string, fields?: LogFields): void;
  warn(message: string, fields?: LogFields): void;
  error(message: string, fields?: LogFields): void;
}

/** A logger writing `{"time":…,"level":…,"msg":…,…fields}` lines to `sink`. */
export function jsonLogger(sink: LogSink, clock: () => number = Date.now): Logger {
  const write = (level: string, message: string, fields: LogFields = {}) => {
    // Copied only when an Error needs rewriting: this runs once per admission request.
    const values = Object.values(fields).some((value) => value instanceof Error)
      ? Object.fromEntries(Object.entries(fields).map(([key, value]) => [key, loggable(value)]))
      : fields;
    sink(JSON.stringify({ time: new Date(clock()).toISOString(), level, msg: message, ...values }));
  };
  return {
    info: (message, fields) => write("info", message, fields),
    warn: (message, fields) => write("warn", message, fields),
    error: (message, fields) => write("error", message, fields),
  };
}

function loggable(value: unknown): unknown {
  // JSON.stringify writes an Error as {}: keep what an operator needs to find the bug.
  return value instanceof Error ? { message: value.message, stack: value.stack } : value;
}
