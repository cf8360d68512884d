import { MissingPage } from "@/components/dashboard/missing-page";

export default function PivotNotFound() {
  return (
    <MissingPage
      what="This pivot"
      hint="The link may be mistyped. Pivots that wait for a reviewer are listed on the runs page under “awaiting pivot”."
      back={{ href: "/?status=AWAITING_PIVOT", label: "← Runs awaiting a pivot" }}
    />
  );
}
