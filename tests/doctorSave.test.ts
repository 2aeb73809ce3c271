import { describe, expect, test } from "@jest/globals";
import { mkdtempSync, rmSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { ProfileSchema } from "../provider/api/profile.js";
import { EXIT } from "../provider/commands/command.js";
import { startEmulator, type Emulator } from "../provider/emulator/index.js";
import { doctorRun } from "./support/doctor.js";
import { expectNoSecret, secretsOf } from "./support/emulator.js";
import { standInPulumi } from "./support/standInPulumi.js";

// Issue 54: `--save --stack S` measures the account of S's config (read as the import reads it) or refuses a
// mismatch with the shell's; a save that did not land exits 1 and --json says so. `pulumi` runs with
// --non-interactive (the import's helper), here a stand-in that logs its runs.

type Report = { ran: boolean; exitCode: number; error?: string; saved?: string; landed?: boolean; profile?: unknown };

/** A stack config as `pulumi config --show-secrets --json` answers it, naming `emu`'s account. */
const configOf = (emu: Emulator) =>
  JSON.stringify({
    "llm-accounts:baseUrl": { value: emu.baseUrl, secret: false },
    "llm-accounts:adminKey": { value: emu.adminKey, secret: true },
    "llm-accounts:accountKey": { value: emu.accountKey, secret: true },
  });

/** A new emulator and a work folder (the stand-in's and the answers' files), both removed after `then`. */
async function withStack(then: (emu: Emulator, work: string) => Promise<void>): Promise<void> {
  const emu = await startEmulator({ port: 0, rateLimits: false });
  const work = mkdtempSync(join(tmpdir(), "llm-doctor-save-"));
  try {
    await then(emu, work);
  } finally {
    await emu.close();
    rmSync(work, { recursive: true, force: true });
  }
}

/** Runs the doctor with `PATH` holding `pulumi`'s stand-in, and the shell's account settings `shell`. */
const doctorWith = (args: string[], path: Record<string, string>, work: string, shell: Record<string, string> = {}) =>
  doctorRun(args, { ...path, ...shell }, { cwd: work });

describe("doctor --save --stack S", () => {
  test("measures the account S's config names (the shell names none), saves the profile there with pulumi config set --non-interactive; exit 0, landed", async () => {
    await withStack(async (emu, work) => {
      writeFileSync(join(work, "config.json"), configOf(emu));
      const pulumi = standInPulumi(work, {
        '"config --show-secrets --json --stack prod --non-interactive"': `cat "${work}/config.json"`,
        '"config set llm-accounts:profile "*': 'printf "%s" "$4" > "$BIN/profile"',
      });
      const { code, out, err } = await doctorWith(["--write", "--save", "--stack", "prod", "--json"], pulumi.env, work);
      const report = JSON.parse(out) as Report;
      expect(code).toBe(EXIT.ok);
      expect(report).toMatchObject({
        ran: true,
        landed: true,
        saved: "saved in the config of stack prod (llm-accounts:profile)",
      });
      expect(emu.requests().length).toBeGreaterThan(20);
      expect(pulumi.runs()).toEqual([
        "config --show-secrets --json --stack prod --non-interactive",
        expect.stringMatching(/^config set llm-accounts:profile \{.*\} --stack prod --non-interactive$/),
      ]);
      expect(ProfileSchema.parse(JSON.parse(pulumi.read("profile")))).toEqual(report.profile);
      expectNoSecret(out + err, secretsOf(emu));
    });
  });

  test("the shell names another account than S's config: refused before anything is measured; exit 1, --json landed: false", async () => {
    await withStack(async (emu, work) => {
      writeFileSync(join(work, "config.json"), configOf(emu));
      const pulumi = standInPulumi(work, { '"config --show-secrets"*': `cat "${work}/config.json"` });
      const shell = {
        LLM_ACCOUNTS_BASE_URL: "https://api.other.example",
        LLM_ACCOUNTS_ADMIN_KEY: `sk-admin-${"o".repeat(32)}`,
        LLM_ACCOUNTS_ACCOUNT_KEY: `sk-${"o".repeat(48)}`,
      };
      const { code, out, err } = await doctorWith(
        ["--write", "--save", "--stack", "prod", "--json"],
        pulumi.env,
        work,
        shell,
      );
      expect(code).toBe(EXIT.failed);
      expect(JSON.parse(out)).toMatchObject({
        ran: false,
        landed: false,
        error: expect.stringMatching(
          /stack prod's config names another account than the environment \(llm-accounts:baseUrl is http:\/\/127\.0\.0\.1:\d+, LLM_ACCOUNTS_BASE_URL is https:\/\/api\.other\.example; llm-accounts:adminKey is sk-admin-\.\.\.\w{4}, LLM_ACCOUNTS_ADMIN_KEY is sk-admin-\.\.\.oooo/,
        ),
      });
      expect(err).toMatch(/could not run: .*nothing was measured or saved/);
      expect(emu.requests()).toEqual([]);
      expectNoSecret(out + err, [...secretsOf(emu), shell.LLM_ACCOUNTS_ADMIN_KEY, shell.LLM_ACCOUNTS_ACCOUNT_KEY]);
    });
  });

  test.each([
    [
      "no such stack",
      { '"config --show-secrets"*': `echo "error: no stack named 'prod' found" >&2; exit 255` },
      /no stack named 'prod' found/,
    ],
    [
      "a folder without a project",
      {
        '"config --show-secrets"*': `echo "error: no Pulumi.yaml project file found (searching upwards from /tmp)" >&2; exit 255`,
      },
      /no Pulumi\.yaml project file found/,
    ],
  ])("%s: exit 1 before anything is measured, --json landed: false", async (_name, cases, said) => {
    await withStack(async (emu, work) => {
      const pulumi = standInPulumi(work, cases);
      const { code, out } = await doctorWith(["--write", "--save", "--stack", "prod", "--json"], pulumi.env, work, {
        LLM_ACCOUNTS_BASE_URL: emu.baseUrl,
        LLM_ACCOUNTS_ADMIN_KEY: emu.adminKey,
        LLM_ACCOUNTS_ACCOUNT_KEY: emu.accountKey,
      });
      expect(code).toBe(EXIT.failed);
      expect(JSON.parse(out)).toMatchObject({ ran: false, landed: false, error: expect.stringMatching(said) });
      expect(emu.requests()).toEqual([]);
    });
  });

  test("S's config names no account and the shell none either: exit 1 before any request, --json landed: false", async () => {
    await withStack(async (emu, work) => {
      const pulumi = standInPulumi(work, { '"config --show-secrets"*': "echo '{}'" });
      const { code, out } = await doctorWith(["--write", "--save", "--stack", "prod", "--json"], pulumi.env, work);
      expect(code).toBe(EXIT.failed);
      expect(JSON.parse(out)).toMatchObject({ ran: false, landed: false, error: expect.stringMatching(/no base URL/) });
      expect(emu.requests()).toEqual([]);
    });
  });

  test("no pulumi on the PATH: exit 1, --json landed: false", async () => {
    await withStack(async (emu, work) => {
      const { code, out } = await doctorWith(["--write", "--save", "--stack", "prod", "--json"], { PATH: work }, work, {
        LLM_ACCOUNTS_BASE_URL: emu.baseUrl,
        LLM_ACCOUNTS_ADMIN_KEY: emu.adminKey,
        LLM_ACCOUNTS_ACCOUNT_KEY: emu.accountKey,
      });
      expect(code).toBe(EXIT.failed);
      expect(JSON.parse(out)).toMatchObject({
        ran: false,
        landed: false,
        error: expect.stringMatching(/no pulumi CLI/),
      });
    });
  });

  test("pulumi config set fails after the measure: exit 1, the table's verdict kept, --json landed: false naming why; nothing left on the account", async () => {
    await withStack(async (emu, work) => {
      writeFileSync(join(work, "config.json"), configOf(emu));
      const pulumi = standInPulumi(work, {
        '"config --show-secrets"*': `cat "${work}/config.json"`,
        '"config set"*': `echo "error: could not save the config: permission denied" >&2; exit 255`,
      });
      const { code, out, err } = await doctorWith(["--write", "--save", "--stack", "prod", "--json"], pulumi.env, work);
      expect(code).toBe(EXIT.failed);
      expect(JSON.parse(out)).toMatchObject({
        ran: true,
        exitCode: EXIT.failed,
        landed: false,
        saved: expect.stringMatching(
          /^not saved: pulumi config set for stack prod failed \(exit 255\): error: could not save the config: permission denied/,
        ),
      });
      expect(err).toMatch(/not saved/);
      expect(emu.state.listKeys()).toEqual([]);
      expect(emu.state.listSubAccounts()).toEqual([]);
      // The table says it too.
      const table = await doctorWith(["--write", "--save", "--stack", "prod"], pulumi.env, work);
      expect(table.code).toBe(EXIT.failed);
      expect(table.err).toMatch(/not saved: pulumi config set for stack prod failed/);
    });
  });
});
