import type { CancellationOutcome } from './cancellation.ts';
import { invalid } from './errors.ts';

export const JOB_STATUSES = [
  'new',
  'open',
  'accepted',
  'appointment_confirmed',
  'started',
  'finished',
  'completed',
  'invoice sent',
  'closed',
  'on hold',
  'brand_cancellation_pending',
  'cancelled',
] as const;
export type JobStatus = (typeof JOB_STATUSES)[number];

/** Statuses after which no brand command may change a job (CONTRACT §2). */
const TERMINAL_STATUSES: readonly JobStatus[] = ['cancelled', 'closed'];

/** Statuses that need no partner action: `active=true` leaves them out (SPEC §3). */
export const INACTIVE_STATUSES: readonly JobStatus[] = ['new', 'cancelled', 'closed', 'completed', 'invoice sent'];

export interface Customer {
  email: string | null;
  externalId: string | null;
  firstName: string | null;
  lastName: string | null;
  mobilePhone: string | null;
  phone: string | null;
  salutation: string | null;
}
export const CUSTOMER_KEYS = [
  'email',
  'externalId',
  'firstName',
  'lastName',
  'mobilePhone',
  'phone',
  'salutation',
] as const;

export interface CustomerBilling {
  firstName: string | null;
  lastName: string | null;
  company: string | null;
  street: string | null;
  houseNumber: string | null;
  postalCode: string | null;
  city: string | null;
  countryCode: string | null;
}
export const CUSTOMER_BILLING_KEYS = [
  'firstName',
  'lastName',
  'company',
  'street',
  'houseNumber',
  'postalCode',
  'city',
  'countryCode',
] as const;

export interface ShippingAddress {
  street: string | null;
  houseNumber: string | null;
  postalCode: string | null;
  city: string | null;
  countryCode: string | null;
}
export const SHIPPING_ADDRESS_KEYS = ['street', 'houseNumber', 'postalCode', 'city', 'countryCode'] as const;

export interface Product {
  sku: string | null;
  name: string | null;
  quantity: number | null;
}
export interface DocumentFile {
  name: string | null;
  url: string | null;
}
export interface OrderDocument {
  type: string | null;
  files: DocumentFile[];
}

export interface JobProps {
  apiId: string;
  brandAccountId: string;
  partnerId: string | null;
  /** Order number; partners look it up as `gidOrderNumber`. */
  name: string;
  status: JobStatus;
  invoicingEid: string | null;
  eid: string | null;
  extPartnerId: string | null;
  customer: Customer | null;
  customerBilling: CustomerBilling | null;
  shippingAddress: ShippingAddress | null;
  products: Product[];
  documents: OrderDocument[];
  orderType: string | null;
  projectId: string | null;
  projectName: string | null;
  /** `inputs.appointment_date` of SPEC §2. */
  appointmentStart: Date | null;
  appointmentEnd: Date | null;
  startTimestamp: Date | null;
  finishTimestamp: Date | null;
  createdAt: Date;
  updatedAt: Date;
}

/** An appointment ends no earlier than it starts (CONTRACT §5). */
export function checkAppointmentWindow(start: Date, end: Date | null): void {
  if (end && end.getTime() < start.getTime())
    throw invalid('appointmentEnd', 'appointmentEnd must not be before appointmentStart.');
}

export class Job {
  apiId!: string;
  brandAccountId!: string;
  partnerId!: string | null;
  name!: string;
  status!: JobStatus;
  invoicingEid!: string | null;
  eid!: string | null;
  extPartnerId!: string | null;
  customer!: Customer | null;
  customerBilling!: CustomerBilling | null;
  shippingAddress!: ShippingAddress | null;
  products!: Product[];
  documents!: OrderDocument[];
  orderType!: string | null;
  projectId!: string | null;
  projectName!: string | null;
  appointmentStart!: Date | null;
  appointmentEnd!: Date | null;
  startTimestamp!: Date | null;
  finishTimestamp!: Date | null;
  createdAt!: Date;
  updatedAt!: Date;

  constructor(props: JobProps) {
    Object.assign(this, props);
  }

  assignTo(partnerId: string, now: Date): void {
    this.partnerId = partnerId;
    this.touch(now);
  }

  setStatus(status: JobStatus, now: Date): void {
    this.status = status;
    this.touch(now);
  }

  setAppointment(start: Date, end: Date | null, now: Date): void {
    checkAppointmentWindow(start, end);
    this.appointmentStart = start;
    this.appointmentEnd = end;
    this.status = 'appointment_confirmed';
    this.touch(now);
  }

  setExtPartnerId(value: string, now: Date): void {
    this.extPartnerId = value;
    this.touch(now);
  }

  isTerminal(): boolean {
    return TERMINAL_STATUSES.includes(this.status);
  }

  /** Only the members given change; the others keep their values (a job without a customer gets one). */
  updateCustomer(changes: Partial<Customer>, now: Date): void {
    const current: Customer =
      this.customer ?? (Object.fromEntries(CUSTOMER_KEYS.map((k) => [k, null])) as unknown as Customer);
    this.customer = { ...current };
    for (const key of CUSTOMER_KEYS) if (changes[key] !== undefined) this.customer[key] = changes[key];
    this.touch(now);
  }

  setEid(value: string, now: Date): void {
    this.eid = value;
    this.touch(now);
  }

  setInvoicingEid(value: string, now: Date): void {
    this.invoicingEid = value;
    this.touch(now);
  }

  /**
   * A `cancelled` outcome cancels; a `pending` one waits for the brand in `brand_cancellation_pending` (CONTRACT §2).
   */
  cancel(outcome: CancellationOutcome, now: Date): void {
    this.status = outcome === 'cancelled' ? 'cancelled' : 'brand_cancellation_pending';
    this.touch(now);
  }

  private touch(now: Date): void {
    this.updatedAt = now;
  }
}
