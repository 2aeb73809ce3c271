import { rmSync } from "node:fs";
import { ensurePulumiCli, type PulumiCli } from "../../scripts/pulumi-cli.mjs";
import { PulumiStack, prepareProgram, type StackOptions } from "../../scripts/lib/stack.mjs";
import type { Emulator } from "../../provider/emulator/index.js";

export { PulumiStack, prepareProgram };
export { SecretLedger } from "../support/secrets.js";

/** Time for the first build of the Pulumi CLI on a machine that has none (minutes on 2 cores). */
export const CLI_BUILD_TIMEOUT_MS = 30 * 60_000;

/**
 * The real Pulumi CLI, found or built. The suite never skips: without a CLI it fails and says why (under
 * CI=true, and elsewhere too), since nothing short of the real CLI proves the package works.
 */
export async function requirePulumiCli(): Promise<PulumiCli> {
  try {
    return await ensurePulumiCli({ log: (m) => process.stderr.write(`[pulumi-cli] ${m}\n`) });
  } catch (err) {
    throw new Error(
      `The end-to-end suite needs the Pulumi CLI and none could be found or built${process.env.CI ? " (CI=true)" : ""}: ${(err as Error).message}`,
    );
  }
}

/** A stack on a fresh copy of a program folder, talking to the emulator through the standard env vars. */
export async function stackFor(source: string, emu: Emulator, options: Partial<StackOptions> = {}): Promise<PulumiStack> {
  const dir = prepareProgram(source);
  return PulumiStack.create({
    dir,
    account: { baseUrl: emu.baseUrl, adminKey: emu.adminKey, accountKey: emu.accountKey },
    ...options,
  });
}

/** Removes a stack's folders and its program copy. */
export function disposeStack(stack: PulumiStack | undefined): void {
  if (!stack) return;
  stack.dispose();
  rmSync(stack.dir, { recursive: true, force: true });
}
