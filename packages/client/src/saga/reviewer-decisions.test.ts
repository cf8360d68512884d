import { describeReviewerStoreContract } from "@/tests/contract/reviewer-store-contract";
import { MemorySagaStore } from "./memory-store";

describeReviewerStoreContract("MemorySagaStore", async () => ({ store: new MemorySagaStore(), cleanup: async () => {} }));
