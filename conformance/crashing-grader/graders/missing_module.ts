// A TypeScript grader whose helper module is missing: bun prints the error, then its banner.
import { grade } from "./grade-helper";

console.log(JSON.stringify(grade()));
