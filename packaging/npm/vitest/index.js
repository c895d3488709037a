'use strict';
// checkShutdown(command) runs `mcp-shutdown check --format json -- COMMAND` and keeps the JSON
// report and the report's own text (`mcp-shutdown report render --format text`: the matrix,
// every missed rule, what held the server, the fix). The matchers read the report's keys and
// the binary's exit code; nothing is judged here.

const { spawn } = require('node:child_process');
const fs = require('node:fs');
const os = require('node:os');
const path = require('node:path');

// The binary's exit codes (README, "Exit codes").
const CONFORMS = 0;
const MISSED = 1;
const INTERRUPTED = 130;
// 128 + signal: SIGHUP, SIGINT, SIGTERM.
const INTERRUPTED_CODES = [129, INTERRUPTED, 143];

// The rules behind toLeaveNothingRunning: the server outliving its client, and processes it
// started outliving it.
const NOTHING_RUNNING = ['stdio-exit-on-client-death', 'process-no-leaked-descendants'];

/** The mcp-shutdown binary: `explicit`, $MCP_SHUTDOWN_BIN, the npm package's, or PATH's. */
function findBinary(explicit) {
  if (explicit) return explicit;
  if (process.env.MCP_SHUTDOWN_BIN) return process.env.MCP_SHUTDOWN_BIN;
  try {
    return require.resolve('@mcp-shutdown-conformance/linux-x64/bin/mcp-shutdown', {
      paths: [require.resolve('mcp-shutdown-conformance/package.json'), __dirname],
    });
  } catch {
    return 'mcp-shutdown';
  }
}

/** Shell words: whitespace separates, '…' and "…" group, \ escapes (no expansion). */
function shellWords(s) {
  const words = [];
  let word = null;
  let quote = null;
  for (let i = 0; i < s.length; i++) {
    const c = s[i];
    if (quote) {
      if (c === quote) quote = null;
      else if (c === '\\' && quote === '"' && i + 1 < s.length) word += s[++i];
      else word += c;
    } else if (c === '"' || c === "'") {
      quote = c;
      word = word ?? '';
    } else if (c === '\\' && i + 1 < s.length) {
      word = (word ?? '') + s[++i];
    } else if (/\s/.test(c)) {
      if (word !== null) words.push(word);
      word = null;
    } else {
      word = (word ?? '') + c;
    }
  }
  if (quote) throw new Error(`unclosed ${quote} in ${s}`);
  if (word !== null) words.push(word);
  return words;
}

function run(argv, options) {
  return new Promise((resolve, reject) => {
    const child = spawn(argv[0], argv.slice(1), {
      cwd: options.cwd,
      env: options.env ?? process.env,
      stdio: ['ignore', 'pipe', 'pipe'],
    });
    const out = [];
    const err = [];
    child.stdout.on('data', (d) => out.push(d));
    child.stderr.on('data', (d) => err.push(d));
    child.on('error', reject);
    child.on('close', (code, signal) =>
      resolve({
        code: code ?? (signal === 'SIGINT' ? INTERRUPTED : 128),
        stdout: Buffer.concat(out).toString('utf8'),
        stderr: Buffer.concat(err).toString('utf8'),
      }),
    );
  });
}

/** What one check said, and how to read it. */
class CheckResult {
  constructor(fields) {
    Object.assign(this, fields);
  }

  /** No rule missed at the binary's --fail-on level (exit code 0). */
  get conforms() {
    return this.exitCode === CONFORMS;
  }

  /** Every missed check: { server, scenario, rule, status, message }. */
  get missed() {
    const out = [];
    for (const r of this.report?.results ?? []) {
      for (const c of r.checks ?? []) {
        if (c.status === 'FAILURE' || c.status === 'WARNING') {
          out.push({ server: r.server, scenario: r.scenario, rule: c.id, status: c.status, message: c.message });
        }
      }
    }
    return out;
  }

  /** The fixes the report gives for what held the server, each once. */
  get hints() {
    const hints = (this.report?.results ?? []).map((r) => r.diagnostics?.hint).filter(Boolean);
    return [...new Set(hints)];
  }

  /** Every fix the report gives for what a server missed, its SDK's lines where known:
   * { id, title, sdk, rules, text, code: { fence, lines, source } }. */
  get fixes() {
    return Object.values(this.report?.servers ?? {}).flatMap((s) => s.fixes ?? []);
  }

  /** The checks of `rule`, over every case that judged it. */
  checksOf(rule) {
    return (this.report?.results ?? []).flatMap((r) => (r.checks ?? []).filter((c) => c.id === rule));
  }

  /** `rule` was judged and never missed. */
  ruleHeld(rule) {
    const checks = this.checksOf(rule);
    return checks.length > 0 && !checks.some((c) => c.status === 'FAILURE' || c.status === 'WARNING');
  }

  /** The report's text and the binary's own words, for a failed expectation. */
  explain() {
    const said = this.stderr
      .split('\n')
      .filter((l) => l.trim() && !l.startsWith('mcp-shutdown: time:'))
      .join('\n');
    return [`${this.argv.join(' ')} exited ${this.exitCode}`, this.text.trimEnd(), said]
      .filter(Boolean)
      .join('\n\n');
  }
}

async function renderText(bin, report) {
  const dir = fs.mkdtempSync(path.join(os.tmpdir(), 'mcp-shutdown-'));
  const file = path.join(dir, 'report.json');
  try {
    fs.writeFileSync(file, JSON.stringify(report));
    const done = await run([bin, 'report', 'render', '--format', 'text', '--from', file], {});
    return done.code === 0 ? done.stdout : done.stderr;
  } finally {
    fs.rmSync(dir, { recursive: true, force: true });
  }
}

/**
 * Checks how the server `command` (shell words or an argv array) behaves when its session
 * ends. Options: scenarios (endings; default the binary's), args (further `check` flags),
 * cwd, env, bin.
 */
async function checkShutdown(command, options = {}) {
  const cmd = Array.isArray(command) ? [...command] : shellWords(String(command));
  if (cmd.length === 0) throw new Error('checkShutdown: no server command given');
  const bin = findBinary(options.bin);
  const argv = [bin, 'check', '--format', 'json'];
  for (const s of options.scenarios ?? []) argv.push('--scenario', s);
  argv.push(...(options.args ?? []), '--', ...cmd);
  let done;
  try {
    done = await run(argv, options);
  } catch (e) {
    throw new Error(`checkShutdown: cannot run ${bin}: ${e.message} (npm install mcp-shutdown-conformance, or set MCP_SHUTDOWN_BIN)`);
  }
  if (INTERRUPTED_CODES.includes(done.code)) throw new Error('checkShutdown: interrupted');
  let report = null;
  if (done.code === CONFORMS || done.code === MISSED || done.stdout.trimStart().startsWith('{')) {
    try {
      report = JSON.parse(done.stdout);
    } catch {
      report = null;
    }
  }
  const text = report ? await renderText(bin, report) : '';
  return new CheckResult({ command: cmd, argv, exitCode: done.code, report, text, stderr: done.stderr });
}

function asResult(received, name) {
  if (!(received instanceof CheckResult)) {
    throw new TypeError(`${name}: expected the result of checkShutdown(), got ${typeof received}`);
  }
  return received;
}

/** A rule's expectation: held (judged, never missed) or told why not. */
function ruleMatcher(result, rules, what, needs) {
  if (!result.report) {
    return { pass: false, message: () => `no verdict: ${result.explain()}` };
  }
  const judged = rules.some((r) => result.checksOf(r).length > 0);
  const missed = result.missed.filter((m) => rules.includes(m.rule));
  const pass = judged && missed.length === 0;
  return {
    pass,
    message: () => {
      if (pass) return `expected the server not to ${what}, but it did\n\n${result.explain()}`;
      if (!judged) return `${rules.join(', ')} not judged: ${needs}`;
      const lines = missed.map((m) => `${m.status} ${m.server} ${m.scenario} ${m.rule}: ${m.message}`);
      return `expected the server to ${what}:\n${lines.join('\n')}\n\n${result.explain()}`;
    },
  };
}

/** Matchers for expect.extend(): vitest and jest. */
const matchers = {
  /** Every rule held at the binary's --fail-on level (exit code 0). */
  toConform(received) {
    const r = asResult(received, 'toConform');
    return {
      pass: r.conforms,
      message: () =>
        r.conforms ? `expected a missed rule, but the server conforms\n\n${r.explain()}` : r.explain(),
    };
  },
  /** It exits on end of input alone (rule stdio-exit-on-eof). */
  toExitOnEOF(received) {
    const r = asResult(received, 'toExitOnEOF');
    return ruleMatcher(r, ['stdio-exit-on-eof'], 'exit when stdin closes', 'run the `close` ending');
  },
  /** Neither the server nor anything it started outlives its client. */
  toLeaveNothingRunning(received) {
    const r = asResult(received, 'toLeaveNothingRunning');
    return ruleMatcher(r, NOTHING_RUNNING, 'leave nothing running', 'run the `exit` or `crash` ending');
  },
  /** One rule by id (`mcp-shutdown rules` lists them) held. */
  toHoldRule(received, rule) {
    const r = asResult(received, 'toHoldRule');
    return ruleMatcher(r, [rule], `hold ${rule}`, 'run an ending that rule judges (`mcp-shutdown rules`)');
  },
};

module.exports = { checkShutdown, matchers, findBinary, shellWords, CheckResult, NOTHING_RUNNING };
