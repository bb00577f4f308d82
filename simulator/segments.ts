// SMS segmentation as carriers bill it (notes §4.6): GSM-7 160/153, UCS-2 70/67, extension characters
// cost two septets, and a single non-GSM character switches the whole message to UCS-2.

const GSM_BASIC =
  '@£$¥èéùìòÇ\nØø\rÅåΔ_ΦΓΛΩΠΨΣΘΞÆæßÉ !"#¤%&\'()*+,-./0123456789:;<=>?' + '¡ABCDEFGHIJKLMNOPQRSTUVWXYZÄÖÑÜ§¿abcdefghijklmnopqrstuvwxyzäöñüà';
const GSM_EXTENSION = '\f^{}\\[~]|€';

const basic = new Set(Array.from(GSM_BASIC));
const extension = new Set(Array.from(GSM_EXTENSION));

export type SmsEncoding = 'GSM-7' | 'UCS-2';

export interface SegmentInfo {
  encoding: SmsEncoding;
  /** Septets for GSM-7, UTF-16 code units for UCS-2. */
  units: number;
  segments: number;
}

export function segmentInfo(body: string): SegmentInfo {
  const chars = Array.from(body);
  const gsm = chars.every((c) => basic.has(c) || extension.has(c));
  // Per-character cost; code points are kept whole so an escape pair or surrogate pair never splits.
  const costs = chars.map((c) => (gsm ? (extension.has(c) ? 2 : 1) : c.length));
  const units = costs.reduce((a, b) => a + b, 0);
  const [single, part] = gsm ? [160, 153] : [70, 67];
  if (units <= single) return { encoding: gsm ? 'GSM-7' : 'UCS-2', units, segments: 1 };
  let segments = 1;
  let used = 0;
  for (const cost of costs) {
    if (used + cost > part) {
      segments += 1;
      used = 0;
    }
    used += cost;
  }
  return { encoding: gsm ? 'GSM-7' : 'UCS-2', units, segments };
}
