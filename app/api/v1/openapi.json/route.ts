import { allEndpoints } from "@/lib/delivery/contracts";
import { getOpenApiDocument } from "@/packages/client/src/protocol/contracts/meta";
import { buildOpenApiDocument, type OpenApiDocument } from "@/lib/delivery/openapi";
import { publicRoute } from "@/lib/delivery/route";

let document: OpenApiDocument | undefined;

/** The OpenAPI 3.1 document, built once per process from the endpoint contracts. */
export const GET = publicRoute(getOpenApiDocument, () => (document ??= buildOpenApiDocument(allEndpoints)));
