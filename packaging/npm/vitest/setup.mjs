// A vitest setup file (`test.setupFiles: ['@mcp-shutdown-conformance/vitest/setup']`): adds
// the matchers to vitest's expect. For jest: `expect.extend(require('@mcp-shutdown-conformance/vitest').matchers)`.
import { expect } from 'vitest';
import pkg from './index.js';

expect.extend(pkg.matchers);
