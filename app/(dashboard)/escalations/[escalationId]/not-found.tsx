import { MissingPage } from "@/components/dashboard/missing-page";

export default function EscalationNotFound() {
  return (
    <MissingPage
      what="This escalation"
      hint="The link may be mistyped. Everything that waits for a person is in the escalation queue."
      back={{ href: "/escalations", label: "← Escalation queue" }}
    />
  );
}
