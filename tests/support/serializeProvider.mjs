// Serializes a provider shim of the built package exactly as pulumi.dynamic.Resource does, and prints the text.
// Run with plain node in a program folder (not under jest: the closure serializer inspects real V8 scopes, and
// coverage would add its counters to the text).
import { resolve } from "node:path";
import { pathToFileURL } from "node:url";
import * as pulumi from "@pulumi/pulumi";

const shim = await import(pathToFileURL(resolve("node_modules/pulumi-llm-accounts/dist/provider/resources/shim.js")).href);
const provider = shim.thinProvider(process.argv[2]);
const serialized = await pulumi.runtime.serializeFunction(() => provider, { allowSecrets: true });
process.stdout.write(JSON.stringify({ text: serialized.text }));
