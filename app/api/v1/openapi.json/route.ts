import { allEndpoints } from "@/lib/api/contracts";
import { getOpenApiDocument } from "@/lib/api/contracts/meta";
import { buildOpenApiDocument, type OpenApiDocument } from "@/lib/api/openapi";
import { publicRoute } from "@/lib/api/route";

let document: OpenApiDocument | undefined;

/** The OpenAPI 3.1 document, built once per process from the endpoint contracts. */
export const GET = publicRoute(getOpenApiDocument, () => (document ??= buildOpenApiDocument(allEndpoints)));
