import * as pulumi from "@pulumi/pulumi";
import * as llm from "pulumi-llm-accounts";

// Another stack's key and batch, got into this one by their ids and the state that stack holds, as every Pulumi
// resource's static `get` does: read from the platform at each run, never updated nor deleted by this stack.
const config = new pulumi.Config();

const key = llm.ApiKey.get("shared-key", config.require("keyId"), {
  key: config.requireSecret("key"),
  alias: config.require("alias"),
  createdAt: config.require("createdAt"),
});

const team = llm.SubAccountBatch.get("shared-team", config.require("teamId"), {
  tokens: config.requireSecretObject<string[]>("tokens"),
  alias: config.require("teamAlias"),
  balance: config.requireNumber("balance"),
  count: config.requireNumber("count"),
});

export const keyId = key.id;
export const keyHint = key.keyHint;
export const alias = key.alias;
export const enabled = key.enabled;
export const countries = key.securityConfig.apply((s) => s.geo?.countries);
export const teamId = team.id;
export const tokens = team.tokens;
export const teamCount = team.count;
export const teamAlias = team.alias;
export const instances = [
  llm.ApiKey.isInstance(key),
  llm.SubAccountBatch.isInstance(team),
  llm.ApiKey.isInstance(team),
  llm.SubAccountBatch.isInstance(key),
  llm.ApiKey.isInstance({}),
];
