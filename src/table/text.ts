/**
 * Unicode rules for what people type: names, descriptions, emails. Characters that render as
 * nothing or move other text (C0/C1 controls `\p{Cc}`, format characters `\p{Cf}` such as
 * zero-width spaces and bidi overrides, the line and paragraph separators U+2028/U+2029) and
 * ill-formed strings (lone surrogates) are refused: two values that look identical must be
 * identical.
 */

/** Invisible or text-moving characters; `\n` and `\t` are allowed in multi-line text only. */
const INVISIBLE = /[\p{Cc}\p{Cf}\u2028\u2029]/u;
const INVISIBLE_EXCEPT_NEWLINE_TAB = /(?![\n\t])[\p{Cc}\p{Cf}\u2028\u2029]/u;

/** Why `text` is refused, or undefined when it is acceptable. */
export function unicodeProblem(text: string, { multiline = false } = {}): string | undefined {
  // In a `u` regex a lone surrogate is a code point of its own category (Cs); pairs are not.
  if (/\p{Cs}/u.test(text)) return 'must be well-formed Unicode (no lone surrogates)';
  const invisible = multiline ? INVISIBLE_EXCEPT_NEWLINE_TAB : INVISIBLE;
  const found = invisible.exec(text);
  if (found) {
    const code = (found[0].codePointAt(0) ?? 0).toString(16).toUpperCase().padStart(4, '0');
    return `must not contain control, format or separator characters (found U+${code})`;
  }
  return undefined;
}

/**
 * An email in the one form the uniqueness guard compares: NFKC first (fullwidth `ａ` becomes
 * `a`, compatibility forms fold), then lower-cased. Invisible characters are refused rather
 * than stripped, so nothing that looks like another address can become a separate account.
 */
export const canonicalEmail = (email: string): string => email.normalize('NFKC').trim().toLowerCase();
