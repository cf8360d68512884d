import * as api from "@/lib/delivery/contracts/identity";
import { userRoute } from "@/lib/delivery/user-route";
import { findSsoSettings } from "@/lib/server/sso/find-sso-settings";
import { ssoEnvironment } from "@/lib/server/sso/sso-environment";

export const GET = userRoute(api.adminGetSsoSettings, "users.manage", async ({ prisma }) => findSsoSettings(prisma, ssoEnvironment()));
