export default {
  test: {
    setupFiles: ['@mcp-shutdown-conformance/vitest/setup'],
    // A check runs real servers through real endings: seconds, more on a loaded machine.
    testTimeout: 180_000,
  },
};
