import * as pulumi from "@pulumi/pulumi";
import * as llm from "pulumi-llm-accounts";

const config = new pulumi.Config();

const key = new llm.ApiKey("key", {
  alias: "rotating",
  securityConfig: { geo: { countries: ["SG"] } },
  rotation: {
    everyDays: config.getNumber("everyDays"),
    triggers: [config.get("ticket") ?? "none"],
    overlapHours: config.getNumber("overlapHours") ?? 0,
  },
});

/**
 * A consumer of the key, as a service's deployment would be: it appends a fingerprint of every key it
 * receives (never the key) and the time to the file named by ROTATION_RECORD, read when it runs.
 */
async function record(value: string): Promise<void> {
  const { createHash } = await import("node:crypto");
  const { appendFileSync } = await import("node:fs");
  appendFileSync(process.env.ROTATION_RECORD!, `${Date.now()} ${createHash("sha256").update(value).digest("hex")}\n`);
}

const recorder: pulumi.dynamic.ResourceProvider = {
  async diff(_id, olds, news) {
    return { changes: olds.value !== news.value };
  },
  async create(inputs) {
    await record(inputs.value);
    return { id: "consumer", outs: inputs };
  },
  async update(_id, _olds, news) {
    await record(news.value);
    return { outs: news };
  },
};

class Consumer extends pulumi.dynamic.Resource {
  constructor(name: string, value: pulumi.Input<string>) {
    super(recorder, name, { value }, {});
  }
}

new Consumer("consumer", key.key);

export const apiKey = key.key;
export const keyHint = key.keyHint;
export const previousKeyExpiresAt = key.previousKeyExpiresAt;
export const rotatedAt = key.rotatedAt;
export const keyId = key.id;
