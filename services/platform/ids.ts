import { newSecret } from './secrets.js';

/** Public uids: a readable prefix and 20 random characters; opaque to clients. */
export const newUid = (prefix: 'msg' | 'cmp' | 'ctc' | 'acc' | 'evt') => `${prefix}_${newSecret(20)}`;
