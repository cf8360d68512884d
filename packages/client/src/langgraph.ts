/** The LangGraph.js adapter: Sagaboard-logged tools, held calls as graph interrupts. Needs `@langchain/core` and `@langchain/langgraph`. */
export * from "./agent/adapters/langgraph";
