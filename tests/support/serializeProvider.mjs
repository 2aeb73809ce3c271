// Prints the provider text the built package's resource classes store in the state (`__provider`), as the
// plugin would read it. Run with plain node in a program folder, where the package resolves by name.
import { resolve } from "node:path";
import { pathToFileURL } from "node:url";

const shim = await import(
  pathToFileURL(resolve("node_modules/pulumi-llm-accounts/dist/provider/resources/shim.js")).href
);
process.stdout.write(JSON.stringify({ text: shim.providerText(process.argv[2]) }));
