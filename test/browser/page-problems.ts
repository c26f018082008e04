import type { Page } from 'playwright-core';

/** Problems the page reported: console errors (CSP violations among them), uncaught exceptions, failed loads. */
export function watch(page: Page): string[] {
  const problems: string[] = [];
  page.on('console', (message) => {
    if (message.type() === 'error' || message.type() === 'warning') problems.push(`console ${message.type()}: ${message.text()}`);
  });
  page.on('pageerror', (error) => problems.push(`page error: ${error.message}`));
  // a poll still in flight when a test navigates is aborted by the navigation: not a problem of the page
  page.on('requestfailed', (request) => {
    if (request.failure()?.errorText !== 'net::ERR_ABORTED') problems.push(`request failed: ${request.url()} ${request.failure()?.errorText ?? ''}`);
  });
  return problems;
}
