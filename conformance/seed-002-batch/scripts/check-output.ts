import fs from 'node:fs';
type EvalInput = {
  answer?: string;
  expected_output?: Array<{ role: string; content: unknown }>;
};
function main() {
  const stdin = fs.readFileSync(0, 'utf8');
  const input = JSON.parse(stdin) as EvalInput;
  const expectedDecision = findExpectedDecision(input.expected_output);
  let candidateDecision: string | undefined;
  try {
    const parsed = JSON.parse(input.answer ?? '');
    candidateDecision = parsed.decision;
  } catch {
    candidateDecision = undefined;
  }
  const hits: string[] = [];
  const misses: string[] = [];
  if (expectedDecision === candidateDecision) {
    hits.push(`decision matches: ${expectedDecision}`);
  } else {
    misses.push(`mismatch: expected=${expectedDecision} actual=${candidateDecision}`);
  }
  const score = misses.length === 0 ? 1 : 0;
  process.stdout.write(JSON.stringify({
    score,
    hits,
    misses,
    reasoning: score === 1
      ? 'Batch runner output matches expected.'
      : 'Batch runner output did not match expected.',
  }));
}
function findExpectedDecision(messages?: Array<{ role: string; content: unknown }>) {
  if (!messages) return undefined;
  for (const msg of messages) {
    if (typeof msg.content === 'object' && msg.content !== null) {
      return (msg.content as Record<string, unknown>).decision as string;
    }
  }
  return undefined;
}
main();
