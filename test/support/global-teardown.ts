export default async function globalTeardown(): Promise<void> {
  await globalThis.__embeddedPostgres?.stop();
  await globalThis.__s3rver?.stop();
}
