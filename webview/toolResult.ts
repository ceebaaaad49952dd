// A tools/call result (or its failure) as the blocks the console shows, without the DOM: text,
// images (as data: URIs, which the console's CSP allows for img only), embedded resources, resource
// links, structured content as indented JSON. Shared by the webview and its unit tests.

export type ResultBlock =
  | { kind: 'text'; text: string }
  | { kind: 'image'; src: string; mimeType: string; bytes: number }
  | { kind: 'resource'; uri: string; mimeType?: string; text?: string; image?: string; bytes?: number }
  | { kind: 'link'; uri: string; name?: string; title?: string; description?: string; mimeType?: string }
  /** Content the console does not render (audio, an unknown type, a malformed block): said in words. */
  | { kind: 'note'; text: string };

export interface ResultView {
  /** ok: the tool did it; tool-error: it answered isError; failed: the call itself failed (refused, timeout…). */
  status: 'ok' | 'tool-error' | 'failed';
  headline: string;
  blocks: ResultBlock[];
  /** structuredContent, indented. */
  structured?: string;
}

/** Raster and SVG images only: in an <img> none of them can run script. */
const IMAGE_TYPES = /^image\/(png|jpeg|gif|webp|bmp|svg\+xml|avif)$/;
const BASE64 = /^[A-Za-z0-9+/]*={0,2}$/;

const isObj = (v: unknown): v is Record<string, unknown> => typeof v === 'object' && v !== null && !Array.isArray(v);
const str = (v: unknown): string | undefined => (typeof v === 'string' ? v : undefined);

export function fmtMs(ms: number): string {
  return ms < 10 ? `${ms.toFixed(1)} ms` : ms < 10_000 ? `${Math.round(ms)} ms` : `${(ms / 1000).toFixed(1)} s`;
}

/** Bytes a base64 text decodes to. */
function decodedBytes(b64: string): number {
  const pad = b64.endsWith('==') ? 2 : b64.endsWith('=') ? 1 : 0;
  return Math.floor((b64.length * 3) / 4) - pad;
}

/** A data: URI for an image, or why there is none. */
function imageSrc(mimeType: unknown, data: unknown): { src: string; bytes: number } | { why: string } {
  const type = str(mimeType) ?? '';
  if (!IMAGE_TYPES.test(type)) return { why: `an image of type '${type || 'unknown'}' (not shown)` };
  const b64 = (str(data) ?? '').replace(/\s+/g, '');
  if (!b64 || b64.length % 4 !== 0 || !BASE64.test(b64)) return { why: `a ${type} image whose data is not base64` };
  return { src: `data:${type};base64,${b64}`, bytes: decodedBytes(b64) };
}

export function sizeText(bytes: number): string {
  return bytes < 1024
    ? `${bytes} B`
    : bytes < 1024 * 1024
      ? `${(bytes / 1024).toFixed(1)} KB`
      : `${(bytes / 1048576).toFixed(1)} MB`;
}

function blockOf(c: unknown): ResultBlock {
  if (!isObj(c)) return { kind: 'note', text: 'a content block that is not an object' };
  switch (c.type) {
    case 'text':
      return { kind: 'text', text: str(c.text) ?? '' };
    case 'image': {
      const img = imageSrc(c.mimeType, c.data);
      return 'src' in img
        ? { kind: 'image', src: img.src, mimeType: String(c.mimeType), bytes: img.bytes }
        : { kind: 'note', text: img.why };
    }
    case 'audio': {
      const b64 = str(c.data) ?? '';
      return {
        kind: 'note',
        text: `audio (${str(c.mimeType) ?? 'unknown type'}, ${sizeText(decodedBytes(b64))}), not played here`,
      };
    }
    case 'resource': {
      const r = isObj(c.resource) ? c.resource : {};
      const uri = str(r.uri) ?? '(no uri)';
      const mimeType = str(r.mimeType);
      if (typeof r.text === 'string') return { kind: 'resource', uri, mimeType, text: r.text };
      if (typeof r.blob === 'string') {
        const img = imageSrc(mimeType, r.blob);
        if ('src' in img) return { kind: 'resource', uri, mimeType, image: img.src, bytes: img.bytes };
        return { kind: 'resource', uri, mimeType, bytes: decodedBytes(r.blob.replace(/\s+/g, '')) };
      }
      return { kind: 'resource', uri, mimeType };
    }
    case 'resource_link':
      return {
        kind: 'link',
        uri: str(c.uri) ?? '(no uri)',
        name: str(c.name),
        title: str(c.title),
        description: str(c.description),
        mimeType: str(c.mimeType),
      };
    default:
      return {
        kind: 'note',
        text: `content of type '${String(c.type)}', not rendered: ${JSON.stringify(c).slice(0, 200)}`,
      };
  }
}

export function viewOfResult(result: unknown, ms: number): ResultView {
  const r = isObj(result) ? result : {};
  const content = Array.isArray(r.content) ? r.content : [];
  const blocks = content.map(blockOf);
  const isError = r.isError === true;
  const structured = 'structuredContent' in r ? JSON.stringify(r.structuredContent, null, 2) : undefined;
  const parts = `${content.length} content block${content.length === 1 ? '' : 's'}${structured ? ' + structured content' : ''}`;
  return {
    status: isError ? 'tool-error' : 'ok',
    headline: isError
      ? `The tool answered with an error (isError) in ${fmtMs(ms)} · ${parts}`
      : `Answered in ${fmtMs(ms)} · ${parts}`,
    blocks,
    ...(structured !== undefined ? { structured } : {}),
  };
}

/** The call did not reach a result: refused by the broker (scope, profile, quarantine), timed out, failed. */
export function viewOfFailure(message: string, ms: number, code?: number): ResultView {
  const what = code === -32003 ? 'Refused by the broker' : 'The call failed';
  return {
    status: 'failed',
    headline: `${what}${code !== undefined ? ` (error ${code})` : ''} after ${fmtMs(ms)}`,
    blocks: [{ kind: 'text', text: message }],
  };
}
