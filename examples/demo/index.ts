import * as llm from "pulumi-llm-accounts";

const key = new llm.ApiKey("demo", { alias: "demo-key", securityConfig: { geo: { countries: ["SG"] } } });
export const keyHint = key.keyHint;
export const apiKey = key.key;
