export type InvoiceType = 'invoice' | 'credit_note';
export type InvoiceStatus = 'sent' | 'received' | 'paid' | 'written_off';
export type CancellationStatus = 'created' | 'send_pending' | 'sent' | 'paid' | 'written_off';

export const INVOICE_TYPES: readonly InvoiceType[] = ['invoice', 'credit_note'];
export const INVOICE_STATUSES: readonly InvoiceStatus[] = ['sent', 'received', 'paid', 'written_off'];
export const CANCELLATION_STATUSES: readonly CancellationStatus[] = [
  'created',
  'send_pending',
  'sent',
  'paid',
  'written_off',
];

export interface InvoiceItem {
  description: string;
  quantity: number;
  unitPrice: number;
  total: number;
}

export interface InvoiceProps {
  id: string;
  /** The job's `apiId`. */
  orderId: string;
  number: string;
  type: InvoiceType;
  status: InvoiceStatus;
  cancellationStatus: CancellationStatus | null;
  items: InvoiceItem[];
  createdAt: Date;
  updatedAt: Date;
}

export class Invoice {
  id!: string;
  orderId!: string;
  number!: string;
  type!: InvoiceType;
  status!: InvoiceStatus;
  cancellationStatus!: CancellationStatus | null;
  items!: InvoiceItem[];
  createdAt!: Date;
  updatedAt!: Date;

  constructor(props: InvoiceProps) {
    Object.assign(this, props);
  }
}
