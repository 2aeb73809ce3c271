// The ready policy pack of pulumi-llm-accounts (CommonJS, as run-policy-pack requires its entry point): it loads
// the compiled rules of the package and starts the pack. Levels and options come from --policy-pack-config.
module.exports = import("../dist/provider/policy/readyPack.js").then((pack) => pack.startReadyPack());
