/** The words of notifications: what a webhook subscribes to, and where a delivery stands. */

/** What a notification is about; a webhook subscribes to some of these. */
export const NotificationTopic = {
  /** A run waits at its pivot for a reviewer. */
  pivot_waiting: "pivot_waiting",
  /** An item entered the escalation queue. */
  escalation_raised: "escalation_raised",
  /** An item reached the reminder point of its SLA. */
  sla_reminder: "sla_reminder",
  /** An item passed its SLA (it went to the backup team), or expired and was rejected. */
  sla_breached: "sla_breached",
  /** A correction draft waits for the support desk. */
  correction_waiting: "correction_waiting",
  /** Someone pulled a revoke trigger. */
  revoke_pulled: "revoke_pulled",
} as const;
export type NotificationTopic = (typeof NotificationTopic)[keyof typeof NotificationTopic];
/** Every topic, in the order screens list them. */
export const NOTIFICATION_TOPICS: readonly NotificationTopic[] = Object.values(NotificationTopic);

/** What each topic means to a person (labels in the webhook form and the delivery log). */
export const TOPIC_LABELS = {
  pivot_waiting: "Pivot waiting for a reviewer",
  escalation_raised: "Escalation raised",
  sla_reminder: "SLA reminder",
  sla_breached: "SLA breached or expired",
  correction_waiting: "Correction waiting for support",
  revoke_pulled: "Revoke pulled",
} as const satisfies Record<NotificationTopic, string>;

/** Lifecycle of one delivery. */
export const DeliveryStatus = {
  /** Waiting for its next attempt (`nextAttemptAt`). */
  PENDING: "PENDING",
  /** A notifier holds it (until `leaseUntil`). */
  SENDING: "SENDING",
  /** The receiver took it (2xx, or the SMTP server accepted it). */
  DELIVERED: "DELIVERED",
  /** Every attempt failed; an admin may replay it. */
  FAILED: "FAILED",
} as const;
export type DeliveryStatus = (typeof DeliveryStatus)[keyof typeof DeliveryStatus];

/** Where a delivery goes. */
export const DeliveryChannel = {
  /** An HTTP POST of the signed JSON body to a webhook's URL. */
  webhook: "webhook",
  /** An email through SMTP. */
  email: "email",
  /** A Slack message with Approve and Reject buttons (waiting pivots), through Slack's Web API. */
  slack: "slack",
} as const;
export type DeliveryChannel = (typeof DeliveryChannel)[keyof typeof DeliveryChannel];

/** Lifecycle of an outbox row. */
export const NotificationEventStatus = {
  /** Written with its audit event; its deliveries are not written yet. */
  PENDING: "PENDING",
  /** Its deliveries are written. */
  FANNED_OUT: "FANNED_OUT",
} as const;
