// The augmentation applies only once vitest's own declarations are in the program.
import 'vitest';
import type { ShutdownMatchers } from './index.js';

declare module 'vitest' {
  interface Assertion<T = any> extends ShutdownMatchers<T> {}
  interface AsymmetricMatchersContaining extends ShutdownMatchers {}
}
