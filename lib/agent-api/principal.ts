/** Who calls the harness API: an agent token scoped to named tools (defined with the tokens). */
export type { AgentPrincipal } from "@/lib/tokens/authenticate-agent";
