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
    word & HIGHS == 0 && !has_less(word, 0x20) && !has_byte(word, b'"') && !has_byte(word, b'\\')
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
            0xDB, b'}', b']',
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
        }
    }
}
