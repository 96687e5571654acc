// The project the explore bench asks about (bench/explore.mjs): a small TypeScript shop whose
// answer lives in a file the question does not name.
import { join } from 'node:path';

const bytes = (text) => Buffer.byteLength(text);
const SETTLEMENT = `// Settlement: what happens to an order's money after checkout: refunds, and orders never paid.
import { OrderStore, type Order } from '../orders/order';
import type { PaymentGateway } from './payment-gateway';
import { releaseStock } from '../catalog/inventory';
import { sendTemplate } from '../notifications/templates';
import { logger } from '../logger';

/** An order still unpaid this long after it was placed is cancelled. */
export const UNPAID_ORDER_TTL_MS = 48 * 60 * 60 * 1000;

export interface RefundRequest {
  orderId: string;
  /** Omitted: whatever the order has left. */
  amountCents?: number;
  reason: 'customer_request' | 'damaged' | 'lost_in_transit' | 'duplicate';
}

/**
 * Refunds a paid order, whole or in part, through the gateway that captured it. A full refund
 * marks the order refunded and puts its items back in stock; a partial one records the amount.
 */
export async function refundOrder(
  orders: OrderStore,
  gateway: PaymentGateway,
  request: RefundRequest,
  now = new Date(),
): Promise<Order> {
  const order = orders.get(request.orderId);
  if (!order) throw new Error(\`order \${request.orderId} not found\`);
  if (!['paid', 'shipped', 'delivered'].includes(order.status)) {
    throw new Error(\`order \${order.id} is \${order.status}; only paid orders can be refunded\`);
  }
  const amount = request.amountCents ?? order.totalCents - order.refundedCents;
  if (amount <= 0 || order.refundedCents + amount > order.totalCents) {
    throw new Error(\`a refund of \${amount} cents exceeds what order \${order.id} has left\`);
  }
  await gateway.refund(order.paymentId ?? '', amount, request.reason);
  const refundedCents = order.refundedCents + amount;
  const full = refundedCents === order.totalCents;
  if (full) releaseStock(order.lines);
  sendTemplate('refund-issued', order.customerId, { orderId: order.id, amountCents: amount });
  logger.info('refund', { orderId: order.id, amount, reason: request.reason });
  const status = full ? 'refunded' : order.status;
  return orders.update(order.id, { refundedCents, status, updatedAt: now });
}

/**
 * Cancels every order still awaiting payment UNPAID_ORDER_TTL_MS after it was placed: its
 * reserved stock is released and the customer is told. The nightly job runs it.
 */
export function expireUnpaidOrders(orders: OrderStore, now = new Date()): Order[] {
  const cutoff = now.getTime() - UNPAID_ORDER_TTL_MS;
  const expired = orders.list(
    (order) => order.status === 'pending_payment' && order.placedAt.getTime() < cutoff,
  );
  for (const order of expired) {
    releaseStock(order.lines);
    orders.update(order.id, { status: 'cancelled', cancelReason: 'unpaid', updatedAt: now });
    sendTemplate('order-cancelled-unpaid', order.customerId, { orderId: order.id });
  }
  logger.info('expired unpaid orders', { count: expired.length });
  return expired;
}
`;

const ORDER = `// Orders: the record, its statuses and which may follow which, and the in-memory store.
import type { CartLine } from './cart';
import { newId } from '../ids';

export type OrderStatus =
  | 'pending_payment'
  | 'paid'
  | 'shipped'
  | 'delivered'
  | 'cancelled'
  | 'refunded';

export interface Order {
  id: string;
  customerId: string;
  lines: CartLine[];
  totalCents: number;
  refundedCents: number;
  paymentId?: string;
  status: OrderStatus;
  cancelReason?: 'unpaid' | 'customer' | 'fraud';
  placedAt: Date;
  updatedAt: Date;
}

/** A new order waits for payment; billing/settlement.ts moves it on. */
export const TRANSITIONS: Record<OrderStatus, OrderStatus[]> = {
  pending_payment: ['paid', 'cancelled'],
  paid: ['shipped', 'refunded', 'cancelled'],
  shipped: ['delivered', 'refunded'],
  delivered: ['refunded'],
  cancelled: [],
  refunded: [],
};

export class OrderStore {
  private readonly rows = new Map<string, Order>();

  place(customerId: string, lines: CartLine[], now = new Date()): Order {
    const totalCents = lines.reduce((sum, line) => sum + line.unitCents * line.quantity, 0);
    const order: Order = {
      id: newId('ord'),
      customerId,
      lines,
      totalCents,
      refundedCents: 0,
      status: 'pending_payment',
      placedAt: now,
      updatedAt: now,
    };
    this.rows.set(order.id, order);
    return order;
  }

  get(id: string): Order | undefined {
    return this.rows.get(id);
  }

  update(id: string, patch: Partial<Order>): Order {
    const order = this.rows.get(id);
    if (!order) throw new Error(\`order \${id} not found\`);
    if (patch.status && patch.status !== order.status && !TRANSITIONS[order.status].includes(patch.status)) {
      throw new Error(\`order \${id} cannot go from \${order.status} to \${patch.status}\`);
    }
    const next = { ...order, ...patch };
    this.rows.set(id, next);
    return next;
  }

  list(filter: (order: Order) => boolean = () => true): Order[] {
    return [...this.rows.values()].filter(filter);
  }
}
`;

/** Path, record name, fields: one record module each (see {@link recordModule}). */
const MODULES = `catalog/product Product sku:string title:string priceCents:number active:boolean
catalog/category Category slug:string title:string parentId:string position:number
catalog/inventory StockLevel sku:string onHand:number reserved:number warehouse:string
catalog/price-rule PriceRule sku:string percentOff:number startsAt:Date endsAt:Date
catalog/review Review sku:string customerId:string stars:number body:string
customers/customer Customer email:string name:string locale:string marketing:boolean
customers/address Address customerId:string line1:string city:string country:string
customers/loyalty LoyaltyAccount customerId:string points:number tier:string since:Date
customers/session Session customerId:string token:string expiresAt:Date ip:string
orders/cart CartLine sku:string quantity:number unitCents:number addedAt:Date
orders/coupon Coupon code:string percentOff:number maxUses:number used:number
orders/wishlist WishlistItem customerId:string sku:string note:string addedAt:Date
orders/gift-card GiftCard code:string balanceCents:number currency:string active:boolean
billing/invoice Invoice orderId:string number:string totalCents:number issuedAt:Date
billing/payment-gateway GatewayCharge orderId:string amountCents:number provider:string capturedAt:Date
billing/tax-rate TaxRate country:string region:string percent:number validFrom:Date
billing/currency ExchangeRate from:string to:string rate:number fetchedAt:Date
billing/payout Payout accountId:string amountCents:number currency:string paidAt:Date
shipping/shipment Shipment orderId:string carrier:string trackingCode:string shippedAt:Date
shipping/carrier Carrier code:string name:string maxWeightGrams:number active:boolean
shipping/parcel Parcel shipmentId:string weightGrams:number lengthCm:number label:string
shipping/return-label ReturnLabel orderId:string carrier:string code:string issuedAt:Date
notifications/templates Template key:string subject:string body:string locale:string
notifications/outbox OutboxMessage key:string customerId:string attempts:number sentAt:Date
notifications/webhook Webhook url:string secret:string events:string active:boolean
http/route Route method:string path:string handler:string auth:boolean
http/rate-limit RateBucket key:string tokens:number refilledAt:Date limit:number
http/api-key ApiKey owner:string hash:string scopes:string createdBy:string
jobs/job JobRun name:string startedAt:Date finishedAt:Date ok:boolean
jobs/schedule Schedule job:string cron:string timezone:string enabled:boolean
reports/sales-day SalesDay day:string ordersCount:number grossCents:number netCents:number
reports/export ExportFile kind:string path:string rows:number createdAt:Date`.split('\n');

/** What some modules add: where the grep finds refund|unpaid besides the answer's two files. */
const EXTRAS = {
  'catalog/inventory': `const levels = new StockLevelStore();

/** Gives back what an order had reserved. */
export function releaseStock(lines: Array<{ sku: string; quantity: number }>): void {
  for (const line of lines) {
    const level = levels.list((row) => row.sku === line.sku)[0];
    if (level) levels.update(level.id, { reserved: Math.max(0, level.reserved - line.quantity) });
  }
}`,
  'billing/payment-gateway': `export interface PaymentGateway {
  capture(orderId: string, amountCents: number): Promise<string>;
  refund(paymentId: string, amountCents: number, reason: string): Promise<void>;
}`,
  'notifications/templates': `export const TEMPLATE_KEYS = ['order-placed', 'refund-issued', 'order-cancelled-unpaid'];
const queued: Array<{ key: string; customerId: string; data: object }> = [];
export function sendTemplate(key: string, customerId: string, data: object): void {
  queued.push({ key, customerId, data });
}`,
  'http/route': `export const ROUTES = ['POST /orders', 'POST /orders/:id/refund', 'GET /orders/:id'];`,
  'jobs/job': `export const NIGHTLY = ['expireUnpaidOrders', 'rebuildSearchIndex', 'sendDigest'];`,
};

/** A realistic record module: the type, its checks, an in-memory store and a summary. */
function recordModule(line) {
  const [path, name, ...spec] = line.split(' ');
  const extra = EXTRAS[path];
  const fields = spec.map((field) => field.split(':'));
  const lower = name[0].toLowerCase() + name.slice(1);
  const checks = fields.map(([field, type]) =>
    type === 'string'
      ? `  if (!input.${field}?.trim()) problems.push('${lower}.${field} is required');`
      : type === 'number'
        ? `  if (!Number.isFinite(input.${field}) || input.${field} < 0) problems.push('${lower}.${field} must be a number ≥ 0');`
        : type === 'Date'
          ? `  if (Number.isNaN(input.${field}.getTime())) problems.push('${lower}.${field} is not a date');`
          : `  if (typeof input.${field} !== 'boolean') problems.push('${lower}.${field} must be true or false');`,
  );
  const [key] = fields[0];
  return `// ${name} records (${path.split('/')[0]}): the type, its checks, and the in-memory store.
import { newId } from '${'../'.repeat(path.split('/').length - 1)}ids';

export interface ${name} {
  id: string;
${fields.map(([field, type]) => `  ${field}: ${type};`).join('\n')}
  createdAt: Date;
  updatedAt: Date;
}

export type New${name} = Omit<${name}, 'id' | 'createdAt' | 'updatedAt'>;

/** Every problem with a new ${lower}, so a form can show them all at once. */
export function check${name}(input: New${name}): string[] {
  const problems: string[] = [];
${checks.join('\n')}
  return problems;
}

export class ${name}Store {
  private readonly rows = new Map<string, ${name}>();

  create(input: New${name}, now = new Date()): ${name} {
    const problems = check${name}(input);
    if (problems.length > 0) throw new Error(problems.join('; '));
    const row: ${name} = { ...input, id: newId('${lower.slice(0, 3)}'), createdAt: now, updatedAt: now };
    this.rows.set(row.id, row);
    return row;
  }

  get(id: string): ${name} | undefined {
    return this.rows.get(id);
  }

  update(id: string, patch: Partial<New${name}>, now = new Date()): ${name} {
    const row = this.rows.get(id);
    if (!row) throw new Error(\`${lower} \${id} not found\`);
    const next = { ...row, ...patch, updatedAt: now };
    this.rows.set(id, next);
    return next;
  }

  remove(id: string): boolean {
    return this.rows.delete(id);
  }

  list(filter: (row: ${name}) => boolean = () => true): ${name}[] {
    return [...this.rows.values()].filter(filter);
  }

  /** Rows by their ${key}, for lookups and reports. */
  by${key[0].toUpperCase()}${key.slice(1)}(): Map<${fields[0][1]}, ${name}[]> {
    const groups = new Map<${fields[0][1]}, ${name}[]>();
    for (const row of this.rows.values()) groups.set(row.${key}, [...(groups.get(row.${key}) ?? []), row]);
    return groups;
  }
}
${extra ? `\n${extra}\n` : ''}`;
}

const lineOf = (text, needle) => text.split('\n').findIndex((line) => line.includes(needle)) + 1;
/** first-last of the block that starts at the line holding `needle` (up to its closing `}`). */
function blockOf(text, needle) {
  const first = lineOf(text, needle);
  const lines = text.split('\n');
  return `${first}-${lines.findIndex((line, index) => index >= first && line === '}') + 1}`;
}

/** Writes the shop into the world's project; the two files both explorers read, and their report. */
export function makeShop(world) {
  const sources = [
    ['src/billing/settlement.ts', SETTLEMENT],
    ['src/orders/order.ts', ORDER],
    [
      'src/ids.ts',
      'let counter = 0;\nexport const newId = (prefix: string) => `${prefix}_${(counter += 1).toString(36)}`;\n',
    ],
    [
      'src/logger.ts',
      'export const logger = { info: (message: string, data?: object) => console.error(message, data) };\n',
    ],
    ...MODULES.map((line) => [`src/${line.split(' ')[0]}.ts`, recordModule(line)]),
  ];
  for (const [path, text] of sources) world.writeProjectFile(path, text);
  const total = sources.reduce((sum, [, text]) => sum + bytes(text), 0);
  const s = (needle) => `src/billing/settlement.ts:${lineOf(SETTLEMENT, needle)}`;
  const sb = (needle) => `src/billing/settlement.ts:${blockOf(SETTLEMENT, needle)}`;
  const report = [
    `Refunds are handled by \`refundOrder\` (${sb('export async function refundOrder')}). Only a paid, shipped or delivered order can be refunded (${s("['paid', 'shipped', 'delivered']")}), whole or in part, through the payment gateway that captured it (${s('await gateway.refund')}); a full refund puts the items back in stock and sets the status to \`refunded\` (${s('if (full) releaseStock')}), and the customer gets the \`refund-issued\` email (${s("sendTemplate('refund-issued'")}).`,
    `An unpaid order stays \`pending_payment\` (src/orders/order.ts:${lineOf(ORDER, "status: 'pending_payment'")}). \`expireUnpaidOrders\` (${sb('export function expireUnpaidOrders')}) cancels it once it is older than 48 hours (\`UNPAID_ORDER_TTL_MS\`, ${s('export const UNPAID_ORDER_TTL_MS')}) with the reason \`unpaid\`, releases its reserved stock and emails the customer; the status table allows only \`paid\` or \`cancelled\` after \`pending_payment\` (src/orders/order.ts:${lineOf(ORDER, 'pending_payment: [')}).`,
  ].join('\n\n');
  const files = ['src/billing/settlement.ts', 'src/orders/order.ts'].map((rel) => ({
    rel,
    abs: join(world.project, rel),
  }));
  return {
    count: sources.length,
    bytes: total,
    files,
    report,
    claudeGrep: { pattern: 'refund|unpaid', '-i': true, output_mode: 'content', '-n': true },
    workerGrep: '/refund|unpaid/i',
  };
}
