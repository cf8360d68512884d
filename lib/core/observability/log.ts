/**
 * Structured logs: one JSON line per event with a level (pino), for the server, the worker and the
 * notifier, so a log pipeline can filter on `level`, `runId`, `stepId`, `taskId` or `traceId` instead
 * of parsing sentences. When stdout is a terminal (or SAGABOARD_LOG_FORMAT=pretty, which `npm start`
 * sets for its children when it runs in one) the same events print as one readable line each.
 *
 * Environment: SAGABOARD_LOG_LEVEL (trace, debug, info (default), warn, error, fatal, silent);
 * SAGABOARD_LOG_FORMAT (json | pretty; default pretty on a terminal, json otherwise).
 */
import pino, { type DestinationStream, type Level, type Logger } from "pino";

/** Fields a saga event's log line carries when it has them; names are the same in every process. */
export interface LogFields {
  /** `run_...` */
  runId?: string;
  /** `stp_...` */
  stepId?: string;
  /** A worker task's id. */
  taskId?: string;
  /** The W3C trace id of the agent's trace the event belongs to (32 hex). */
  traceId?: string;
  /** Anything else worth a field (tool, outcome, error...). */
  [key: string]: unknown;
}

/** How lines are written: JSON for machines, one readable line for a person at a terminal. */
export type LogFormat = "json" | "pretty";

/** The format this process writes: SAGABOARD_LOG_FORMAT, else pretty on a terminal, else JSON. */
export function logFormat(env: Record<string, string | undefined> = process.env, isTty: boolean = Boolean(process.stdout.isTTY)): LogFormat {
  const asked = env.SAGABOARD_LOG_FORMAT?.trim().toLowerCase();
  if (asked === "json" || asked === "pretty") return asked;
  return isTty ? "pretty" : "json";
}

const LEVELS = new Set(["trace", "debug", "info", "warn", "error", "fatal", "silent"]);

/** The level this process logs at (SAGABOARD_LOG_LEVEL, default info; an unknown name is info). */
export function logLevel(env: Record<string, string | undefined> = process.env): Level | "silent" {
  const asked = env.SAGABOARD_LOG_LEVEL?.trim().toLowerCase();
  return asked && LEVELS.has(asked) ? (asked as Level | "silent") : "info";
}

const LEVEL_WORDS: Record<number, string> = { 10: "TRACE", 20: "DEBUG", 30: "INFO", 40: "WARN", 50: "ERROR", 60: "FATAL" };
/** Fields the readable line shows in its head, not as key=value. */
const HEAD_FIELDS = new Set(["level", "levelName", "time", "msg", "component", "pid", "hostname", "workerId", "notifierId", "stats"]);

/** One JSON line as a person reads it: `12:04:05 WARN  worker  the message  runId=run_1 stepId=stp_2`. */
export function prettyLine(json: string): string {
  let event: Record<string, unknown>;
  try {
    event = JSON.parse(json) as Record<string, unknown>;
  } catch {
    return json;
  }
  const time = typeof event.time === "number" ? new Date(event.time).toISOString().slice(11, 19) : "";
  const level = (LEVEL_WORDS[Number(event.level)] ?? String(event.level)).padEnd(5);
  const rest = Object.entries(event)
    .filter(([key, value]) => !HEAD_FIELDS.has(key) && value !== undefined)
    .map(([key, value]) => `${key}=${typeof value === "string" ? value : JSON.stringify(value)}`);
  const head = [time, level, typeof event.msg === "string" ? event.msg : ""].filter(Boolean).join(" ");
  return rest.length > 0 ? `${head}  ${rest.join(" ")}\n` : `${head}\n`;
}

/** A destination that rewrites each JSON line as a readable one before writing it to `out`. */
export function prettyDestination(out: { write(chunk: string): unknown } = process.stdout): DestinationStream {
  return { write: (line: string) => void out.write(prettyLine(line)) };
}

/** Options of `createLogger`. */
export interface LoggerOptions {
  /** Where lines go (default stdout, synchronously, so a line logged before `process.exit` is not lost). */
  destination?: DestinationStream;
  /** Overrides SAGABOARD_LOG_FORMAT / the terminal check. */
  format?: LogFormat;
  /** Overrides SAGABOARD_LOG_LEVEL. */
  level?: Level | "silent";
}

/**
 * A logger for one process or component (`server`, `worker`, `notifier`): `log.info({ runId, stepId }, "message")`.
 * Errors go under `err` (pino serializes the message and stack).
 */
export function createLogger(component: string, options: LoggerOptions = {}): Logger {
  const format = options.format ?? logFormat();
  const destination = options.destination ?? (format === "pretty" ? prettyDestination() : pino.destination({ dest: 1, sync: true }));
  return pino(
    {
      level: options.level ?? logLevel(),
      base: { component, pid: process.pid },
      formatters: { level: (label, number) => ({ level: number, levelName: label }) },
    },
    destination,
  );
}

let serverLogger: Logger | undefined;

/** The server process's logger (route handlers, background duties), made on first use. */
export function serverLog(): Logger {
  return (serverLogger ??= createLogger("server"));
}

/** A plain `(message, fields)` sink over a logger, for components that take a log function (worker, notifier). */
export type LogSink = (message: string, fields?: LogSinkFields) => void;

/** A sink's fields: any ids (LogFields' names), and the line's level (info when absent). */
export interface LogSinkFields extends LogFields {
  /** info (default), warn or error. */
  level?: "info" | "warn" | "error";
}

/** Lines of `logger` at the level the fields name (info when they name none), with the other fields. */
export function logSink(logger: Logger): LogSink {
  return (message, fields) => {
    if (!fields) return logger.info(message);
    const { level = "info", ...rest } = fields;
    logger[level](rest, message);
  };
}
