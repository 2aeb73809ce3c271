import { PassThrough } from "node:stream";
import { ProfileSchema } from "../../provider/api/profile.js";
import { runDoctor } from "../../provider/commands/doctor/index.js";
import type { Emulator } from "../../provider/emulator/index.js";
import { doctorIo } from "./doctor.js";

/**
 * The profile `llm-accounts doctor --write --save --json` measures on `emu`, as the text a user saves in
 * `llm-accounts:profile` (docs/doctor.md): what the runtime obeys. `settings.usagePageField` is passed as its variable.
 */
export async function measuredProfile(emu: Emulator, settings: Record<string, string> = {}): Promise<string> {
  const stdout = new PassThrough();
  let out = "";
  stdout.on("data", (c: Buffer) => (out += c.toString()));
  const env: Record<string, string> = {
    LLM_ACCOUNTS_BASE_URL: emu.baseUrl,
    LLM_ACCOUNTS_ADMIN_KEY: emu.adminKey,
    LLM_ACCOUNTS_ACCOUNT_KEY: emu.accountKey,
  };
  if (settings.usagePageField) env.LLM_ACCOUNTS_USAGE_PAGE_FIELD = settings.usagePageField;
  await runDoctor(["--write", "--save", "--json"], doctorIo(stdout, env));
  const { profile } = JSON.parse(out) as { profile: unknown };
  return JSON.stringify(ProfileSchema.parse(profile));
}
