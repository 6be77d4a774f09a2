//! A small, fast, non-cryptographic hasher for the maps of ids the core builds per call
//! (the standard SipHash is needlessly slow in WebAssembly, and the keys are not
//! attacker-chosen in a way that matters for one call's map).

use std::collections::{HashMap, HashSet};
use std::hash::{BuildHasherDefault, Hasher};

/// FxHash-style hasher (multiply-rotate over 8-byte words).
#[derive(Default, Clone, Copy)]
pub struct FastHasher(u64);

const SEED: u64 = 0x51_7c_c1_b7_27_22_0a_95;

impl FastHasher {
    #[inline]
    fn add(&mut self, word: u64) {
        self.0 = (self.0.rotate_left(5) ^ word).wrapping_mul(SEED);
    }
}

impl Hasher for FastHasher {
    fn write(&mut self, bytes: &[u8]) {
        let mut chunks = bytes.chunks_exact(8);
        for c in &mut chunks {
            let mut w = [0u8; 8];
            w.copy_from_slice(c);
            self.add(u64::from_le_bytes(w));
        }
        let rest = chunks.remainder();
        if !rest.is_empty() {
            let mut w = [0u8; 8];
            w[..rest.len()].copy_from_slice(rest);
            self.add(u64::from_le_bytes(w));
        }
    }

    fn write_u8(&mut self, i: u8) {
        self.add(u64::from(i));
    }

    fn write_usize(&mut self, i: usize) {
        self.add(i as u64);
    }

    fn finish(&self) -> u64 {
        self.0
    }
}

/// `HashMap` with [`FastHasher`].
pub type FastMap<K, V> = HashMap<K, V, BuildHasherDefault<FastHasher>>;
/// `HashSet` with [`FastHasher`].
pub type FastSet<K> = HashSet<K, BuildHasherDefault<FastHasher>>;

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn maps_work() {
        let mut m: FastMap<&str, u32> = FastMap::default();
        for (k, key) in ["toolu_01", "toolu_02", "a", "", "toolu_01x"]
            .iter()
            .enumerate()
        {
            m.insert(key, k as u32);
        }
        assert_eq!(m.get("toolu_01"), Some(&0));
        assert_eq!(m.get("toolu_01x"), Some(&4));
        assert_eq!(m.get(""), Some(&3));
        assert_eq!(m.len(), 5);
    }
}
