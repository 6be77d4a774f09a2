//! The provider's prompt-prefix cache, as Anthropic documents it: a request reads the longest
//! prefix an earlier request wrote at one of its cache breakpoints (if that entry is still
//! alive), writes everything from there up to its own last breakpoint, and every entry it
//! reads or writes lives for its time-to-live from this request on (5 minutes by default,
//! 1 hour as an option; a read refreshes it at no cost).
//!
//! A request is a list of segments, each with a content identity (`key`) and a size in
//! tokens. Two requests share a prefix exactly when their first segments have the same keys:
//! the cache is keyed by the chained hash of the keys, so changing one segment changes every
//! prefix that contains it — the provider's rule that editing anything invalidates the cache
//! from that point on.
//!
//! Not modelled (documented in docs/simulate.md): the 20-block look-back limit of the
//! automatic prefix check, the minimum cacheable length (1,024 tokens on most models), and
//! eviction before the time-to-live.

use crate::model::hash::FastMap;

/// The provider's default time-to-live of a cache entry, in milliseconds (5 minutes).
pub const TTL_5M_MS: f64 = 5.0 * 60_000.0;
/// The optional longer time-to-live, in milliseconds (1 hour).
pub const TTL_1H_MS: f64 = 60.0 * 60_000.0;

/// How long written entries live: the two classes the API bills differently.
#[derive(
    Clone, Copy, Debug, PartialEq, Eq, Hash, Default, serde::Serialize, serde::Deserialize,
)]
pub enum Ttl {
    /// `cache_control: {type: "ephemeral"}` (5 minutes), written at 1.25× the input price.
    #[default]
    #[serde(rename = "5m")]
    FiveMinutes,
    /// `cache_control: {type: "ephemeral", ttl: "1h"}`, written at 2× the input price.
    #[serde(rename = "1h")]
    OneHour,
}

impl Ttl {
    /// The time-to-live in milliseconds.
    pub fn ms(self) -> f64 {
        match self {
            Ttl::FiveMinutes => TTL_5M_MS,
            Ttl::OneHour => TTL_1H_MS,
        }
    }
}

/// One part of a request: its content identity and size.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct Segment {
    /// Content identity: equal keys mean byte-identical content.
    pub key: u64,
    /// Size in tokens.
    pub tokens: u64,
}

/// What one request did with the cache (the three input classes of `usage`).
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub struct CacheUse {
    /// Tokens read from the cache (`cache_read_input_tokens`).
    pub read: u64,
    /// Tokens written to the cache (`cache_creation_input_tokens`).
    pub write: u64,
    /// Tokens neither read nor written (`input_tokens`): after the last breakpoint.
    pub input: u64,
}

#[derive(Clone, Copy, Debug)]
struct Entry {
    expires_ms: f64,
}

/// The cache of one conversation: entries keyed by the chained hash of a prefix.
#[derive(Clone, Debug, Default)]
pub struct PrefixCache {
    entries: FastMap<u64, Entry>,
    requests: u64,
}

/// Chained hash of a prefix: the hash of the previous prefix combined with the next key.
pub fn chain(prev: u64, key: u64) -> u64 {
    // splitmix64-style mixing of the pair: deterministic on every target.
    let mut z = prev ^ key.wrapping_mul(0x9E37_79B9_7F4A_7C15).rotate_left(17);
    z = (z ^ (z >> 30)).wrapping_mul(0xBF58_476D_1CE4_E5B9);
    z = (z ^ (z >> 27)).wrapping_mul(0x94D0_49BB_1331_11EB);
    z ^ (z >> 31)
}

/// Stable key of a labelled piece of content (`label`, `index`, `version`).
pub fn key_of(label: &str, index: u64, version: u64) -> u64 {
    let mut h = 0xCBF2_9CE4_8422_2325u64;
    for b in label.bytes() {
        h = (h ^ u64::from(b)).wrapping_mul(0x0100_0000_01B3);
    }
    chain(chain(h, index), version)
}

impl PrefixCache {
    /// An empty (cold) cache.
    pub fn new() -> PrefixCache {
        PrefixCache::default()
    }

    /// Marks the prefix `segments` as cached at `now_ms` (a prefix another session wrote,
    /// such as a shared system prompt), alive for `ttl`.
    pub fn seed(&mut self, segments: &[Segment], now_ms: f64, ttl: Ttl) {
        let h = segments.iter().fold(0u64, |h, s| chain(h, s.key));
        self.entries.insert(
            h,
            Entry {
                expires_ms: now_ms + ttl.ms(),
            },
        );
    }

    /// Whether any entry is alive at `now_ms`.
    pub fn is_warm(&self, now_ms: f64) -> bool {
        self.entries.values().any(|e| e.expires_ms >= now_ms)
    }

    /// Tokens a request made of `segments` would read at `now_ms`, without sending it.
    pub fn peek_read(&self, segments: &[Segment], now_ms: f64) -> u64 {
        let mut h = 0u64;
        let mut cum = 0u64;
        let mut read = 0u64;
        for s in segments {
            h = chain(h, s.key);
            cum += s.tokens;
            if self.entries.get(&h).is_some_and(|e| e.expires_ms >= now_ms) {
                read = cum;
            }
        }
        read
    }

    /// Sends a request made of `segments` at `now_ms` with cache breakpoints after the
    /// segments counted in `breakpoints` (prefix lengths, ascending; those beyond the
    /// request are ignored). Reads the longest live prefix, writes up to the last
    /// breakpoint, and refreshes or creates the entries at every breakpoint for `ttl`.
    pub fn request(
        &mut self,
        segments: &[Segment],
        breakpoints: &[usize],
        now_ms: f64,
        ttl: Ttl,
    ) -> CacheUse {
        self.requests += 1;
        if self.requests % 64 == 0 {
            self.entries.retain(|_, e| e.expires_ms >= now_ms);
        }
        let mut hashes = Vec::with_capacity(segments.len());
        let mut cum = Vec::with_capacity(segments.len() + 1);
        cum.push(0u64);
        let mut h = 0u64;
        for s in segments {
            h = chain(h, s.key);
            hashes.push(h);
            cum.push(cum.last().copied().unwrap_or(0) + s.tokens);
        }
        let total = cum[segments.len()];
        // Longest live prefix.
        let mut read_len = 0usize;
        for j in (1..=segments.len()).rev() {
            if let Some(e) = self.entries.get(&hashes[j - 1]) {
                if e.expires_ms >= now_ms {
                    read_len = j;
                    break;
                }
            }
        }
        let expires_ms = now_ms + ttl.ms();
        if read_len > 0 {
            if let Some(e) = self.entries.get_mut(&hashes[read_len - 1]) {
                e.expires_ms = e.expires_ms.max(expires_ms);
            }
        }
        let mut last_bp = 0usize;
        for &bp in breakpoints {
            if bp == 0 || bp > segments.len() {
                continue;
            }
            last_bp = last_bp.max(bp);
            let e = self
                .entries
                .entry(hashes[bp - 1])
                .or_insert(Entry { expires_ms });
            e.expires_ms = e.expires_ms.max(expires_ms);
        }
        let read = cum[read_len];
        let cached_to = cum[last_bp].max(read);
        CacheUse {
            read,
            write: cached_to - read,
            input: total - cached_to,
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn segs(keys: &[(u64, u64)]) -> Vec<Segment> {
        keys.iter()
            .map(|&(key, tokens)| Segment { key, tokens })
            .collect()
    }

    #[test]
    fn a_cold_cache_writes_everything_up_to_the_last_breakpoint() {
        let mut c = PrefixCache::new();
        let r = segs(&[(1, 100), (2, 50), (3, 7)]);
        let u = c.request(&r, &[1, 2], 0.0, Ttl::FiveMinutes);
        assert_eq!(
            u,
            CacheUse {
                read: 0,
                write: 150,
                input: 7
            }
        );
    }

    #[test]
    fn a_growing_conversation_reads_the_previous_request_and_writes_the_new_part() {
        let mut c = PrefixCache::new();
        let a = segs(&[(1, 100), (2, 50)]);
        c.request(&a, &[2], 0.0, Ttl::FiveMinutes);
        let b = segs(&[(1, 100), (2, 50), (3, 30)]);
        let u = c.request(&b, &[3], 60_000.0, Ttl::FiveMinutes);
        assert_eq!(
            u,
            CacheUse {
                read: 150,
                write: 30,
                input: 0
            }
        );
    }

    #[test]
    fn entries_expire_after_their_ttl_and_reads_refresh_them() {
        let mut c = PrefixCache::new();
        let a = segs(&[(1, 100)]);
        c.request(&a, &[1], 0.0, Ttl::FiveMinutes);
        // 4 minutes later: alive, and the read refreshes it.
        assert_eq!(c.request(&a, &[1], 240_000.0, Ttl::FiveMinutes).read, 100);
        // 8 minutes after the first write, 4 after the refresh: still alive.
        assert_eq!(c.request(&a, &[1], 480_000.0, Ttl::FiveMinutes).read, 100);
        // More than 5 minutes idle: gone, written again.
        let u = c.request(&a, &[1], 480_000.0 + TTL_5M_MS + 1.0, Ttl::FiveMinutes);
        assert_eq!(
            u,
            CacheUse {
                read: 0,
                write: 100,
                input: 0
            }
        );
    }

    #[test]
    fn a_one_hour_entry_survives_a_gap_that_a_five_minute_one_does_not() {
        let gap = 20.0 * 60_000.0;
        for (ttl, read) in [(Ttl::FiveMinutes, 0), (Ttl::OneHour, 100)] {
            let mut c = PrefixCache::new();
            let a = segs(&[(1, 100)]);
            c.request(&a, &[1], 0.0, ttl);
            assert_eq!(c.request(&a, &[1], gap, ttl).read, read, "{ttl:?}");
        }
    }

    #[test]
    fn changing_a_segment_rewrites_everything_after_the_longest_earlier_breakpoint() {
        let mut c = PrefixCache::new();
        let a = segs(&[(1, 100), (2, 50), (3, 30)]);
        c.request(&a, &[1, 3], 0.0, Ttl::FiveMinutes);
        // Segment 2 cleared (new key, smaller): only the first breakpoint still matches.
        let b = segs(&[(1, 100), (22, 5), (3, 30)]);
        let u = c.request(&b, &[1, 3], 1_000.0, Ttl::FiveMinutes);
        assert_eq!(
            u,
            CacheUse {
                read: 100,
                write: 35,
                input: 0
            }
        );
    }

    #[test]
    fn a_seeded_prefix_is_read_by_the_first_request() {
        let mut c = PrefixCache::new();
        let r = segs(&[(1, 100), (2, 50)]);
        c.seed(&r[..1], 0.0, Ttl::FiveMinutes);
        assert!(c.is_warm(1.0));
        assert_eq!(c.request(&r, &[2], 1.0, Ttl::FiveMinutes).read, 100);
        assert!(!c.is_warm(1.0 + TTL_5M_MS + 1.0));
    }

    #[test]
    fn peeking_reads_without_refreshing() {
        let mut c = PrefixCache::new();
        let a = segs(&[(1, 100), (2, 10)]);
        c.request(&a, &[2], 0.0, Ttl::FiveMinutes);
        assert_eq!(c.peek_read(&a, 1_000.0), 110);
        // A peek does not refresh: the entry still expires 5 minutes after the write.
        assert_eq!(c.peek_read(&a, TTL_5M_MS + 1.0), 0);
    }

    #[test]
    fn keys_differ_by_label_index_and_version() {
        let k = key_of("item", 3, 0);
        assert_eq!(k, key_of("item", 3, 0));
        assert_ne!(k, key_of("item", 3, 1));
        assert_ne!(k, key_of("item", 4, 0));
        assert_ne!(k, key_of("other", 3, 0));
    }
}
