// A portal as a user would write it with the Automation API: one Node.js process that runs an inline program
// adopting a console key (PORTAL_ADOPT_KEY, never an argument) in `up` after `up`. With PORTAL_TWICE=1 the
// program declares two ApiKeys adopting that key, which must fail each `up` at once naming both.
// Prints one JSON line per `up`; the program folder (argv[2]) is the workDir, whose node_modules hold the package.
import * as pulumi from "@pulumi/pulumi";
import { LocalWorkspace } from "@pulumi/pulumi/automation/index.js";
import * as llm from "pulumi-llm-accounts";

const [, , workDir, runs = "2"] = process.argv;
const key = process.env.PORTAL_ADOPT_KEY;

const program = async () => {
  const adoptKey = pulumi.secret(key);
  const ci = new llm.ApiKey("ci", { alias: "ci", adoptKey });
  if (process.env.PORTAL_TWICE === "1") new llm.ApiKey("ci-copy", { alias: "ci", adoptKey });
  return { hint: ci.keyHint };
};

const stack = await LocalWorkspace.createOrSelectStack(
  { stackName: "dev", projectName: "portal", program },
  { workDir },
);
for (let run = 1; run <= Number(runs); run++) {
  const started = Date.now();
  try {
    const r = await stack.up();
    console.log(
      JSON.stringify({
        run,
        ok: true,
        ms: Date.now() - started,
        changes: r.summary.resourceChanges,
        hint: r.outputs.hint?.value,
      }),
    );
  } catch (err) {
    const message = String(err instanceof Error ? err.message : err);
    console.log(JSON.stringify({ run, ok: false, ms: Date.now() - started, error: message.slice(-2000) }));
  }
}
