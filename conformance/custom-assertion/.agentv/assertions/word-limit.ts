// A custom assertion type: `type: word-limit` runs this file (bun run) with the code-grader payload.
const payload = JSON.parse(await Bun.stdin.text());
const output: string = payload.output ?? payload.answer ?? "";
const words = output.trim().split(/\s+/).filter(Boolean).length;
const limit = payload.config?.max_words ?? 3;
console.log(JSON.stringify({
  score: words <= limit ? 1 : 0,
  assertions: [{ text: `${words} words (limit ${limit})`, passed: words <= limit }],
}));
