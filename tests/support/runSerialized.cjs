// Loads a serialized provider the way the dynamic provider plugin does (require-from-string, in the program's
// working directory) and runs one lifecycle against the API. Reads {text, plan} as JSON on stdin.
const requireFromString = require("require-from-string");

async function main() {
  const input = JSON.parse(require("node:fs").readFileSync(0, "utf8"));
  const provider = requireFromString(input.text).handler();
  const out = {};
  if (input.config) await provider.configure({ config: { get: (k) => input.config[k] } });
  const step = async (name, fn) => {
    try {
      out[name] = await fn();
    } catch (err) {
      out[name] = { error: String(err && err.message) };
    }
  };
  const p = input.plan;
  await step("check", () => provider.check({}, p.news));
  const inputs = out.check.inputs;
  await step("create", () => provider.create(inputs));
  const { id, outs } = out.create;
  await step("read", () => provider.read(id, outs));
  const { inputs: changed } = await provider.check(inputs, p.changed);
  await step("diff", () => provider.diff(id, outs, changed));
  await step("update", () => provider.update(id, outs, changed));
  await step("delete", () => provider.delete(id, out.update.outs));
  process.stdout.write(JSON.stringify(out));
}
main().catch((err) => {
  process.stderr.write(String(err && err.stack));
  process.exit(1);
});
