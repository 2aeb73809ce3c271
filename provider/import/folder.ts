import {
  closeSync,
  constants,
  copyFileSync,
  existsSync,
  lstatSync,
  mkdirSync,
  openSync,
  readFileSync,
  rmSync,
  statSync,
  writeFileSync,
} from "node:fs";
import { basename, isAbsolute, join, relative, sep } from "node:path";
import { redact } from "../api/redact.js";
import { isObject } from "../api/canonical.js";
import { PACKAGE } from "../version.js";
import { ImportError } from "./importError.js";
import type { ImportPlan } from "./plan.js";
import {
  DATA_FILE,
  mergePackageJson,
  renderProgram,
  renderProjectFile,
  renderStateProgram,
  STATE_PROGRAM_LINE,
  TSCONFIG,
} from "./program.js";
import type { InstallSource } from "./source.js";

// The program folder the import writes: what it holds already (checked before anything is read or written), the
// package.json entry that installs what the user runs, and the files written.

/** What the folder holds already, read and checked before anything is read from the platform or written. */
export interface Folder {
  dir: string;
  packageJson?: Record<string, unknown>;
  /** The project name of an existing Pulumi.yaml. */
  existingProject?: string;
  /** Whether the folder holds the data file of a program adopted through the stack's state (DATA_FILE). */
  dataFile: boolean;
  /** Whether its index.ts is a program written for a stack adopted through its state (STATE_PROGRAM_LINE). */
  stateProgram: boolean;
}

/**
 * Checks the folder before anything is written: no file the command writes may be a symbolic link (it would
 * write through it, anywhere), an existing package.json must be a JSON object with object dependency fields,
 * and an existing index.ts needs --force. A refusal leaves the folder as it was.
 */
export function inspectFolder(dir: string, force: boolean, vendored: string | undefined): Folder {
  if (existsSync(dir) && !statSync(dir).isDirectory()) throw new ImportError(`--out ${dir}: not a folder`);
  for (const name of [
    "index.ts",
    "package.json",
    "Pulumi.yaml",
    "tsconfig.json",
    ...(vendored ? ["vendor", join("vendor", vendored)] : []),
  ]) {
    const path = join(dir, name);
    if (lstatSync(path, { throwIfNoEntry: false })?.isSymbolicLink()) {
      throw new ImportError(
        `${path} is a symbolic link: refusing to write through it (replace it by a file, or choose another --out)`,
      );
    }
  }
  const index = join(dir, "index.ts");
  if (existsSync(index) && !force) throw new ImportError(`${index} exists: refusing to overwrite it (use --force)`);
  const stateProgram = existsSync(index) && readFileSync(index, "utf8").includes(STATE_PROGRAM_LINE);
  const folder: Folder = { dir, dataFile: existsSync(join(dir, DATA_FILE)), stateProgram };
  const pkgPath = join(dir, "package.json");
  if (existsSync(pkgPath)) {
    let pkg: unknown;
    try {
      pkg = JSON.parse(readFileSync(pkgPath, "utf8"));
    } catch (err) {
      throw new ImportError(
        `${pkgPath} is not valid JSON (${redact((err as Error).message)}): fix or remove it; nothing was written`,
      );
    }
    if (!isObject(pkg))
      throw new ImportError(
        `${pkgPath} must hold a JSON object ({...}), not ${Array.isArray(pkg) ? "an array" : String(pkg === null ? "null" : typeof pkg)}; nothing was written`,
      );
    for (const field of ["dependencies", "devDependencies"]) {
      if (pkg[field] !== undefined && !isObject(pkg[field]))
        throw new ImportError(
          `${pkgPath}: "${field}" must be an object of package names to versions; nothing was written`,
        );
    }
    folder.packageJson = pkg;
  }
  const projectFile = join(dir, "Pulumi.yaml");
  if (existsSync(projectFile))
    folder.existingProject = /^name:\s*["']?([^"'\s#]+)/m.exec(readFileSync(projectFile, "utf8"))?.[1];
  return folder;
}

/** Writes a file, refusing to follow a symbolic link put there since the folder was inspected. */
export function writeFile(path: string, data: string): void {
  const fd = openSync(path, constants.O_WRONLY | constants.O_CREAT | constants.O_TRUNC | constants.O_NOFOLLOW, 0o644);
  try {
    writeFileSync(fd, data);
  } finally {
    closeSync(fd);
  }
}

/** The package.json spec of this package, and what to do for it: the tarball copied in, or nothing. */
export interface PackagePlan {
  spec?: string;
  /** A tarball to copy into the program folder's vendor/ (so the folder installs on any machine). */
  copyFrom?: string;
  /** What `npx --package` takes to run this import again. */
  npxSpec: string;
  /** A line for the user when the spec could not be told, or takes a folder. */
  note?: string;
}

function posix(path: string): string {
  return path.split(sep).join("/");
}

/** The dependency spec that installs what the user is running, never a path into npx's cache. */
export function planPackage(source: InstallSource | undefined, dir: string): PackagePlan {
  if (source?.kind === "spec") return { spec: source.spec, npxSpec: `${PACKAGE.name}@${source.spec}` };
  if (source?.kind === "folder") {
    const rel = posix(relative(dir, source.path)) || ".";
    return {
      spec: `file:${rel}`,
      npxSpec: source.path,
      note: `package.json takes ${PACKAGE.name} from the folder ${source.path} (npm links it): on another machine, put it at the same place beside the program, or install a tarball of it (npm pack)`,
    };
  }
  if (source?.kind === "tarball" && existsSync(source.path)) {
    const inside = relative(dir, source.path);
    if (!inside.startsWith("..") && !isAbsolute(inside)) return { spec: `file:${posix(inside)}`, npxSpec: source.path };
    const name = basename(source.path);
    return { spec: `file:vendor/${name}`, copyFrom: source.path, npxSpec: join(dir, "vendor", name) };
  }
  return {
    npxSpec: `<the ${PACKAGE.name} tarball>`,
    note: `where ${PACKAGE.name} was installed from cannot be told, so package.json does not name it: add it with npm install <the tarball or folder you installed it from>`,
  };
}

/** Writes the program folder: Pulumi.yaml and tsconfig.json if missing, package.json, index.ts (and the data file after the state). */
export function writeFolder(plan: ImportPlan): void {
  const { dir } = plan.args;
  const { folder, packagePlan } = plan;
  mkdirSync(dir, { recursive: true });
  if (!existsSync(join(dir, "Pulumi.yaml"))) writeFile(join(dir, "Pulumi.yaml"), renderProjectFile(plan.project));
  if (!existsSync(join(dir, "tsconfig.json")))
    writeFile(join(dir, "tsconfig.json"), `${JSON.stringify(TSCONFIG, null, 2)}\n`);
  if (packagePlan.copyFrom && !keepsOwnEntry(folder)) {
    mkdirSync(join(dir, "vendor"), { recursive: true });
    copyFileSync(packagePlan.copyFrom, join(dir, "vendor", basename(packagePlan.copyFrom)), constants.COPYFILE_FICLONE);
  }
  writeFile(
    join(dir, "package.json"),
    `${JSON.stringify(mergePackageJson(folder.packageJson, plan.project, packagePlan.spec), null, 2)}\n`,
  );
  // A data file of an earlier import goes first: the program must not find one until the state holds what it lists.
  rmSync(join(dir, DATA_FILE), { force: true });
  const program =
    plan.carrier === "state"
      ? renderStateProgram(plan.account, plan.origin, new Date())
      : renderProgram(plan.account, plan.origin, new Date());
  writeFile(join(dir, "index.ts"), program);
}

/** Whether the folder's package.json names this package already (its entry is then kept). */
export function keepsOwnEntry(folder: Folder): boolean {
  return (
    folder.packageJson !== undefined &&
    isObject(folder.packageJson.dependencies) &&
    PACKAGE.name in folder.packageJson.dependencies
  );
}
