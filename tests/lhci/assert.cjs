// Lighthouse CI's own verdicts for pagelab's parity tests: one process for every case.
//
// stdin  <- {"lhrs": {name: LHR}, "cases": [{"options": ci.assert options, "lhrs": [name...]}],
//            "budgets": [budget.json contents...]}
// stdout -> {"results": [[assertion result...] per case], "presets": {name: assertions},
//            "budgets": [the assertMatrix LHCI makes of each budget.json]}
// A case whose options Lighthouse CI throws on gets {"error": message} instead of a list.
// Results are those of `lhci assert` with includePassedAssertions (passed ones too); NaN is
// written as the string "NaN" (JSON has no NaN).
'use strict';

const path = require('node:path');

const utils = path.join(process.env.LHCI_PARITY_DIR, 'node_modules', '@lhci', 'utils', 'src');
const {getAllAssertionResults} = require(path.join(utils, 'assertions.js'));
const {convertBudgetsToAssertions} = require(path.join(utils, 'budgets-converter.js'));

const nanSafe = (key, value) =>
  typeof value === 'number' && !Number.isFinite(value) ? String(value) : value;

async function main() {
  const chunks = [];
  for await (const chunk of process.stdin) chunks.push(chunk);
  const input = JSON.parse(Buffer.concat(chunks).toString('utf8'));
  const results = input.cases.map(({options, lhrs}) => {
    try {
      // Deep copies: Lighthouse CI may not mutate one case's inputs for the next.
      const runs = lhrs.map((name) => structuredClone(input.lhrs[name]));
      return getAllAssertionResults(
        {...structuredClone(options), includePassedAssertions: true}, runs);
    } catch (error) {
      return {error: String(error && error.message)};
    }
  });
  const presets = Object.fromEntries(['all', 'recommended', 'no-pwa'].map((name) =>
    [`lighthouse:${name}`, require(path.join(utils, 'presets', `${name}.js`)).assertions]));
  const budgets = [];
  for (const budget of input.budgets || []) {
    budgets.push(await convertBudgetsToAssertions(budget));
  }
  process.stdout.write(JSON.stringify({results, presets, budgets}, nanSafe));
}

main().catch((error) => {
  process.stderr.write(String(error && error.stack) + '\n');
  process.exit(1);
});
