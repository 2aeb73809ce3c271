import { describe, expect, test } from "@jest/globals";
import { durationText, LOG_EVERY_MS, progressOn } from "../../provider/commands/progress.js";

/** Progress on stderr, on an injected clock: what a terminal and a log get, and when. */

function stderrOf(tty: boolean) {
  let text = "";
  return { io: { stderr: { write: (t: string) => (text += t) }, stderrIsTty: tty }, text: () => text };
}

/** A fake clock and timer: `tick()` runs what the progress asked to repeat, as its interval would. */
function clock(start = 1_000_000) {
  let now = start;
  let repeated: (() => void) | undefined;
  let stopped = false;
  return {
    now: () => now,
    advance: (ms: number) => (now += ms),
    repeat: (tick: () => void) => {
      repeated = tick;
      return () => (stopped = true);
    },
    tick: () => repeated?.(),
    stopped: () => stopped,
  };
}

describe("progress on stderr", () => {
  test("in a log: one line every LOG_EVERY_MS with done of total and the time left at the pace so far, then the last count", () => {
    const { io, text } = stderrOf(false);
    const c = clock();
    const progress = progressOn(io, "llm-accounts audit: read", "API key(s)", {
      timing: { now: c.now, repeat: c.repeat },
    });
    c.advance(1000);
    progress(10, 100);
    expect(text()).toBe(""); // a line only once LOG_EVERY_MS have passed
    c.advance(LOG_EVERY_MS - 1000);
    progress(30, 100);
    expect(text()).toBe(`llm-accounts audit: read 30 of 100 API key(s), about 7s left\n`);
    c.advance(100);
    progress(31, 100);
    expect(text().split("\n")).toHaveLength(2); // not again before LOG_EVERY_MS
    c.advance(LOG_EVERY_MS);
    progress(90, 100);
    c.advance(10);
    progress(100, 100);
    expect(text().trimEnd().split("\n")).toEqual([
      "llm-accounts audit: read 30 of 100 API key(s), about 7s left",
      "llm-accounts audit: read 90 of 100 API key(s), about 1s left",
      "llm-accounts audit: read 100 of 100 API key(s)",
    ]);
  });

  test("while no answer comes (the client waiting for the rate limit's minute), the line comes again every LOG_EVERY_MS; the timer stops with the work", () => {
    const { io, text } = stderrOf(false);
    const c = clock();
    const progress = progressOn(io, "llm-accounts sweep: read", "API key(s)", {
      timing: { now: c.now, repeat: c.repeat },
    });
    c.advance(1000);
    progress(600, 1200);
    for (let i = 0; i < 4; i++) {
      c.advance(LOG_EVERY_MS / 2);
      c.tick();
    }
    expect(text().trimEnd().split("\n")).toEqual([
      "llm-accounts sweep: read 600 of 1200 API key(s), about 4s left",
      "llm-accounts sweep: read 600 of 1200 API key(s), about 7s left",
    ]);
    expect(c.stopped()).toBe(false);
    progress(1200, 1200);
    expect(c.stopped()).toBe(true);
    expect(text().trimEnd().split("\n").at(-1)).toBe("llm-accounts sweep: read 1200 of 1200 API key(s)");
  });

  test("work done before the first line leaves stderr empty: no last count of a read nobody waited for", () => {
    const { io, text } = stderrOf(false);
    const c = clock();
    const progress = progressOn(io, "llm-accounts sweep: read", "API key(s)", {
      timing: { now: c.now, repeat: c.repeat },
    });
    for (let done = 1; done <= 50; done++) {
      c.advance(10);
      progress(done, 50);
    }
    expect(text()).toBe("");
  });

  test("on a terminal: the line is redrawn in place (carriage return, cleared to its end), and ended with the work", () => {
    const { io, text } = stderrOf(true);
    const c = clock();
    const progress = progressOn(io, "llm-accounts import: read", "API key(s)", {
      timing: { now: c.now, repeat: c.repeat },
    });
    c.advance(200);
    progress(1, 4);
    c.advance(50);
    progress(2, 4); // within the redraw interval: not drawn
    c.advance(150);
    progress(3, 4);
    c.advance(10);
    progress(4, 4);
    expect(text()).toBe(
      "\rllm-accounts import: read 1 of 4 API key(s), about 1s left\x1b[K" +
        "\rllm-accounts import: read 3 of 4 API key(s), about 1s left\x1b[K" +
        "\rllm-accounts import: read 4 of 4 API key(s)\x1b[K\n",
    );
  });

  test("--quiet (and --json) show nothing, however long the work", () => {
    const { io, text } = stderrOf(true);
    const c = clock();
    const progress = progressOn(io, "llm-accounts audit: read", "API key(s)", {
      quiet: true,
      timing: { now: c.now, repeat: c.repeat },
    });
    for (let done = 1; done <= 10; done++) {
      c.advance(60_000);
      progress(done, 10);
    }
    expect(text()).toBe("");
  });

  test("the time left reads in seconds, minutes or hours", () => {
    expect(durationText(400)).toBe("1s");
    expect(durationText(45_000)).toBe("45s");
    expect(durationText(380_000)).toBe("6m 20s");
    expect(durationText(2 * 3_600_000 + 5 * 60_000)).toBe("2h 05m");
  });
});
