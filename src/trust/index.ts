import { type LoadedConfig, loadConfig, loadPersonConfig } from '../config/load.js';
import type { Env } from '../util/env.js';
import { type TrustStatus, trustStatus } from './status.js';

export { decideTrust, hashEntries, isTrusted, type TrustState, wasTrusted } from './decide.js';
export type { TrustEntry } from './entries.js';
export { entryLine, trustEvent, untrustedNotice } from './render.js';
export { launchTrusted, type TrustStatus, trustStatus } from './status.js';

/** The configuration in effect: the project file's loosening values only when the repository is trusted. */
export function loadTrustedConfig(options: {
  repoRoot: string | undefined;
  env: Env;
}): LoadedConfig & { readonly trust: TrustStatus | undefined } {
  const person = loadPersonConfig(options.env);
  const trust = options.repoRoot ? trustStatus(options.repoRoot, options.env, person) : undefined;
  return {
    ...loadConfig({ ...options, person, projectTrusted: trust?.trusted === true }),
    trust,
  };
}
