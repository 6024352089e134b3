import { defineConfig } from '@playwright/test';
import base from './playwright.config';

/** `make ui-screenshots`: saves docs/screenshots/*.png from the real stack. */
export default defineConfig({ ...base, testDir: 'tests/screenshots' });
