import fs from 'node:fs';
import { createRequire } from 'node:module';
import type { Page } from 'playwright-core';

/** axe-core from npm, put into the page by the test (the page's CSP runs no inline script). */
const AXE = fs.readFileSync(createRequire(import.meta.url).resolve('axe-core/axe.min.js'), 'utf8');

/**
 * axe-core's serious and critical violations on the page as it is now (or in the part `selector`
 * names), one line per element, in the colour scheme the page has now.
 */
export async function axeLines(page: Page, selector = 'html'): Promise<string[]> {
  if (!(await page.evaluate('typeof axe === "object"'))) await page.evaluate(AXE);
  return page.evaluate(async (within) => {
    const g = globalThis as any;
    const result = await g.axe.run(g.document.querySelector(within), { resultTypes: ['violations'] });
    return result.violations
      .filter((v: any) => v.impact === 'serious' || v.impact === 'critical')
      .flatMap((v: any) =>
        v.nodes.map((n: any) => `${v.id} (${v.impact}) ${n.target.join(' ')}: ${n.failureSummary}`),
      );
  }, selector);
}

/** axeLines in the light scheme and in the dark one, each line marked with its scheme; light after. */
export async function axeLightAndDark(page: Page, selector = 'html'): Promise<string[]> {
  const found: string[] = [];
  for (const colorScheme of ['light', 'dark'] as const) {
    await page.emulateMedia({ colorScheme });
    found.push(...(await axeLines(page, selector)).map((line) => `${colorScheme}: ${line}`));
  }
  await page.emulateMedia({ colorScheme: 'light' });
  return found;
}
