/**
 * A screen another tool wrote straight into the store, failing the schema: the
 * editor opens it as stored with the error and its pointer, for repair.
 */
import { expect, test } from './fixtures';
import { openEditor, savedRevision } from './editing';

test('an invalid stored screen opens with its error for repair; the fixed one saves and is served', async ({ page, stack }) => {
  const sine = stack.pv('SINE');
  const broken = { title: 'Broken', widgets: [{ type: 'label', channels: [sine] }, { type: 'dial', channels: [sine] }] };
  const revision = await stack.putRawScreen('e2e-broken', broken);
  await expect.poll(async () => (await page.request.get(`${stack.baseUrl}/api/screens/e2e-broken`)).status()).toBe(422);

  await openEditor(page, stack, 'e2e-broken');
  const banner = page.getByTestId('stored-invalid');
  await expect(banner).toContainText(`Revision ${revision} in the store fails the screen schema at /widgets/1/type`);
  const saveButton = page.getByRole('button', { name: 'Save' });
  await expect(saveButton).toBeDisabled(); // nothing changed yet: saving it as is would be refused anyway
  await expect(saveButton).toHaveAttribute('title', 'no changes to save');
  await expect(page.locator('.ed-item[data-type="label"]')).toHaveCount(1);
  const bad = page.locator('.ed-item[data-type="dial"]');
  await expect(bad).toHaveClass(/selected/); // the widget the pointer names

  // a change that is still invalid: the save is validated as usual
  await page.locator('.ed-item[data-type="label"]').click();
  await page.keyboard.press('ArrowDown');
  await saveButton.click();
  await expect(page.getByTestId('invalid')).toContainText('/widgets/1/type');
  await expect(bad).toHaveClass(/selected/);

  await page.keyboard.press('Delete');
  await expect(bad).toHaveCount(0);
  await saveButton.click();
  expect(await savedRevision(page, revision)).toBeGreaterThan(revision);
  await expect(banner).toHaveCount(0);
  const served = await page.request.get(`${stack.baseUrl}/api/screens/e2e-broken`);
  expect(served.status()).toBe(200);
  expect(((await served.json()) as { widgets: { type: string }[] }).widgets.map((w) => w.type)).toEqual(['label']);
});
