#!/usr/bin/env node
// Runs the mcp-shutdown binary that the platform package (an optional dependency, installed
// only where it fits) carries, with this process's arguments, environment and terminal.
//
// Why a child process and not an exec: Node cannot replace itself with another program. So
// this launcher stays as the binary's parent and is transparent: the exit code is passed
// back; a signal that ends the binary ends this process the same way; SIGINT, SIGTERM and
// SIGHUP sent to this process alone (a CI runner cancelling, `kill PID`, npm forwarding a
// signal) are forwarded, so the harness always gets to stop every server it started (it
// exits 130 after that). Ctrl-C in a terminal reaches the binary directly as well (one
// process group); a repeated SIGINT is harmless to it.
//
// MCP_SHUTDOWN_BIN is set to the binary: the harness re-executes itself for every case
// (`mcp-shutdown __case`, `__client`), and those processes must be the binary, not this
// script. A MCP_SHUTDOWN_BIN already set names the binary to run instead.
'use strict';

const { spawn } = require('node:child_process');
const fs = require('node:fs');
const os = require('node:os');
const path = require('node:path');

const { version } = require('../package.json');

// process.platform + process.arch → the package that carries that build.
const PLATFORM_PACKAGES = {
  'linux x64': '@mcp-shutdown-conformance/linux-x64',
};

const FORWARDED = ['SIGINT', 'SIGTERM', 'SIGHUP'];

function fail(message) {
  process.stderr.write(`mcp-shutdown-conformance: ${message}\n`);
  // 2: the tool's own exit code for a usage or harness error.
  process.exit(2);
}

function binaryPath() {
  if (process.env.MCP_SHUTDOWN_BIN) {
    return process.env.MCP_SHUTDOWN_BIN;
  }
  const key = `${process.platform} ${process.arch}`;
  const pkg = PLATFORM_PACKAGES[key];
  if (!pkg) {
    fail(
      `no build for ${key}: the suite runs on Linux x64 only (it needs pidfd, ` +
        'PR_SET_CHILD_SUBREAPER and /proc). Elsewhere run it in a Linux container or VM.',
    );
  }
  let dir;
  try {
    dir = path.dirname(require.resolve(`${pkg}/package.json`));
  } catch {
    fail(
      `the platform package ${pkg}@${version} is not installed. It is an optional ` +
        'dependency of mcp-shutdown-conformance: an install with --omit=optional (or ' +
        '--no-optional, or a lockfile made on another platform) leaves it out. Reinstall ' +
        `without that, or add it: npm install ${pkg}@${version}`,
    );
  }
  const bin = path.join(dir, 'bin', 'mcp-shutdown');
  try {
    fs.accessSync(bin, fs.constants.X_OK);
  } catch (e) {
    fail(`${bin} is missing or not executable (${e.code}): reinstall ${pkg}@${version}`);
  }
  return bin;
}

function main() {
  const bin = binaryPath();
  const child = spawn(bin, process.argv.slice(2), {
    stdio: 'inherit',
    env: { ...process.env, MCP_SHUTDOWN_BIN: bin },
  });
  const forward = (signal) => {
    if (child.exitCode === null && child.signalCode === null) {
      child.kill(signal);
    }
  };
  for (const signal of FORWARDED) {
    process.on(signal, forward);
  }
  child.on('error', (e) => fail(`cannot run ${bin}: ${e.message}`));
  child.on('exit', (code, signal) => {
    if (signal === null) {
      process.exit(code);
    }
    // Die of the same signal, so whoever started us sees what happened to the binary.
    for (const s of FORWARDED) {
      process.removeListener(s, forward);
    }
    process.kill(process.pid, signal);
    // A signal whose default is not to terminate: the shell's convention instead.
    process.exit(128 + (os.constants.signals[signal] || 0));
  });
}

main();
