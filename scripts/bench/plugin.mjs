// The provider plugin beside the dynamic resources (docs/provider.md): the same N API keys declared by the
// TypeScript program on the dynamic resources (tests/e2e/programs/many-keys) and by a YAML program on the provider
// plugin, each measured the same way in the same run: the plugin's start (spawned to its port, no engine), `pulumi
// up`, `pulumi preview`, the plugin's peak memory during the up, and the destroy.

import { spawn } from "node:child_process";
import { chmodSync, mkdtempSync, rmSync, symlinkSync, writeFileSync } from "node:fs";
import { createRequire } from "node:module";
import { delimiter, join } from "node:path";
import { ensureGoTool } from "../go-tools.mjs";
import { PulumiStack, REPO } from "../lib/stack.mjs";
import { SETTINGS, emulator, limitsEnv, stackOf, watchPlugin } from "./measure.mjs";

const PLUGIN_MAIN = join(REPO, "dist/provider/plugin/main.js");
const DYNAMIC_MAIN = createRequire(import.meta.url).resolve("@pulumi/pulumi/cmd/dynamic-provider/index.js");

/** Milliseconds from spawning a provider plugin (an engine address nobody answers) to the port it prints. */
function startMs(script) {
  return new Promise((resolve, reject) => {
    const started = Date.now();
    const child = spawn(process.execPath, [script, "127.0.0.1:1"], { stdio: ["ignore", "pipe", "ignore"] });
    child.stdout.once("data", () => {
      resolve(Date.now() - started);
      child.kill();
    });
    child.on("error", reject);
  });
}

/** A YAML program of `n` API keys on the provider plugin, aliases as the TypeScript program gives them. */
function yamlProgram(n) {
  const keys = Array.from(
    { length: n },
    (_, i) => `  key-${i}:\n    type: llm-accounts:index:ApiKey\n    properties:\n      alias: key-${i}\n`,
  );
  return `name: llm-bench-plugin\nruntime: yaml\nresources:\n${keys.join("")}`;
}

/** A stack of the YAML program, the plugin and the YAML language host on its PATH. */
async function yamlStack(ctx, emu, cli, n) {
  const dir = mkdtempSync(join(ctx.work, "plugin-yaml-"));
  writeFileSync(join(dir, "Pulumi.yaml"), yamlProgram(n));
  const bin = mkdtempSync(join(ctx.work, "plugin-bin-"));
  chmodSync(PLUGIN_MAIN, 0o755);
  symlinkSync(PLUGIN_MAIN, join(bin, "pulumi-resource-llm-accounts"));
  const PATH = [cli.binDir, bin, ensureGoTool("pulumi-language-yaml", { log: ctx.log }).binDir, process.env.PATH].join(
    delimiter,
  );
  const stack = await PulumiStack.create({
    dir,
    account: { baseUrl: emu.baseUrl, adminKey: emu.adminKey, accountKey: emu.accountKey },
    env: { ...limitsEnv(false), PATH },
  });
  ctx.cleanups.push(() => {
    stack.dispose();
    rmSync(dir, { recursive: true, force: true });
  });
  return stack;
}

/** One side: up (the plugin's peak memory watched), preview, destroy. */
async function side(ctx, stack, marker) {
  const watch = watchPlugin(stack.dir, marker);
  const up = await stack.up(["--parallel", String(SETTINGS.upParallel)], { env: ctx.bigRunEnv });
  const pluginPeakBytes = watch.stop();
  const preview = await stack.preview();
  const destroy = await stack.destroy(["--parallel", String(SETTINGS.upParallel)], { env: ctx.bigRunEnv });
  return { upMs: up.ms, previewMs: preview.ms, destroyMs: destroy.ms, pluginPeakBytes };
}

/** The section: both sides at SETTINGS.previewSize keys, and the start of each plugin (the fastest of 3). */
export async function providerPlugin(ctx, cli) {
  const n = SETTINGS.previewSize;
  const emu = await emulator(ctx, { rateLimits: false });
  const start = { dynamic: [], plugin: [] };
  for (let i = 0; i < 3; i++) {
    start.dynamic.push(await startMs(DYNAMIC_MAIN));
    start.plugin.push(await startMs(PLUGIN_MAIN));
  }
  const dynamic = await side(ctx, await stackOf(ctx, emu, limitsEnv(false), { count: n }), "dynamic-provider");
  ctx.log(`provider plugin, dynamic side: ${JSON.stringify(dynamic)}`);
  const plugin = await side(ctx, await yamlStack(ctx, emu, cli, n), "pulumi-resource-llm-accounts");
  ctx.log(`provider plugin, plugin side: ${JSON.stringify(plugin)}`);
  return {
    keys: n,
    startMs: { dynamic: Math.min(...start.dynamic), plugin: Math.min(...start.plugin) },
    dynamic,
    plugin,
  };
}
