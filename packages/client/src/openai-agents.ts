/** The OpenAI Agents SDK adapter: Sagaboard-logged tools, held calls as the SDK's interruptions. Needs `@openai/agents`. */
export * from "./agent/adapters/openai-agents";
