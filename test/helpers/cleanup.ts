import { afterAll, onTestFinished } from 'vitest';

type Cleanup = () => void | Promise<void>;

/** What was made outside a test (a beforeAll, a describe body): removed when the file is done. */
const atFileEnd: Cleanup[] = [];
try {
  // Vitest evaluates the helpers afresh for each test file, so this registers once per file.
  afterAll(async () => {
    for (const cleanup of atFileEnd.splice(0).reverse()) await cleanup();
  });
} catch {
  // Not under vitest (a bench, a script): those call cleanup() themselves.
}

/**
 * Registers the removal of what a helper made (a temp repo, a HOME, a server) the way changesets'
 * test utils do, so tests need no hand-written cleanup: inside a test or a beforeEach it runs when
 * the test ends (vitest runs these in reverse order: the newest first); made anywhere else, when
 * the file's tests are done. Each cleanup must be safe to run twice (a test may still call it).
 */
export function cleanupLater(cleanup: Cleanup): void {
  try {
    onTestFinished(cleanup);
  } catch {
    atFileEnd.push(cleanup);
  }
}
