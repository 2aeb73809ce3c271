#!/usr/bin/env node
// `pulumi-resource-llm-accounts`: the provider plugin the Pulumi CLI starts (found on PATH) for programs in any
// language, serving the `llm-accounts` provider (provider.ts) over gRPC with `@pulumi/pulumi/provider`'s `main`.
// Nothing may print on stdout before `main` does: its first line is the port the engine connects to.
import { nodeTooOld } from "../version.js";

const tooOld = nodeTooOld();
if (tooOld !== undefined) {
  process.stderr.write(`${tooOld}\n`);
  process.exit(1);
}

const { adjustServer } = await import("./protocol.js");
const { llmAccountsProvider } = await import("./provider.js");
const { main } = await import("@pulumi/pulumi/provider/index.js");
adjustServer();
await main(llmAccountsProvider, process.argv.slice(2));
