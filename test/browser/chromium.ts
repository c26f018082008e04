import { access, constants } from 'node:fs/promises';
import { chromium, type Browser } from 'playwright-core';

/** Debian's Chromium (.ci/services installs it); the browser tests fail, never skip, without it. */
export const CHROMIUM_PATH = process.env.OUTBOXER_TEST_CHROMIUM ?? '/usr/bin/chromium';

/** A headless Chromium as CI runs it: no sandbox (containers), no GPU, no traffic of its own. */
export async function launchChromium(): Promise<Browser> {
  try {
    await access(CHROMIUM_PATH, constants.X_OK);
  } catch {
    throw new Error(`${CHROMIUM_PATH} is missing: install Debian's chromium package (bash .ci/services does), or set OUTBOXER_TEST_CHROMIUM`);
  }
  return chromium.launch({
    executablePath: CHROMIUM_PATH,
    args: [
      '--headless',
      '--no-sandbox',
      '--disable-gpu',
      '--disable-background-networking',
      '--disable-quic',
      '--no-first-run',
      '--disable-component-update',
      '--disable-sync',
    ],
  });
}
