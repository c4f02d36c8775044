/**
 * A multipart/form-data body as a vendor codec describes it (OpenAI's image edits and video
 * creations): text fields and files, in order. The transport encodes it without copying files.
 */
export type FormPart = { name: string; value: string } | { name: string; filename: string; contentType: string; data: Buffer };
