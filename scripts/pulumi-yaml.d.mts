/** Types of pulumi-yaml.mjs, for the TypeScript tests. */
export declare const YAML_VERSION: string;
export declare function yamlCacheDir(): string;
export declare function ensureYamlHost(options?: { log?: (message: string) => void }): { binDir: string; source: "path" | "cache" | "build" };
