import * as pulumi from "@pulumi/pulumi";
import * as llm from "pulumi-llm-accounts";

/** What a team's key may do; every part optional. */
interface Team {
  /** Two-letter upper-case country codes the key may be used from. */
  countries?: string[];
  /** Monthly spend limit of the key. */
  monthly?: number;
  /** IP addresses or CIDR ranges the key may be used from. */
  ips?: string[];
  /** Models the key may call. */
  models?: string[];
  /** Default true. */
  enabled?: boolean;
}

const config = new pulumi.Config();
const teams = config.getObject<Record<string, Team>>("teams") ?? {
  search: { countries: ["SG"], monthly: 100, ips: ["203.0.113.10"] },
  chat: { countries: ["SG", "JP"], monthly: 250, ips: ["198.51.100.0/24"] },
};
// Keys are labelled `<prefix>-<team>`; by default the prefix is the stack name, so stacks do not mix up.
const aliasPrefix = config.get("aliasPrefix") ?? pulumi.getStack();

function securityConfig(team: Team): llm.SecurityConfigArgs {
  return {
    ...(team.ips ? { ip: { allow: team.ips } } : {}),
    ...(team.countries ? { geo: { countries: team.countries } } : {}),
    ...(team.monthly !== undefined ? { spendLimit: { monthly: team.monthly } } : {}),
    ...(team.models ? { models: { mode: "model" as const, items: team.models } } : {}),
  };
}

// The resource name is the team's name: adding or removing a team touches that team's key only.
const teamKeys = Object.entries(teams).map(
  ([name, team]) =>
    [
      name,
      new llm.ApiKey(name, {
        alias: `${aliasPrefix}-${name}`,
        enabled: team.enabled ?? true,
        securityConfig: securityConfig(team),
      }),
    ] as const,
);

/** Team -> masked key (`sk-...1a2b`). */
export const keyHints = pulumi.output(Object.fromEntries(teamKeys.map(([name, key]) => [name, key.keyHint])));
/** Team -> key, a secret: `pulumi stack output keys --show-secrets`. */
export const keys = pulumi.secret(Object.fromEntries(teamKeys.map(([name, key]) => [name, key.key])));
