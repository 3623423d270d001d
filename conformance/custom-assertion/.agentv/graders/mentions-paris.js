// A custom grader type from .agentv/graders/: partial credit for each city named.
const chunks = [];
process.stdin.on("data", (c) => chunks.push(c));
process.stdin.on("end", () => {
  const payload = JSON.parse(Buffer.concat(chunks).toString("utf8"));
  const output = payload.output ?? payload.answer ?? "";
  const hits = ["Paris", "Lyon"].filter((city) => output.includes(city));
  console.log(JSON.stringify({ score: hits.length / 2, assertions: hits.map((c) => ({ text: c, passed: true })) }));
});
