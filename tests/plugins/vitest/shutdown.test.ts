// A server author's own tests of shutdown, through @mcp-shutdown-conformance/vitest, in
// TypeScript: tests/conformance/plugins.rs type-checks it with tsc (the matchers' types on
// vitest's expect) and runs it with vitest, expecting the first two tests to pass and "the
// timer server conforms" to fail with the report. fixed.mjs exits when its session ends;
// timer.mjs (a setInterval, the classic Node bug) does not.
import { checkShutdown, type CheckOptions } from '@mcp-shutdown-conformance/vitest';
import { expect, test } from 'vitest';

const endings: CheckOptions = { scenarios: ['close', 'exit'] };

test('the fixed server conforms', async () => {
  const result = await checkShutdown('node fixed.mjs', endings);
  expect(result).toExitOnEOF();
  expect(result).toLeaveNothingRunning();
  expect(result).toConform();
});

test('the timer server is told what it missed', async () => {
  const result = await checkShutdown(['node', 'timer.mjs'], endings);
  expect(result).not.toExitOnEOF();
  expect(result).not.toLeaveNothingRunning();
  expect(result.missed.map((m) => m.rule)).toContain('stdio-exit-on-eof');
  expect(result).toHoldRule('stdio-stdout-only-mcp');
  expect(result.hints.length).toBeGreaterThan(0);
  expect(result.fixes.some((f) => f.code?.lines.includes("process.stdin.on(\"end\""))).toBe(true);
});

test('the timer server conforms', async () => {
  expect(await checkShutdown('node timer.mjs', endings)).toConform();
});
