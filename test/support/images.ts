import sharp from 'sharp';
import type OpenAI from 'openai';
import type { Client } from 'pg';

/** Helpers of the image tests: decoding answered images, and the money an account has moved. */

export async function decodeImages(response: OpenAI.ImagesResponse): Promise<{ width: number; height: number; format: string }[]> {
  return Promise.all(
    (response.data ?? []).map(async (image) => {
      const meta = await sharp(Buffer.from(image.b64_json!, 'base64')).metadata();
      return { width: meta.width!, height: meta.height!, format: meta.format! };
    }),
  );
}

/** A real PNG of the given size and colour (an upload for edits). */
export const pngOf = (width: number, height: number, colour = '#3366cc') =>
  sharp({ create: { width, height, channels: 3, background: colour } })
    .png()
    .toBuffer();

export interface AccountLedger {
  balance: bigint;
  reserved: bigint;
  /** Every hold ever taken for the account's requests (none after a refusal before reserving). */
  holds: number;
  charges: bigint[];
  /** Image usage records: [status, images, cost]. */
  usage: [string, number, string][];
}

export async function accountLedger(db: Client, accountId: string): Promise<AccountLedger> {
  const account = await db.query<{ balance: string; reserved: string }>(
    'select balance_micro::text as balance, reserved_micro::text as reserved from accounts where id = $1',
    [accountId],
  );
  const holds = await db.query<{ n: number }>(`select count(*)::int as n from holds where account_id = $1 and purpose <> 'lease'`, [
    accountId,
  ]);
  const charges = await db.query<{ amount: string }>(
    `select amount_micro::text as amount from ledger_entries where account_id = $1 and kind = 'charge' order by created_at`,
    [accountId],
  );
  const usage = await db.query<{ status: string; images: number; cost: string }>(
    'select status, images, cost_micro::text as cost from usage_records where account_id = $1 order by created_at',
    [accountId],
  );
  return {
    balance: BigInt(account.rows[0]!.balance),
    reserved: BigInt(account.rows[0]!.reserved),
    holds: holds.rows[0]!.n,
    charges: charges.rows.map((r) => BigInt(r.amount)),
    usage: usage.rows.map((r) => [r.status, r.images, r.cost]),
  };
}
