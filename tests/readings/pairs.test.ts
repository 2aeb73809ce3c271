import { afterAll, beforeAll, describe, expect, test } from "@jest/globals";
import { PassThrough } from "node:stream";
import { maskKey } from "../../provider/api/redact.js";
import { runDoctor } from "../../provider/commands/doctor/index.js";
import { doctorIo } from "../support/doctor.js";
import { EXIT } from "../../provider/commands/command.js";
import { READING_NAMES, startEmulator, type Emulator, type Reading } from "../../provider/emulator/index.js";
import { apiKey, COALESCING_SWITCH, startFresh, subAccountBatch, type Props } from "../../provider/runtime/index.js";
import { checkedInputs } from "../support/check.js";
import { DOCTOR_UNNAMED, expectNoSecret, secretsOf } from "../support/emulator.js";

/**
 * Readings combine (issue 44): for every pair of the emulator's readings, the doctor's verdict predicts what a
 * user's lifecycle then does, at the runtime level through the emulator over HTTP: exit 0, the lifecycle works as
 * is; a setting the doctor names, it works with that setting; "none exists" or "could not run", it fails with the
 * message the doctor showed. Each reading of the pair is named, or the doctor says what hides it.
 */

/** Pairs where one reading hides another from the doctor (by design of the platform, not of the doctor), and which. */
const HIDDEN: Record<string, Reading> = {
  "refusals-200+envelope": "refusals-200",
  "refusals-200+envelope-no-data": "refusals-200",
  "bare-errors+envelope": "bare-errors",
  "bare-errors+envelope-no-data": "bare-errors",
  "list-no-total+total-unfiltered": "total-unfiltered",
  "small-count-cap+sks-cap": "sks-cap",
  "total-unfiltered+masked-tokens": "total-unfiltered",
  "masked-tokens+gateway-timeout-after-write": "gateway-timeout-after-write",
  // A platform that cuts a long alias never refuses one for its length.
  "short-aliases+cut-aliases": "short-aliases",
  ...Object.fromEntries(
    READING_NAMES.filter((r) => r !== "redirects").map((r) => [
      ([r, "redirects"] as Reading[]).sort((a, b) => READING_NAMES.indexOf(a) - READING_NAMES.indexOf(b)).join("+"),
      r,
    ]),
  ),
};

/** Pairs where the doctor's verdict is stricter than the lifecycle here shows, and why: none today. */
const STRICTER: Record<string, string> = {};

/** The settings a doctor's row names that a user sets as such (the others name the profile, or none exists). */
const SETTING_VALUES: Record<string, Record<string, string>> = {
  "llm-accounts:usagePageField=cursor (or LLM_ACCOUNTS_USAGE_PAGE_FIELD)": { usagePageField: "cursor" },
  "llm-accounts:createMark=fit (saves one call a run)": { createMark: "fit" },
};

/** Every pair the emulator plays (envelope and envelope-no-data are two forms of one envelope). */
const PAIRS: [Reading, Reading][] = READING_NAMES.flatMap((a, i) =>
  READING_NAMES.slice(i + 1).map((b): [Reading, Reading] => [a, b]),
).filter(
  ([a, b]) =>
    !(a === "envelope" && b === "envelope-no-data") && !DOCTOR_UNNAMED.includes(a) && !DOCTOR_UNNAMED.includes(b),
);

type Report = {
  ran: boolean;
  exitCode: number;
  differs?: string[];
  settings?: string[];
  error?: string;
  rows?: { verdict: string; observed: string; setting?: string }[];
};

/** The doctor's --write --json report, on a clock whose waits pass at once. */
async function doctorOf(emu: Emulator): Promise<{ report: Report; out: string }> {
  const stdout = new PassThrough();
  let out = "";
  stdout.on("data", (c: Buffer) => (out += c.toString()));
  let now = Date.now();
  const clock = { now: () => now, sleep: async (ms: number) => void (now += ms) };
  const env = {
    LLM_ACCOUNTS_BASE_URL: emu.baseUrl,
    LLM_ACCOUNTS_ADMIN_KEY: emu.adminKey,
    LLM_ACCOUNTS_ACCOUNT_KEY: emu.accountKey,
  };
  await runDoctor(["--write", "--json"], doctorIo(stdout, env, { clock }));
  return { report: JSON.parse(out) as Report, out };
}

/**
 * A user's lifecycle (create, an empty gate, a change, a console drift repaired, delete): "works", the message it
 * failed with, or what went wrong without one (`lifecycle: ...`). A batch of 8 is more than one answer of
 * list-no-total holds. Deletes go out at once (no coalescing quiet period: the schedule is not the subject).
 */
async function lifecycle(emu: Emulator, settings: Record<string, string>): Promise<string> {
  startFresh({
    stackConfig: {
      baseUrl: emu.baseUrl,
      adminKey: emu.adminKey,
      accountKey: emu.accountKey,
      rateLimits: "off",
      ...settings,
    },
    clientOverrides: { clock: { now: () => Date.now(), sleep: async () => undefined } },
  });
  try {
    const key = await checkedInputs(apiKey, { alias: "ci-runner", securityConfig: { geo: { countries: ["CN"] } } });
    const made = await apiKey.create(key);
    startFresh();
    const read = await apiKey.read(made.id, made.outs as unknown as Props);
    if ((await apiKey.diff(made.id, read.props as Props, key)).changes)
      return "lifecycle: the gate is not empty after a key's create";
    emu.state.editKey(made.outs.key, "renamed-in-console", { geo: { countries: ["US"] } });
    startFresh();
    const drifted = await apiKey.read(made.id, read.props as Props);
    const outs = (await apiKey.update(made.id, drifted.props as Props, key)).outs;
    startFresh();
    await apiKey.delete(made.id, outs);
    const batch = await checkedInputs(subAccountBatch, {
      alias: "team-a",
      balance: 5,
      count: 8,
      modelPricing: [{ model: "model-a", pricingFactor: 1.2 }],
    });
    const created = await subAccountBatch.create(batch);
    startFresh();
    const gate = await subAccountBatch.read(created.id, created.outs);
    if ((await subAccountBatch.diff(created.id, gate.props as Props, batch)).changes)
      return "lifecycle: the gate is not empty after a batch's create";
    const grown = await checkedInputs(subAccountBatch, {
      alias: "team-b",
      balance: 5,
      count: 9,
      modelPricing: [{ model: "model-a", pricingFactor: 1.2 }],
    });
    startFresh();
    const bouts = (await subAccountBatch.update(created.id, gate.props as Props, grown)).outs;
    startFresh();
    await subAccountBatch.delete(created.id, bouts);
    const left = emu.state.listKeys().length + emu.state.listSubAccounts().length;
    return left === 0 ? "works" : `lifecycle: ${left} objects left`;
  } catch (err) {
    return err instanceof Error ? err.message : String(err);
  }
}

/** A message without what differs between two calls that fail alike: URLs, the operation, a masked token. */
const core = (message: string) =>
  message
    .replace(/https?:\/\/\S+/g, "URL")
    .replace(/\((GET|POST|DELETE) [^)]*\)/g, "")
    .replace(/sk-\.\.\.\w+/g, "sk-...")
    .replace(/\s+/g, " ")
    .trim();

beforeAll(() => void (process.env[COALESCING_SWITCH] = "off"));
afterAll(() => void delete process.env[COALESCING_SWITCH]);

describe("every pair of readings: the doctor's verdict is what the lifecycle then does", () => {
  test.each(PAIRS)("%s with %s", async (a, b) => {
    const emu = await startEmulator({ port: 0, host: "127.0.0.1", rateLimits: false, readings: [a, b] });
    try {
      const { report, out } = await doctorOf(emu);
      expectNoSecret(out, secretsOf(emu));
      // Nothing left, or each one left named, masked, with the command that deletes it.
      expect(emu.state.listKeys()).toEqual([]);
      const left = emu.state.listSubAccounts();
      for (const s of left) expect(out).toContain(maskKey(s.token));
      if (left.length > 0) expect(out).toMatch(/llm-accounts sweep --prefix 'doctor~[0-9a-f]{12}'/);
      emu.state.deleteSubAccounts(left.map((s) => s.token));
      // Each reading is named, or the doctor says what hides it.
      const hidden = HIDDEN[`${a}+${b}`];
      expect([...(report.differs ?? [])].sort()).toEqual([a, b].filter((r) => r !== hidden).sort());
      if (hidden) expect(out).toMatch(/hid(den|es)/);

      const settings = Object.assign({}, ...(report.settings ?? []).map((s) => SETTING_VALUES[s] ?? {})) as Record<
        string,
        string
      >;
      const outcome = await lifecycle(emu, settings);
      if (STRICTER[`${a}+${b}`]) expect(report.exitCode).toBe(EXIT.findings);
      else if (report.exitCode === 0) expect(outcome).toBe("works");
      else if (report.exitCode === EXIT.findings && (report.settings ?? []).every((s) => s in SETTING_VALUES))
        expect(outcome).toBe("works");
      else {
        // "none exists", or the doctor could not run: the lifecycle fails, with the message the doctor showed.
        expect(outcome).not.toBe("works");
        if (outcome.startsWith("lifecycle: ")) return;
        const shown =
          report.error ??
          (report.rows ?? [])
            .filter((r) => r.verdict === "setting")
            .map((r) => r.observed)
            .join(" | ");
        expect(core(shown)).toContain(core(outcome).slice(0, 100));
      }
    } finally {
      await emu.close();
    }
  });
});
