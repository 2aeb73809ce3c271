// `npm run fixtures:upgrade [-- <release name>...]`: writes tests/e2e/fixtures/upgrade/<release>/, a state written
// by each release of RELEASES (scripts/lib/release.mjs) itself: the release is built from git, installed in a copy
// of tests/e2e/programs/many-keys, and `pulumi up` runs it against a fresh emulator. Kept per release:
//   state.json     `pulumi stack export` as the release wrote it (secrets encrypted with the suite's passphrase)
//   stack.yaml     the stack's Pulumi.<stack>.yaml (its config and the passphrase salt, no secret)
//   emulator.json  the emulator's state file, every key and token replaced by where the state holds it
//                  ("state:<resource>#key", "state:<resource>#tokens.<i>") and its credentials by placeholders:
//                  the test puts them back from the decrypted state, so no key is in plain text in any file
//   release.json   which commit wrote it, when, with which CLI
// Never edited by hand: rerun this script (a release's fixture is rewritten only when named or missing).
import { existsSync, mkdirSync, mkdtempSync, readFileSync, rmSync, symlinkSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { buildRelease, RELEASES } from "./lib/release.mjs";
import { prepareProgram, PulumiStack, REPO } from "./lib/stack.mjs";

const FIXTURES = join(REPO, "tests/e2e/fixtures/upgrade");
const PROGRAM = join(REPO, "tests/e2e/programs/many-keys");
/** The stack config of every fixture: three keys with a spend limit, one batch of two sub-accounts. */
const FIXTURE_CONFIG = { count: 3, spendLimit: 100, subAccounts: 2 };
const OURS = /^pulumi-nodejs:dynamic\/llm-accounts:(ApiKey|SubAccountBatch)$/;

async function write(release) {
  const { startEmulator } = await import("../dist/provider/emulator/index.js");
  const scratch = mkdtempSync(join(tmpdir(), "llm-upgrade-fixture-"));
  const stateFile = join(scratch, "emulator.json");
  const emu = await startEmulator({ port: 0, host: "127.0.0.1", rateLimits: false, stateFile });
  const dir = prepareProgram(PROGRAM);
  const link = join(dir, "node_modules", "pulumi-llm-accounts");
  rmSync(link, { force: true });
  symlinkSync(buildRelease(release.commit), link);
  const stack = await PulumiStack.create({
    dir,
    account: { baseUrl: emu.baseUrl, adminKey: emu.adminKey, accountKey: emu.accountKey },
    env: { LLM_ACCOUNTS_RATE_LIMITS: "off" },
    typeCheck: false,
  });
  try {
    for (const [k, v] of Object.entries(FIXTURE_CONFIG)) await stack.setConfig(k, v);
    await stack.up();
    await emu.close();
    const exported = await stack.exportState();
    const shown = revealed(JSON.parse((await stack.run(["stack", "export", "--show-secrets"])).stdout));
    // Where the state holds each secret: "state:<resource name>#key" or "#tokens.<i>".
    const where = new Map();
    for (const r of shown.deployment.resources.filter((x) => OURS.test(x.type))) {
      const name = r.urn.split("::").pop();
      if (typeof r.outputs.key === "string") where.set(r.outputs.key, `state:${name}#key`);
      (r.outputs.tokens ?? []).forEach((t, i) => where.set(t, `state:${name}#tokens.${i}`));
    }
    const snapshot = JSON.parse(readFileSync(stateFile, "utf8"));
    const secrets = [
      snapshot.admin_key,
      snapshot.account_key,
      ...snapshot.api_keys.map((k) => k.key),
      ...snapshot.sub_accounts.map((s) => s.token),
    ];
    snapshot.admin_key = "placeholder:admin";
    snapshot.account_key = "placeholder:account";
    for (const k of snapshot.api_keys)
      k.key = where.get(k.key) ?? fail(`an API key of the emulator (alias ${k.alias}) is in no resource of the state`);
    for (const s of snapshot.sub_accounts)
      s.token = where.get(s.token) ?? fail(`a sub-account of the emulator (id ${s.id}) is in no resource of the state`);

    const out = join(FIXTURES, release.name);
    rmSync(out, { recursive: true, force: true });
    mkdirSync(out, { recursive: true });
    const files = {
      "state.json": exported,
      "stack.yaml": readFileSync(join(dir, `Pulumi.${stack.stack}.yaml`), "utf8"),
      "emulator.json": `${JSON.stringify(snapshot, null, 2)}\n`,
      "release.json": `${JSON.stringify({ release: release.name, commit: release.commit, why: release.why, stack: stack.stack, config: FIXTURE_CONFIG, writtenBy: "scripts/upgrade-fixtures.mjs", at: new Date().toISOString(), cli: stack.cli.version }, null, 2)}\n`,
    };
    for (const [file, text] of Object.entries(files)) {
      const leaked = secrets.filter((s) => text.includes(s));
      if (leaked.length > 0) fail(`${release.name}/${file} would hold ${leaked.length} secret(s) in plain text`);
      writeFileSync(join(out, file), text);
    }
    console.log(
      `[fixtures] ${release.name} (${release.commit}): ${snapshot.api_keys.length} keys, ${snapshot.sub_accounts.length} sub-accounts -> ${out}`,
    );
  } finally {
    stack.dispose();
    rmSync(dir, { recursive: true, force: true });
    rmSync(scratch, { recursive: true, force: true });
  }
}

/** An export's value with each secret (`{"4dabf...": ..., "plaintext": "<JSON>"}`) replaced by its value. */
function revealed(value) {
  if (Array.isArray(value)) return value.map(revealed);
  if (value && typeof value === "object") {
    if ("4dabf18193072939515e22adb298388d" in value && typeof value.plaintext === "string")
      return revealed(JSON.parse(value.plaintext));
    return Object.fromEntries(Object.entries(value).map(([k, v]) => [k, revealed(v)]));
  }
  return value;
}

function fail(message) {
  throw new Error(message);
}

const named = process.argv.slice(2);
const unknown = named.filter((n) => !RELEASES.some((r) => r.name === n));
if (unknown.length > 0)
  fail(`unknown release(s): ${unknown.join(", ")}; known: ${RELEASES.map((r) => r.name).join(", ")}`);
for (const release of RELEASES) {
  if (named.length > 0 ? named.includes(release.name) : !existsSync(join(FIXTURES, release.name, "state.json")))
    await write(release);
}
