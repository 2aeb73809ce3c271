/** The commit of release 0.1.0. */
export declare const RELEASE_0_1_0: string;
/** The package as it was at `commit`, built into a folder of its own that can stand in for node_modules/pulumi-llm-accounts. */
export declare function buildRelease(commit?: string): string;
/** Every version a user may have written states with, oldest first (see release.mjs). */
export declare const RELEASES: { name: string; commit: string; why: string }[];
