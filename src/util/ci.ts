import type { Env } from './env.js';

/**
 * Whether agentbox runs in CI or a container job: `CI` is set (GitHub Actions, GitLab CI and most
 * others set CI=true; the Kubernetes Job agentbox prints sets it too). Then nothing asks, nothing
 * is drawn: even with a pseudo-terminal attached (`docker run -t`), output is plain lines.
 */
export function isCi(env: Env): boolean {
  const value = env.CI?.trim().toLowerCase();
  return value !== undefined && value !== '' && value !== 'false' && value !== '0';
}
