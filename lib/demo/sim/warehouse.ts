/** A warehouse API with native idempotency; the key doubles as the shipment's external id. */
import { ProviderRejection } from "./errors";
import { SimSystem, type IdempotencyOpts, type SimOptions } from "./system";

/** Only a scheduled shipment can still be cancelled; once shipped, the parcel is out of reach. */
export type ShipmentStatus = "scheduled" | "shipped" | "cancelled";

/** A (re)shipment. */
export interface Shipment {
  /** `shp_…`, the external ref a saga row records. */
  id: string;
  /** The order being reshipped. */
  orderId: string;
  /** Delivery address, when it differs from the order's. */
  address?: string;
  /** Where it stands. */
  status: ShipmentStatus;
  /** The idempotency key, so reconcile can find the shipment by key. */
  externalId?: string;
  /** Drives search lag. */
  createdAt: Date;
}

/** Request body of `reship`. */
export interface ReshipParams {
  /** The order to reship. */
  orderId: string;
  /** Delivery address override. */
  address?: string;
}

/** The warehouse service. Rejections (out of stock) are usually injected as faults. */
export class WarehouseSim extends SimSystem {
  private readonly shipments = new Map<string, Shipment>();

  constructor(opts: SimOptions = {}) {
    super("warehouse", opts);
  }

  /** Schedules a reshipment (COMPENSATABLE while scheduled: cancel it). */
  reship(params: ReshipParams, opts: IdempotencyOpts = {}): Promise<Shipment> {
    const key = opts.idempotencyKey;
    return this.mutate("reship", params, { key }, () =>
      this.idempotent(key, "reship", params, () => {
        const shipment: Shipment = {
          id: this.nextId("shp_"),
          orderId: params.orderId,
          address: params.address,
          status: "scheduled",
          externalId: key,
          createdAt: this.clock.now(),
        };
        this.shipments.set(shipment.id, shipment);
        return { value: shipment, ref: shipment.id };
      }),
    );
  }

  /** Cancels a scheduled shipment; one that shipped or was cancelled is refused (409). */
  cancelShipment(shipmentId: string): Promise<Shipment> {
    return this.change("cancelShipment", shipmentId, (s) => {
      s.status = "cancelled";
    });
  }

  /** The warehouse's own progress: after this, cancelling is no longer possible. */
  markShipped(shipmentId: string): Promise<Shipment> {
    return this.change("ship", shipmentId, (s) => {
      s.status = "shipped";
    });
  }

  /** Lookup by external id (the saga key), lagging behind writes. */
  findByExternalId(key: string): Promise<Shipment | undefined> {
    return this.read(() =>
      [...this.shipments.values()].find((s) => s.externalId === key && this.searchable(s.createdAt)),
    );
  }

  /** Direct retrieval is never lagged. */
  get(shipmentId: string): Promise<Shipment | undefined> {
    return this.read(() => this.shipments.get(shipmentId));
  }

  private change(op: string, shipmentId: string, apply: (s: Shipment) => void): Promise<Shipment> {
    const key = this.shipments.get(shipmentId)?.externalId;
    return this.mutate(op, { shipmentId }, { key, ref: shipmentId }, () => {
      const shipment = this.shipments.get(shipmentId);
      if (!shipment) throw this.notFound("shipment", shipmentId);
      if (shipment.status !== "scheduled") throw new ProviderRejection(409, `already_${shipment.status}`);
      apply(shipment);
      return { value: shipment, ref: shipmentId };
    });
  }
}
