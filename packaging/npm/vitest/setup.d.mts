import type { ShutdownMatchers } from './index.js';

declare module 'vitest' {
  interface Assertion<T = any> extends ShutdownMatchers<T> {}
  interface AsymmetricMatchersContaining extends ShutdownMatchers {}
}
