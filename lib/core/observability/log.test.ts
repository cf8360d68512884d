import { describe, expect, it } from "vitest";
import { createLogger, logFormat, logSink, prettyLine } from "./log";

/** A logger writing into an array of parsed JSON lines. */
function captured(level: "info" | "warn" = "info") {
  const lines: Record<string, unknown>[] = [];
  const logger = createLogger("worker", { format: "json", level, destination: { write: (line: string) => void lines.push(JSON.parse(line) as Record<string, unknown>) } });
  return { lines, logger };
}

describe("structured logs", () => {
  it("writes one JSON line per event with its level, component and the ids as fields", () => {
    const { lines, logger } = captured();
    const log = logSink(logger);
    log("task tsk_1 done", { taskId: "tsk_1", runId: "run_1", stepId: "stp_1" });
    log("task tsk_2 failed for now", { taskId: "tsk_2", runId: "run_2", level: "warn" });
    expect(lines).toEqual([
      expect.objectContaining({ level: 30, levelName: "info", component: "worker", msg: "task tsk_1 done", taskId: "tsk_1", runId: "run_1", stepId: "stp_1" }),
      expect.objectContaining({ level: 40, levelName: "warn", msg: "task tsk_2 failed for now", taskId: "tsk_2", runId: "run_2" }),
    ]);
    expect(lines[1]).not.toHaveProperty("stepId");
  });

  it("drops lines below the level", () => {
    const { lines, logger } = captured("warn");
    logSink(logger)("polling", {});
    logSink(logger)("a round failed", { level: "error" });
    expect(lines.map((l) => l.msg)).toEqual(["a round failed"]);
  });

  it("prints a readable line on a terminal, JSON elsewhere, unless told", () => {
    expect(logFormat({}, true)).toBe("pretty");
    expect(logFormat({}, false)).toBe("json");
    expect(logFormat({ SAGABOARD_LOG_FORMAT: "json" }, true)).toBe("json");
    expect(logFormat({ SAGABOARD_LOG_FORMAT: "pretty" }, false)).toBe("pretty");
    const line = prettyLine(JSON.stringify({ level: 40, levelName: "warn", time: Date.UTC(2026, 11, 4, 3, 4, 5), component: "worker", pid: 1, msg: "task tsk_2 failed", runId: "run_2" }));
    expect(line).toBe("03:04:05 WARN  task tsk_2 failed  runId=run_2\n");
  });
});
