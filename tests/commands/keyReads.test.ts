import { afterAll, beforeAll, describe, expect, test } from "@jest/globals";
import { KEY_READS_AT_ONCE, pool, readKeys } from "../../provider/commands/keyReads.js";
import type { Emulator } from "../../provider/emulator/index.js";
import { clientOf, emulator } from "../support/emulator.js";

/** The one reader of many keys (import, audit --keys, sweep --keys): bounded, in order, every answer counted. */

let emu: Emulator;

beforeAll(async () => {
  emu = await emulator({ rateLimits: false });
});
afterAll(async () => {
  await emu.close();
});

describe("the reader of many keys", () => {
  test("the pool keeps at most `width` reads in flight and gives the answers in item order", async () => {
    let inFlight = 0;
    let most = 0;
    const answers = await pool(
      Array.from({ length: 100 }, (_, i) => i),
      7,
      async (n) => {
        most = Math.max(most, ++inFlight);
        await new Promise((done) => setTimeout(done, (n * 7) % 5));
        inFlight -= 1;
        return n * 2;
      },
    );
    expect(most).toBe(7);
    expect(answers).toEqual(Array.from({ length: 100 }, (_, i) => i * 2));
  });

  test("readKeys: one get per key against the emulator, answers in order, each counted; a gone key answers gone() by the runtime's rule", async () => {
    const keys = Array.from({ length: KEY_READS_AT_ONCE * 3 + 5 }, (_, i) => emu.state.createKey(`reader-${i}`).key);
    const gone = emu.state.createKey("reader-gone").key;
    emu.state.deleteKey(gone);
    emu.clearRequests();
    const client = clientOf(emu);
    const counts: number[] = [];
    const failed: string[] = [];
    const views = await readKeys(
      client,
      [...keys, gone],
      {
        gone: (key) => {
          failed.push(key);
          return "gone" as const;
        },
        failed: (err) => {
          throw err;
        },
      },
      (done, total) => counts.push(done * 1000 + total),
    );
    expect(views.slice(0, keys.length).map((v) => (v === "gone" ? v : v.alias))).toEqual(
      keys.map((_k, i) => `reader-${i}`),
    );
    expect(views[keys.length]).toBe("gone");
    expect(failed).toEqual([gone]);
    expect(counts).toEqual(Array.from({ length: keys.length + 1 }, (_, i) => (i + 1) * 1000 + keys.length + 1));
    expect(emu.calls()).toEqual({ "api-key/get": keys.length + 1 });
  });
});
