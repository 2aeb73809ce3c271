import { readFileSync } from "node:fs";
import * as llm from "pulumi-llm-accounts";

// Declares what program.json lists (written by tests/e2e/convergence.test.ts before each `pulumi up`).
interface Program {
  keys: { name: string; alias: string; enabled: boolean; securityConfig: llm.ApiKeyArgs["securityConfig"] }[];
  batches: {
    name: string;
    alias: string;
    balance: number;
    count: number;
    modelPricing: llm.SubAccountBatchArgs["modelPricing"];
  }[];
}

const program = JSON.parse(readFileSync("program.json", "utf8")) as Program;
for (const { name, ...args } of program.keys) new llm.ApiKey(name, args);
for (const { name, ...args } of program.batches) new llm.SubAccountBatch(name, args);
