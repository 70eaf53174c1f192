import type { HeadlessType } from '../run/begin/tier.js';
import { GIT_SETUP, runScript, STRICT } from './script.js';

/** The runner image's user (docker/runner/Dockerfile): the pod runs as it, never as root. */
export const RUNNER_UID = 10001;
const HOME = '/home/agentbox';

export interface JobInput {
  /** metadata.name: unique per Job (`kubectl apply` keeps one object per name). */
  readonly name: string;
  readonly type: HeadlessType;
  readonly task: string;
  readonly image: string;
  /** A URL the pod can clone without the person's ssh keys (https). */
  readonly repo: string;
  readonly commit: string;
  /** Secret names: `key` holds ANTHROPIC_API_KEY under `api-key`; `git` a push token under `token`. */
  readonly secrets: { readonly anthropic: string; readonly git: string };
  readonly gitUser: string;
  readonly cpu: string;
  readonly memory: string;
  readonly ttlSeconds: number;
  readonly deadlineSeconds: number;
  /** container: the pod is the sandbox (AGENTBOX_SANDBOX=container); required: bubblewrap inside it. */
  readonly sandbox: 'container' | 'required';
  readonly model?: string | undefined;
  readonly budget?: string | undefined;
  /** Installed at pod start over the image's agentbox (--agentbox-from); absent: the image's own. */
  readonly agentboxFrom?: string | undefined;
}

/**
 * With AGENTBOX_FROM set, that agentbox is installed into the pod's home (an emptyDir: the image's
 * root file system is read-only) and comes first on PATH; the image's Claude Code stays.
 */
export const POD_INSTALL = `if [ -n "\${AGENTBOX_FROM:-}" ]; then
  npm install --global --prefix "$HOME/.agentbox" --no-fund --no-audit "$AGENTBOX_FROM"
  export PATH="$HOME/.agentbox/bin:$PATH"
fi
`;

/** Clones the commit, then the same headless run as in CI; the summary ends the pod's log. */
export const JOB_SCRIPT = `${STRICT}${POD_INSTALL}${GIT_SETUP}git clone --quiet "$AGENTBOX_REPO" repo
cd repo
git checkout --quiet --detach "$AGENTBOX_COMMIT"
${runScript('agentbox ci summary || true\n')}`;

const env = (name: string, value: string) => ({ name, value });
const secret = (name: string, secretName: string, key: string) => ({
  name,
  valueFrom: { secretKeyRef: { name: secretName, key } },
});

/**
 * A batch/v1 Job that runs one agentbox run and publishes it with --push. Pure. The task reaches
 * the script as an environment variable, never as part of the command.
 */
export function jobManifest(input: JobInput): Record<string, unknown> {
  const labels = { 'app.kubernetes.io/name': 'agentbox', 'agentbox/type': input.type };
  const volumes = ['home', 'tmp', 'work'];
  return {
    apiVersion: 'batch/v1',
    kind: 'Job',
    metadata: {
      name: input.name,
      labels,
      annotations: { 'agentbox/task': input.task.split('\n')[0]!.slice(0, 200) },
    },
    spec: {
      backoffLimit: 0,
      ttlSecondsAfterFinished: input.ttlSeconds,
      activeDeadlineSeconds: input.deadlineSeconds,
      template: {
        metadata: { labels },
        spec: {
          restartPolicy: 'Never',
          // The run needs nothing from the Kubernetes API: no token in the pod to steal.
          automountServiceAccountToken: false,
          enableServiceLinks: false,
          securityContext: {
            runAsNonRoot: true,
            runAsUser: RUNNER_UID,
            runAsGroup: RUNNER_UID,
            fsGroup: RUNNER_UID,
            seccompProfile: { type: 'RuntimeDefault' },
          },
          containers: [container(input, volumes)],
          volumes: volumes.map((name) => ({ name, emptyDir: {} })),
        },
      },
    },
  };
}

function container(input: JobInput, volumes: string[]): Record<string, unknown> {
  const mounts: Record<string, string> = { home: HOME, tmp: '/tmp', work: '/work' };
  return {
    name: 'agentbox',
    image: input.image,
    imagePullPolicy: 'IfNotPresent',
    workingDir: '/work',
    command: ['bash', '-c', JOB_SCRIPT],
    env: [
      env('CI', 'true'),
      env('HOME', HOME),
      ...(input.sandbox === 'container' ? [env('AGENTBOX_SANDBOX', 'container')] : []),
      env('AGENTBOX_REPO', input.repo),
      env('AGENTBOX_COMMIT', input.commit),
      env('AGENTBOX_TYPE', input.type),
      env('AGENTBOX_TASK', input.task),
      ...(input.model ? [env('AGENTBOX_MODEL', input.model)] : []),
      ...(input.budget ? [env('AGENTBOX_BUDGET', input.budget)] : []),
      ...(input.agentboxFrom ? [env('AGENTBOX_FROM', input.agentboxFrom)] : []),
      env('GIT_PUSH_USER', input.gitUser),
      secret('ANTHROPIC_API_KEY', input.secrets.anthropic, 'api-key'),
      secret('GIT_PUSH_TOKEN', input.secrets.git, 'token'),
    ],
    resources: {
      requests: { cpu: input.cpu, memory: input.memory },
      limits: { cpu: input.cpu, memory: input.memory },
    },
    securityContext: {
      allowPrivilegeEscalation: false,
      readOnlyRootFilesystem: true,
      capabilities: { drop: ['ALL'] },
    },
    volumeMounts: volumes.map((name) => ({ name, mountPath: mounts[name]! })),
  };
}
