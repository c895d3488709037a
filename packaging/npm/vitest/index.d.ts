export interface Missed {
  server: string;
  scenario: string;
  rule: string;
  status: 'FAILURE' | 'WARNING';
  message: string;
}

export interface CheckOptions {
  /** Endings to run (default: the binary's default endings). */
  scenarios?: string[];
  /** Further `mcp-shutdown check` flags: `--hosts`, `--fail-on must`, `--grace-ms 3000`. */
  args?: string[];
  cwd?: string;
  env?: NodeJS.ProcessEnv;
  /** The mcp-shutdown binary (default: $MCP_SHUTDOWN_BIN, the npm package's, PATH's). */
  bin?: string;
}

/** A change that makes a server meet the rules it missed (the JSON report's `servers.<name>.fixes`). */
export interface Fix {
  id: string;
  title: string;
  sdk?: string;
  language?: string;
  rules: string[];
  text: string;
  code?: { fence: string; lines: string; source: string };
}

export declare class CheckResult {
  readonly command: string[];
  readonly argv: string[];
  /** 0 conforms, 1 a rule missed, 2 no verdict (usage or harness error, a loaded machine). */
  readonly exitCode: number;
  /** The JSON report (null when the binary gave none). */
  readonly report: any;
  /** The report as the terminal shows it: matrix, missed rules, what held it, the fix. */
  readonly text: string;
  readonly stderr: string;
  readonly conforms: boolean;
  readonly missed: Missed[];
  readonly hints: string[];
  /** Every fix for what a server missed, its SDK's lines where known. */
  readonly fixes: Fix[];
  checksOf(rule: string): any[];
  ruleHeld(rule: string): boolean;
  explain(): string;
}

export declare function checkShutdown(command: string | string[], options?: CheckOptions): Promise<CheckResult>;
export declare function findBinary(explicit?: string): string;
export declare function shellWords(s: string): string[];
export declare const NOTHING_RUNNING: string[];

export interface ShutdownMatchers<R = unknown> {
  toConform(): R;
  toExitOnEOF(): R;
  toLeaveNothingRunning(): R;
  toHoldRule(rule: string): R;
}

type MatcherResult = { pass: boolean; message: () => string };
export declare const matchers: {
  toConform(received: CheckResult): MatcherResult;
  toExitOnEOF(received: CheckResult): MatcherResult;
  toLeaveNothingRunning(received: CheckResult): MatcherResult;
  toHoldRule(received: CheckResult, rule: string): MatcherResult;
};
