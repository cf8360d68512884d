/** Simulated external systems: the test oracle and the demo's world. */
export * from "./crm";
export * from "./email";
export * from "./errors";
export * from "./faults";
export * from "./ledger";
export * from "./payments";
export * from "./system";
export * from "./ticketing";
export * from "./warehouse";
export * from "./world";
