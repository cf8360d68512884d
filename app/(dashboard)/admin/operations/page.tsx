import type { Metadata } from "next";
import { OperationsLive } from "@/components/admin/operations";
import { BackLink } from "@/components/section";
import { requirePageUser } from "@/lib/server/auth/current-user";
import { getOperations } from "@/lib/desks/operations/get-operations";

export const dynamic = "force-dynamic";

export const metadata: Metadata = { title: "Operations" };

export default async function OperationsPage() {
  const { user, denied } = await requirePageUser("users.manage", { returnTo: "/admin/operations" });
  if (denied) return denied;
  try {
    return <OperationsLive initial={await getOperations({ actor: user })} />;
  } catch (e) {
    // The person gets a sentence; the cause goes to the server log.
    console.error("operations failed", e);
    return (
      <div>
        <BackLink href="/">Runs</BackLink>
        <div className="empty" role="alert">
          <strong>The operations figures could not be read.</strong>
          The database did not answer in time. Reload the page in a moment; if it keeps failing, the database itself is the problem.
        </div>
      </div>
    );
  }
}
