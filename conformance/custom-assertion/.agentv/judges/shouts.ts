// The legacy folder .agentv/judges/ still provides custom types.
const payload = JSON.parse(await Bun.stdin.text());
const output: string = payload.output ?? "";
const loud = output === output.toUpperCase();
console.log(JSON.stringify({ score: loud ? 1 : 0, assertions: [{ text: "all caps", passed: loud }] }));
