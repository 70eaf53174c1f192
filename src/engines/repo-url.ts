import { AgentboxError } from '../errors.js';

export interface CloneUrl {
  readonly url: string;
  /** What was changed on the way, for a note on stderr; null: the URL is used as it was. */
  readonly note: string | null;
}

/**
 * The URL a pod can clone from, given the origin's: an ssh URL becomes its https twin (the pod has
 * the push token, not the person's ssh keys) and credentials in the URL are dropped (a manifest is
 * printed, stored and shared; the token comes from a Secret). A local path cannot be cloned there.
 * Pure.
 */
export function cloneUrl(origin: string): CloneUrl {
  const scp = /^[\w.-]+@([\w.-]+):(?!\/\/)(.+)$/.exec(origin);
  if (scp) return { url: `https://${scp[1]}/${scp[2]}`, note: `cloned over https instead of ${origin}` };
  let parsed: URL;
  try {
    parsed = new URL(origin);
  } catch {
    parsed = new URL('file:///');
  }
  if (parsed.protocol === 'ssh:') {
    const url = `https://${parsed.hostname}${parsed.pathname}`;
    return { url, note: `cloned over https instead of ${origin}` };
  }
  if (parsed.protocol !== 'https:' && parsed.protocol !== 'http:') {
    throw new AgentboxError('USAGE', `a Kubernetes pod cannot clone the repository from "${origin}"`, {
      hint: 'push it to a git host and pass its https URL: agentbox k8s job … --repo https://host/owner/repo.git',
    });
  }
  if (!parsed.username && !parsed.password) return { url: origin, note: null };
  parsed.username = '';
  parsed.password = '';
  return {
    url: parsed.toString(),
    note: 'credentials in the origin URL were left out (the pod gets the token from its Secret)',
  };
}
