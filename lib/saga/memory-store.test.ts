import { describeSagaStoreContract } from "@/tests/contract/saga-store-contract";
import { MemorySagaStore } from "./memory-store";

describeSagaStoreContract("MemorySagaStore", async () => ({ store: new MemorySagaStore(), cleanup: async () => {} }));
