/** Types of pulumi-cli.mjs, for the TypeScript tests. */
export declare const PULUMI_VERSION: string;
export declare const TEST_PASSPHRASE: string;
export interface PulumiCli {
  pulumi: string;
  binDir: string;
  version: string;
  source: "path" | "cache" | "build";
}
export declare function ensurePulumiCli(options?: { log?: (message: string) => void }): Promise<PulumiCli>;
export declare function pulumiEnv(backendDir: string, cli?: PulumiCli): Record<string, string>;
export declare function cacheRoot(): string;
export declare function cacheDir(): string;
