/** The Vercel AI SDK adapter: Sagaboard-logged tools, tool approval answered by Sagaboard (never by the browser). Needs `ai` 7. */
export * from "./agent/adapters/ai-sdk";
