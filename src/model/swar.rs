//! Byte tests on eight bytes at once (a `u64` read little-endian), for the passes over JSON
//! text and strings that are mostly plain ASCII: a word none of whose bytes matters is
//! skipped in a few operations instead of eight comparisons.

/// `0x01` in every byte.
const ONES: u64 = 0x0101_0101_0101_0101;
/// `0x80` in every byte.
const HIGHS: u64 = 0x8080_8080_8080_8080;

/// Whether some byte of `word` is less than `n` (`n` at most 128).
#[inline]
fn has_less(word: u64, n: u8) -> bool {
    word.wrapping_sub(ONES * u64::from(n)) & !word & HIGHS != 0
}

/// Whether some byte of `word` equals `b`.
#[inline]
pub fn has_byte(word: u64, b: u8) -> bool {
    has_less(word ^ (ONES * u64::from(b)), 1)
}

/// Whether every byte of `word` is ASCII and none is a control character, `"` or `\`: the
/// bytes JSON writes as they are, one UTF-16 unit each.
#[inline]
pub fn plain_ascii(word: u64) -> bool {
    word & HIGHS == 0 && json_plain(word)
}

/// Whether no byte of `word` needs an escape inside a JSON string: none is a control
/// character, `"` or `\` (bytes of non-ASCII characters are written as they are).
#[inline]
pub fn json_plain(word: u64) -> bool {
    !has_less(word, 0x20) && !has_byte(word, b'"') && !has_byte(word, b'\\')
}

/// The UTF-16 length of the characters that start in the eight UTF-8 bytes of `word`: one
/// unit per byte that is not a continuation byte (`10xxxxxx`), one more per lead byte of a
/// four-byte character (0xF0 and above, a surrogate pair).
#[inline]
pub fn utf16_units(word: u64) -> u32 {
    if word & HIGHS == 0 {
        return 8;
    }
    // Bit 7 of each byte, after the shifts: bits 7 and 6 of that byte (no carries across
    // bytes into bit 7), then bits 7 to 4.
    let continuation = word & !(word << 1) & HIGHS;
    let four = word & (word << 1) & (word << 2) & (word << 3) & HIGHS;
    8 - continuation.count_ones() + four.count_ones()
}

/// [`utf16_units`] over all of `text`, eight bytes at a time.
#[cfg_attr(cc_speed, optimize(speed))]
pub fn utf16_len(text: &[u8]) -> usize {
    let words = text.chunks_exact(8);
    let tail = words.remainder();
    let mut n = 0;
    for w in words {
        n += utf16_units(u64::from_le_bytes([
            w[0], w[1], w[2], w[3], w[4], w[5], w[6], w[7],
        ])) as usize;
    }
    n + tail
        .iter()
        .map(|&b| usize::from(b & 0xC0 != 0x80) + usize::from(b >= 0xF0))
        .sum::<usize>()
}

/// How many bytes of `word` are zero (exact per byte: no carries across bytes).
#[inline]
fn zero_bytes(word: u64) -> u32 {
    let low7 = ONES * 0x7F;
    (!(((word & low7) + low7) | word | low7)).count_ones()
}

/// How many bytes of `word` equal `b`.
#[inline]
fn count_byte(word: u64, b: u8) -> u32 {
    zero_bytes(word ^ (ONES * u64::from(b)))
}

/// The UTF-16 length of the eight bytes of `word` inside a JSON string as serde_json writes
/// it, when the only control characters among them are `\n`, `\t` and `\r` (each written
/// as two characters, as are `"` and `\\`); `None` when another control character needs
/// the byte-by-byte count (`\u00XX`, or `\b`, `\f`).
#[inline]
pub fn json_escaped_units(word: u64) -> Option<u32> {
    let controls = zero_bytes(word & (ONES * 0xE0));
    let (n, t, r) = (
        count_byte(word, b'\n'),
        count_byte(word, b'\t'),
        count_byte(word, b'\r'),
    );
    if controls != n + t + r {
        return None;
    }
    Some(utf16_units(word) + controls + count_byte(word, b'"') + count_byte(word, b'\\'))
}

/// How many bytes of `word` are `{` or `[` (the two differ only in bit `0x20`).
#[inline]
pub fn opening_brackets(word: u64) -> u32 {
    let t = (word & !(ONES * 0x20)) ^ (ONES * u64::from(b'['));
    let low7 = ONES * 0x7F;
    // The high bit of each byte of `t` that is zero (exact per byte, no carries across).
    (!(((t & low7) + low7) | t | low7)).count_ones()
}

/// How many bytes of `text` are `{` or `[`, counting eight at a time.
pub fn count_opening_brackets(text: &[u8]) -> usize {
    let words = text.chunks_exact(8);
    let tail = words.remainder();
    let mut n = 0;
    for w in words {
        n += opening_brackets(u64::from_le_bytes([
            w[0], w[1], w[2], w[3], w[4], w[5], w[6], w[7],
        ])) as usize;
    }
    n + tail.iter().filter(|&&c| c == b'{' || c == b'[').count()
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn word_tests_agree_with_byte_tests() {
        let mut seed = 0x9e37_79b9_7f4a_7c15_u64;
        let interesting = [
            0u8, 1, 0x1F, 0x20, b'"', b'\\', b'a', 0x7F, 0x80, 0xC3, 0xF0, 0xFF, b'{', b'[', 0xFB,
            0xDB, b'}', b']', 0xBF, 0xE2, 0xEF, 0xF4, 0xF7, 0xC0, b'\n', b'\t', b'\r', 0x08, 0x0C,
        ];
        for round in 0..20_000 {
            seed ^= seed << 13;
            seed ^= seed >> 7;
            seed ^= seed << 17;
            let mut bytes = seed.to_le_bytes();
            if round % 2 == 0 {
                for (k, b) in bytes.iter_mut().enumerate() {
                    *b = interesting[((seed >> (k * 4)) as usize) % interesting.len()];
                }
            }
            let word = u64::from_le_bytes(bytes);
            for b in [b'"', b'\\', b'{', 0u8, 0xFF] {
                assert_eq!(has_byte(word, b), bytes.contains(&b), "{bytes:?} {b}");
            }
            let brackets = bytes.iter().filter(|&&c| c == b'{' || c == b'[').count();
            assert_eq!(opening_brackets(word) as usize, brackets, "{bytes:?}");
            let plain = bytes
                .iter()
                .all(|&b| (0x20..0x80).contains(&b) && b != b'"' && b != b'\\');
            assert_eq!(plain_ascii(word), plain, "{bytes:?}");
            let units: u32 = bytes
                .iter()
                .map(|&b| u32::from(b & 0xC0 != 0x80) + u32::from(b >= 0xF0))
                .sum();
            assert_eq!(utf16_units(word), units, "{bytes:?}");
            let simple = bytes
                .iter()
                .all(|&b| b >= 0x20 || matches!(b, b'\n' | b'\t' | b'\r'));
            let escaped: u32 = bytes
                .iter()
                .map(|&b| match b {
                    b'"' | b'\\' | b'\n' | b'\t' | b'\r' => 2,
                    _ => u32::from(b & 0xC0 != 0x80) + u32::from(b >= 0xF0),
                })
                .sum();
            assert_eq!(
                json_escaped_units(word),
                simple.then_some(escaped),
                "{bytes:?}"
            );
        }
    }
}

#[cfg(test)]
mod utf16_tests {
    #[test]
    fn utf16_len_is_the_length_of_the_encoded_string() {
        let mut cases = vec![String::new(), "plain".into(), "a".repeat(17)];
        for special in [
            "é",
            "😀",
            "中",
            "\u{10FFFF}",
            "\u{7F}",
            "\u{80}",
            "\u{FFFF}",
        ] {
            for at in 0..9 {
                cases.push(format!(
                    "{}{special}{}",
                    "a".repeat(at),
                    "b".repeat(17 - at)
                ));
                cases.push(special.repeat(at + 1));
            }
        }
        for s in &cases {
            assert_eq!(
                super::utf16_len(s.as_bytes()),
                s.encode_utf16().count(),
                "{s:?}"
            );
        }
    }
}
