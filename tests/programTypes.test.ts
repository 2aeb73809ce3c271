import { afterAll, expect, test } from "@jest/globals";
import { rmSync, writeFileSync } from "node:fs";
import { join } from "node:path";
import { prepareProgram, typeCheckProgram } from "../scripts/lib/stack.mjs";
import { REPO } from "./support/programDir.js";

// The end-to-end stacks run their programs transpile-only after one typeCheckProgram of each program folder
// (tests/e2e/support.ts): that one check must fail where ts-node's check at every command would have.
const dirs: string[] = [];
afterAll(() => dirs.forEach((d) => rmSync(d, { recursive: true, force: true })));

test("typeCheckProgram rejects a program folder that misuses the package, naming the file and the error", async () => {
  const dir = prepareProgram(join(REPO, "tests/e2e/programs/lifecycle"), "llm-typecheck-program-");
  dirs.push(dir);
  writeFileSync(
    join(dir, "index.ts"),
    'import * as llm from "pulumi-llm-accounts";\nnew llm.ApiKey("k", { alias: 1 });\n',
  );
  await expect(typeCheckProgram(dir)).rejects.toThrow(/does not type-check:[\s\S]*index\.ts\(2,\d+\): error TS2322/);
}, 120_000);
