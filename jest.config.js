/** Jest runs the TypeScript tests as ES modules (got is ESM-only); see docs/development.md, "Running the tests". */
export default {
  testEnvironment: "node",
  extensionsToTreatAsEsm: [".ts"],
  transform: { "^.+\\.ts$": ["ts-jest", { useESM: true, tsconfig: "tsconfig.json" }] },
  moduleNameMapper: { "^(\\.{1,2}/.*)\\.js$": "$1" },
  testMatch: ["<rootDir>/tests/**/*.test.ts"],
  testTimeout: 60000,
};
