/** Types of stack.mjs, for the TypeScript tests. */
import type { PulumiCli } from "../pulumi-cli.mjs";
export declare const REPO: string;
export declare function prepareProgram(source: string, prefix?: string): string;
export declare function linkNodeModules(dir: string): void;
/** Environment variable naming a file that gets one JSON line per `pulumi` command run (opt-in timing). */
export declare const TIMING_ENV: string;
/** Type-checks a prepared program folder with its own tsconfig.json; rejects with tsc's diagnostics. */
export declare function typeCheckProgram(dir: string): Promise<void>;

export interface RunResult {
  code: number;
  stdout: string;
  stderr: string;
  ms: number;
}

export interface StackOptions {
  dir: string;
  stack?: string;
  account?: { baseUrl: string; adminKey?: string; accountKey?: string };
  env?: Record<string, string>;
  /** false: run the program transpiled only, for a program type-checked once with typeCheckProgram. */
  typeCheck?: boolean;
  log?: (line: string) => void;
}

export declare class PulumiStack {
  static create(options: StackOptions): Promise<PulumiStack>;
  /** A stack not created yet (`create` runs `pulumi stack init`): for a folder that has no Pulumi.yaml yet. */
  constructor(options: StackOptions, cli: PulumiCli);
  readonly dir: string;
  readonly stack: string;
  /** The CLI this stack runs (`pulumi` is its binary). */
  readonly cli: PulumiCli;
  readonly home: string;
  readonly backend: string;
  env: Record<string, string>;
  run(args: string[], opts?: { allowFailure?: boolean; env?: Record<string, string>; positional?: string[] }): Promise<RunResult>;
  up(extra?: string[], opts?: { allowFailure?: boolean; env?: Record<string, string> }): Promise<RunResult>;
  preview(extra?: string[], opts?: { allowFailure?: boolean; env?: Record<string, string> }): Promise<RunResult>;
  refresh(extra?: string[], opts?: { allowFailure?: boolean; env?: Record<string, string> }): Promise<RunResult>;
  destroy(extra?: string[], opts?: { allowFailure?: boolean; env?: Record<string, string> }): Promise<RunResult>;
  setConfig(key: string, value: string | number | boolean, opts?: { secret?: boolean }): Promise<void>;
  removeConfig(key: string): Promise<void>;
  outputs(opts?: { showSecrets?: boolean }): Promise<Record<string, unknown>>;
  exportState(): Promise<string>;
  backendText(): string;
  dispose(): void;
}
