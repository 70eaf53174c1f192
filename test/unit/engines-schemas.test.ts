import fs from 'node:fs';
import path from 'node:path';
import { fileURLToPath } from 'node:url';
import { validateWorkflow } from '@action-validator/core';
import { Ajv } from 'ajv';
// @ts-expect-error: the package ships GitLab's published .gitlab-ci.yml schema as plain JS, untyped.
import { schema as gitlabSchema } from 'gitlab-ci-local/src/schema/schema.js';
import { Job } from 'kubernetes-models/batch/v1/Job';
import { describe, expect, it } from 'vitest';
import { parse } from 'yaml';
import { githubWorkflow } from '../../src/engines/github.js';
import { gitlabJob, gitlabRoot } from '../../src/engines/gitlab.js';
import { type JobInput, jobManifest, RUNNER_UID } from '../../src/engines/k8s.js';
import { CLAUDE_CODE_VERSION } from '../../src/engines/script.js';

/**
 * The generated files against the platforms' published schemas, from npm packages (never fetched
 * at test time): GitHub's workflow schema as SchemaStore publishes it (@action-validator/core),
 * GitLab's .gitlab-ci.yml schema (as gitlab-ci-local ships it), and the Kubernetes API's OpenAPI
 * schema (kubernetes-models).
 */
const ROOT = path.resolve(path.dirname(fileURLToPath(import.meta.url)), '../..');

const ajv = new Ajv({ allErrors: true, strict: false, validateFormats: false });
const validateGitlab = ajv.compile(gitlabSchema);

const JOB: JobInput = {
  name: 'agentbox-fix-abc123',
  type: 'fix',
  task: 'fix "a; rm -rf ~" $(touch /tmp/pwned)',
  image: 'registry.example/agentbox-runner:0.1.0',
  repo: 'https://git.example/team/app.git',
  commit: 'a'.repeat(40),
  secrets: { anthropic: 'agentbox-anthropic', git: 'agentbox-git' },
  gitUser: 'x-access-token',
  cpu: '2',
  memory: '4Gi',
  ttlSeconds: 86_400,
  deadlineSeconds: 10_800,
  sandbox: 'container',
  model: 'claude-sonnet-4-5',
  budget: '5',
};

const k8sErrors = (manifest: unknown): string | null => {
  try {
    new Job(manifest as never).validate();
    return null;
  } catch (error) {
    return (error as Error).message;
  }
};

describe('generated CI files against the platforms’ schemas', () => {
  it('the GitHub workflow is valid; a broken one is not (the validator can fail)', () => {
    const text = githubWorkflow('0.1.0', 'agentbox@0.1.0');
    expect(validateWorkflow(text).errors).toEqual([]);
    const broken = text.replace('runs-on:', 'runs_on:');
    expect(validateWorkflow(broken).errors.length).toBeGreaterThan(0);
  });

  it('the GitLab job and the root file are valid; a broken job is not', () => {
    for (const text of [gitlabJob('0.1.0', 'agentbox@0.1.0'), gitlabRoot()]) {
      expect(validateGitlab(parse(text)), JSON.stringify(validateGitlab.errors)).toBe(true);
    }
    const broken = parse(gitlabJob('0.1.0', 'agentbox@0.1.0'));
    broken.agentbox.when = 'sometimes';
    expect(validateGitlab(broken)).toBe(false);
  });

  it('the Kubernetes Job is valid against the API schema; a broken one is not', () => {
    const manifest = jobManifest(JOB);
    expect(k8sErrors(manifest)).toBeNull();
    expect(k8sErrors(parse(JSON.stringify(manifest)))).toBeNull();
    const broken = structuredClone(manifest) as any;
    broken.spec.backoffLimit = 'none';
    expect(k8sErrors(broken)).toMatch(/backoffLimit/);
  });

  it('installs the Claude Code release agentbox is measured against', () => {
    const pkg = JSON.parse(fs.readFileSync(path.join(ROOT, 'package.json'), 'utf8'));
    expect(pkg.devDependencies['@anthropic-ai/claude-code']).toBe(CLAUDE_CODE_VERSION);
    expect(githubWorkflow('0.1.0', 'agentbox@0.1.0')).toContain(
      `"@anthropic-ai/claude-code@${CLAUDE_CODE_VERSION}"`,
    );
  });
});

/** A GitHub expression as the workflow spells it; `expr('')` is the opening of any. */
const expr = (e: string) => (e ? `\${{ ${e} }}` : '${{');

describe('the GitHub workflow: who can start it, what it may do, where input goes', () => {
  const workflow = parse(githubWorkflow('0.1.0', 'agentbox@0.1.0'));
  const job = workflow.jobs.run;
  const steps: any[] = job.steps;

  it('has a dispatch with type, task, model and budget, and issue and comment triggers', () => {
    expect(Object.keys(workflow.on.workflow_dispatch.inputs)).toEqual(['type', 'task', 'model', 'budget']);
    expect(workflow.on.issues.types).toEqual(['labeled']);
    expect(workflow.on.issue_comment.types).toEqual(['created']);
  });

  it('a comment starts a run only from an owner, member or collaborator, never on a pull request', () => {
    expect(job.if).toContain(
      `contains(fromJSON('["OWNER","MEMBER","COLLABORATOR"]'), github.event.comment.author_association)`,
    );
    expect(job.if).toContain('!github.event.issue.pull_request');
    expect(job.if).toContain("startsWith(github.event.comment.body, '/agentbox ')");
  });

  it('holds the least permissions: none by default, the job only contents and issues', () => {
    expect(workflow.permissions).toEqual({});
    expect(job.permissions).toEqual({ contents: 'write', issues: 'write' });
    expect(steps[0]).toEqual({ uses: 'actions/checkout@v4', with: { 'persist-credentials': false } });
  });

  it('never expands a GitHub expression in a script: inputs go through env', () => {
    for (const step of steps) if (step.run) expect(step.run).not.toContain(expr(''));
    const run = steps.find((s) => s.name === 'Run agentbox');
    expect(run.env.COMMENT_BODY).toBe(expr('github.event.comment.body'));
    expect(run.env.ISSUE_TITLE).toBe(expr('github.event.issue.title'));
    expect(run.env.ANTHROPIC_API_KEY).toBe(expr('secrets.ANTHROPIC_API_KEY'));
    expect(run.run).toContain(`agentbox "\${args[@]}" --push -- "$AGENTBOX_TASK"`);
  });
});

describe('the Kubernetes Job', () => {
  const manifest = jobManifest(JOB) as any;
  const pod = manifest.spec.template.spec;
  const container = pod.containers[0];
  const env = Object.fromEntries(container.env.map((e: any) => [e.name, e.value ?? e.valueFrom]));

  it('runs once, cleans up after itself, and has a deadline', () => {
    expect(manifest.spec).toMatchObject({
      backoffLimit: 0,
      ttlSecondsAfterFinished: 86_400,
      activeDeadlineSeconds: 10_800,
    });
    expect(pod.restartPolicy).toBe('Never');
  });

  it('runs as a non-root user, without privileges or a service account token', () => {
    expect(pod.securityContext).toMatchObject({ runAsNonRoot: true, runAsUser: RUNNER_UID });
    expect(container.securityContext).toEqual({
      allowPrivilegeEscalation: false,
      readOnlyRootFilesystem: true,
      capabilities: { drop: ['ALL'] },
    });
    expect(pod.automountServiceAccountToken).toBe(false);
  });

  it('takes the task as an env value, never inside its command, and secrets from Secrets', () => {
    expect(JSON.stringify(container.command)).not.toContain('rm -rf');
    expect(env.AGENTBOX_TASK).toBe(JOB.task);
    expect(env.ANTHROPIC_API_KEY).toEqual({ secretKeyRef: { name: 'agentbox-anthropic', key: 'api-key' } });
    expect(env.GIT_PUSH_TOKEN).toEqual({ secretKeyRef: { name: 'agentbox-git', key: 'token' } });
    expect(env).toMatchObject({ CI: 'true', AGENTBOX_SANDBOX: 'container', AGENTBOX_COMMIT: JOB.commit });
    expect(container.resources).toEqual({
      requests: { cpu: '2', memory: '4Gi' },
      limits: { cpu: '2', memory: '4Gi' },
    });
  });

  it('with --sandbox required, the sandbox stays on (no AGENTBOX_SANDBOX)', () => {
    const strict = jobManifest({ ...JOB, sandbox: 'required' }) as any;
    const names = strict.spec.template.spec.containers[0].env.map((e: any) => e.name);
    expect(names).not.toContain('AGENTBOX_SANDBOX');
  });
});

describe('docker/runner/Dockerfile (parsed: it cannot be built here)', () => {
  const text = fs.readFileSync(path.join(ROOT, 'docker/runner/Dockerfile'), 'utf8');
  const lines = text
    .replace(/\\\n/g, ' ')
    .split('\n')
    .map((l) => l.trim())
    .filter((l) => l && !l.startsWith('#'));
  const instr = (name: string) =>
    lines.filter((l) => l.startsWith(`${name} `)).map((l) => l.slice(name.length + 1));

  it('starts from a supported Node line (24 LTS) and ends as the non-root user the Job runs as', () => {
    expect(instr('FROM')).toEqual(['node:24-slim']);
    expect(instr('USER').at(-1)).toBe(`${RUNNER_UID}:${RUNNER_UID}`);
  });

  it('installs what .ci/run installs for the sandbox, and pins Claude Code', () => {
    const ci = fs.readFileSync(path.join(ROOT, '.ci/run'), 'utf8');
    const ciPackages = [...ci.matchAll(/missing\+=\(([\w-]+)\)/g)]
      .map((m) => m[1]!)
      .filter((p) => p !== 'chromium' && p !== 'rsync');
    const apt = instr('RUN').find((r) => r.includes('apt-get install'))!;
    const installed = apt
      .split('&&')
      .find((p) => p.includes('apt-get install'))!
      .split(/\s+/)
      .filter((w) => /^[a-z][\w-]*$/.test(w));
    expect(ciPackages.sort()).toEqual(['bubblewrap', 'ripgrep', 'socat']);
    for (const p of [...ciPackages, 'git']) expect(installed).toContain(p);
    expect(text).toContain(`ARG CLAUDE_CODE_VERSION=${CLAUDE_CODE_VERSION}`);
  });
});
