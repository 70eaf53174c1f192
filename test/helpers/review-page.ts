import type { Page } from 'playwright-core';
import { expect } from 'vitest';
import type { Project } from './project.js';

/**
 * Presses the run page's "Request changes" (its name as `button` matches, with its comment count)
 * and follows revision 2 as the page does: ACTIVE, then back in REVIEW. Returns the user message
 * the model got for it (the review as the agent reads it).
 */
export async function requestChanges(page: Page, p: Project, run: string, button: RegExp): Promise<string> {
  const first = p.server.requests.length;
  await page.getByRole('button', { name: button }).click();
  await page.locator('#summary [data-status="ACTIVE"]').waitFor({ timeout: 30_000 });
  await page.locator('#summary [data-status="REVIEW"]').waitFor({ timeout: 120_000 });
  expect(p.state(run)).toMatchObject({ status: 'REVIEW', revision: { number: 2 } });
  const sent = p.server.requests
    .slice(first)
    .find((r) => r.view.lastUserText.includes('revision 2 (agentbox revise)'));
  return sent?.view.lastUserText ?? '';
}
