/** Types of go-tools.mjs, for the TypeScript tests. */
export declare const GO_TOOLS: Record<"pulumi-language-yaml" | "pulumi-gen-sdk", { module: string; package: string }>;
export declare function ensureGoTool(name: keyof typeof GO_TOOLS, options?: { log?: (message: string) => void }): { binDir: string; source: "path" | "cache" | "build" };
