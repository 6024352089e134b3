/** A Playwright reporter that passes the benchmarks' stdout through (their JSON) and reports failures on stderr. */
import type { Reporter, TestCase, TestResult } from '@playwright/test/reporter';

export default class JsonStdoutReporter implements Reporter {
  onStdOut(chunk: string | Buffer): void {
    process.stdout.write(chunk);
  }

  onStdErr(chunk: string | Buffer): void {
    process.stderr.write(chunk);
  }

  onTestEnd(test: TestCase, result: TestResult): void {
    if (result.status !== 'passed') process.stderr.write(`${test.title}: ${result.status}\n${result.error?.message ?? ''}\n`);
  }
}
