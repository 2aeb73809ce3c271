import { afterAll, beforeAll, describe, expect, test } from "@jest/globals";
import { spawn } from "node:child_process";
import { join } from "node:path";
import { cliAtLeast } from "../support/cliVersion.js";
import { REPO } from "../support/programDir.js";
import { writeCalls } from "../support/emulatorCalls.js";
import { endFile, expectSettled, setUpFile, stackFor, type PulumiStack } from "./support.js";

// `pulumi import --file` of an ApiKey and a SubAccountBatch with an import file whose resources carry their inputs
// and outputs (Pulumi 3.254, pulumi/pulumi#23984), given on stdin (`--file /dev/stdin`) so that no key or token is
// ever in a file. The file is what a stack that created the objects holds; a second stack imports it. On a CLI
// before 3.254 the import file's inputs and outputs are not read, and the import fails as it always did for a
// dynamic resource: the test asserts that refusal there (docs/decisions.md, "Pulumi's own import").

const PROGRAM = join(REPO, "tests/e2e/programs/importFile");
const OURS = /^pulumi-nodejs:dynamic\/llm-accounts:/;

type Resource = {
  urn: string;
  type: string;
  id?: string;
  inputs: Record<string, unknown>;
  outputs: Record<string, unknown>;
};
const nameOf = (urn: string) => urn.split("::").pop()!;

const file = setUpFile();
let creator: PulumiStack;
let adopter: PulumiStack;
let adopted = false;

/** This package's resources in a stack's state, secrets as `pulumi stack export --show-secrets` shows them. */
async function ours(stack: PulumiStack): Promise<Resource[]> {
  // Not kept with what the commands printed (file.pulumi): this output shows the secrets, on purpose.
  const exported = JSON.parse((await stack.run(["stack", "export", "--show-secrets"])).stdout) as {
    deployment: { resources?: Resource[] };
  };
  return (exported.deployment.resources ?? []).filter((r) => OURS.test(r.type));
}

/** The import file of `resources`: each with its id, inputs (`__provider` among them) and, unless left out, outputs. */
function importFile(resources: Resource[], withOutputs: boolean): string {
  return JSON.stringify({
    resources: resources.map((r) => ({
      type: r.type,
      name: nameOf(r.urn),
      id: r.id,
      inputs: r.inputs,
      ...(withOutputs ? { outputs: r.outputs } : {}),
    })),
  });
}

/**
 * `... | pulumi import --file /dev/stdin` in a stack, the import file on its stdin through a pipe, as a shell gives
 * it: the CLI opens /dev/stdin, which Node.js's own stdio (a socket) cannot be opened as ("no such device").
 */
function pulumiImport(stack: PulumiStack, text: string): Promise<{ code: number; out: string }> {
  const args = [
    "import",
    "--file",
    "/dev/stdin",
    "--yes",
    "--protect=false",
    "--generate-code=false",
    "--non-interactive",
    "--stack",
    stack.stack,
  ];
  return new Promise((done) => {
    const child = spawn("sh", ["-c", 'cat | "$0" "$@"', stack.cli.pulumi, ...args], { cwd: stack.dir, env: stack.env });
    let out = "";
    child.stdout.on("data", (d: Buffer) => (out += d.toString()));
    child.stderr.on("data", (d: Buffer) => (out += d.toString()));
    child.on("close", (code) => {
      file.printed += out;
      file.ledger.record();
      done({ code: code ?? 1, out });
    });
    child.stdin.end(text);
  });
}

beforeAll(async () => {
  creator = await stackFor(PROGRAM, file.emu, { stack: "creator" });
  await file.pulumi(creator.up());
  adopter = await stackFor(PROGRAM, file.emu, { stack: "adopter" });
}, 600_000);

afterAll(async () => {
  // One stack destroys what both hold: the adopter when the import took them, else the creator.
  const holder = adopted ? adopter : creator;
  if (holder) await file.pulumi(holder.destroy());
  await endFile({ emu: file.emu, ledger: file.ledger, stacks: [creator, adopter] });
}, 600_000);

describe("pulumi import of an ApiKey and a SubAccountBatch from an import file with inputs and outputs", () => {
  test("without outputs the import fails on every CLI: the dynamic provider's Read gets no stored provider", async () => {
    const made = await ours(creator);
    file.emu.clearRequests();
    const r = await pulumiImport(adopter, importFile(made, false));
    expect(r.code).not.toBe(0);
    expect(file.emu.requests()).toEqual([]);
    expect(await ours(adopter)).toEqual([]);
    expect(r.out).toMatch(FAILED_READ);
  }, 300_000);

  test("with outputs (CLI 3.254+): imported without a call, the state the creator holds, and the next up writes nothing", async () => {
    const made = await ours(creator);
    expect(made.map((r) => nameOf(r.urn)).sort()).toEqual(["batch", "key"]);
    file.emu.clearRequests();
    const r = await pulumiImport(adopter, importFile(made, true));
    if (!cliAtLeast(adopter.cli.version, "3.254.0")) {
      // The floor does not read an import file's inputs and outputs: it reads the resource, and fails as without them.
      expect(r.code).not.toBe(0);
      expect(r.out).toMatch(FAILED_READ);
      expect(await ours(adopter)).toEqual([]);
      return;
    }
    if (r.code !== 0) throw new Error(`pulumi import failed:\n${r.out}`);
    adopted = true;
    // The import stored what the file holds; the provider's Read was skipped, its Check ran (no call).
    expect(file.emu.requests()).toEqual([]);
    const held = await ours(adopter);
    const strip = (rs: Resource[]) =>
      rs
        .map((x) => ({ name: nameOf(x.urn), type: x.type, id: x.id, inputs: x.inputs, outputs: x.outputs }))
        .sort((a, b) => a.name.localeCompare(b.name));
    expect(strip(held)).toEqual(strip(made));
    // The program that declares them: no write, and settled (an empty plan, a refresh that changes nothing).
    file.emu.clearRequests();
    await file.pulumi(adopter.up());
    expect(writeCalls(file.emu.calls())).toEqual({});
    await expectSettled(adopter);
    file.ledger.expectAbsent(await adopter.exportState(), "pulumi stack export");
    file.ledger.expectAbsent(adopter.backendText(), "the backend folder");
    file.ledger.expectAbsent(file.printed, "the output of pulumi");
  }, 600_000);
});

/**
 * How an import fails when it reads the resource: the engine's Read of an import sends the id alone, and the
 * dynamic provider plugin has no stored provider (`__provider`) to load. CLI 3.248.0 sends no state at all (the
 * plugin fails reading it), 3.276.0 an empty one (the plugin fails loading the provider text it lacks).
 */
const FAILED_READ =
  /Preview failed: (code must be a string, not undefined|Cannot read properties of undefined \(reading 'toJavaScript'\))/;
