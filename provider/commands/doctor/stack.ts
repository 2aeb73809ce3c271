import type { Profile } from "../../api/profile.js";
import { redact } from "../../api/redact.js";
import { readStackConfig, resolveClientOptions, type TransportOptions } from "../../client/config.js";
import { SETTINGS } from "../../client/settings.js";
// The import's own reading of a stack's config, and the one helper that runs the Pulumi CLI (with --non-interactive):
// the doctor measures the account a stack's `up` acts on exactly as the import finds it.
import { accountMismatch } from "../../import/plan.js";
import { readConfig } from "../../import/stackState.js";
import { runPulumi } from "../pulumi.js";
import type { Saved } from "./report.js";

/** Why `--stack` could not be used: the doctor could not run, and nothing was saved. */
class StackError extends Error {}

/**
 * The account the doctor measures: the environment's, or with `--stack S` the one S's config names (its base URL
 * and keys, read as the import reads them, over the environment as the provider reads them). Where the shell's
 * `LLM_ACCOUNTS_*` name another account than S's config, it refuses: a profile measured on one account and saved
 * in another's stack would misread the other platform.
 */
export async function accountOf(
  env: NodeJS.ProcessEnv,
  stack: string | undefined,
  cwd: string,
): Promise<TransportOptions> {
  if (stack === undefined) return resolveClientOptions(undefined, {}, env);
  let config;
  try {
    config = await readConfig(cwd, stack, env);
  } catch (err) {
    throw new StackError(
      `stack ${stack}: ${redact((err as Error).message).replace(/; nothing was written$/, "")}; nothing was measured or saved`,
    );
  }
  const settings = readStackConfig((fullKey) => {
    const value = config[fullKey]?.value;
    return typeof value === "string" ? value : undefined;
  });
  const mismatch = accountMismatch(settings, env);
  if (mismatch !== undefined) {
    throw new StackError(
      `stack ${stack}'s config names another account than the environment (${mismatch}): the profile would be measured on one account and saved for another; ` +
        "unset those variables (or set them to the stack's account); nothing was measured or saved",
    );
  }
  return resolveClientOptions(undefined, settings, env);
}

/** The profile saved with `pulumi config set` in stack `stack` (or the line that saves it, without one); whether it landed. */
export async function saveProfile(
  profile: Profile,
  stack: string | undefined,
  env: NodeJS.ProcessEnv,
  cwd: string,
): Promise<Saved> {
  const text = JSON.stringify(profile);
  if (!stack) return { landed: true, text: `pulumi config set ${SETTINGS.profile.config} '${text}'` };
  const ran = await runPulumi(["config", "set", SETTINGS.profile.config, text, "--stack", stack], { cwd, env }).catch(
    (err: unknown) => ({ code: 1, stderr: (err as Error).message }),
  );
  if (ran === null)
    return { landed: false, text: `not saved: no pulumi CLI on the PATH to run pulumi config set for stack ${stack}` };
  if (ran.code !== 0)
    return {
      landed: false,
      text: `not saved: pulumi config set for stack ${stack} failed (exit ${ran.code}): ${redact(ran.stderr.trim()).slice(0, 300)}`,
    };
  return { landed: true, text: `saved in the config of stack ${stack} (${SETTINGS.profile.config})` };
}
