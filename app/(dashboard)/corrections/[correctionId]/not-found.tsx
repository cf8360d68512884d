import { MissingPage } from "@/components/dashboard/missing-page";

export default function CorrectionNotFound() {
  return (
    <MissingPage
      what="This correction"
      hint="The link may be mistyped, or the correction was recorded in another Sagaboard. The corrections queue lists the drafts waiting and those sent or dismissed."
      back={{ href: "/corrections", label: "← Corrections queue" }}
    />
  );
}
