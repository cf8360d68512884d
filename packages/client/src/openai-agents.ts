/** The OpenAI Agents SDK adapter: Sagaboard-logged tools, held calls as the SDK's interruptions. Needs `@openai/agents`. */
export * from "@/lib/agent/adapters/openai-agents";
