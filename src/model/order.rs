//! Stable sorting with one copy of the sort in the WebAssembly module.
//!
//! `slice::sort_by` is generic over the element type and the comparison, so every call site
//! instantiates the whole stable sort again (about 3–4 KB of `.wasm` each; docs/size.md). The
//! functions here sort a list of indices under a comparison behind `&dyn Fn`: the standard sort
//! is instantiated once, and each element type only adds a small permutation step. Results are
//! the same as `sort_by` (stable: equal elements keep their order).

use std::cmp::Ordering;

/// The indices `0..len` in the stable order `cmp` gives them: `cmp(a, b)` compares the items at
/// indices `a` and `b`; items that compare equal keep their index order.
pub fn stable_order(len: usize, cmp: &dyn Fn(usize, usize) -> Ordering) -> Vec<usize> {
    let mut order: Vec<usize> = (0..len).collect();
    order.sort_by(|&a, &b| cmp(a, b));
    order
}

/// Sorts `items` stably by `cmp`, like `items.sort_by(cmp)`, through [`stable_order`].
pub fn sort_by<T>(items: &mut Vec<T>, cmp: &dyn Fn(&T, &T) -> Ordering) {
    if items.len() < 2 {
        return;
    }
    let order = stable_order(items.len(), &|a, b| cmp(&items[a], &items[b]));
    let mut slots: Vec<Option<T>> = std::mem::take(items).into_iter().map(Some).collect();
    // `order` is a permutation of the indices: each slot is taken exactly once.
    items.extend(order.into_iter().filter_map(|i| slots[i].take()));
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn sorts_like_the_standard_stable_sort() {
        let base: Vec<(u32, u32)> = (0..200u32).map(|i| ((i * 7919) % 13, i)).collect();
        let mut ours = base.clone();
        sort_by(&mut ours, &|a, b| a.0.cmp(&b.0));
        let mut std_sorted = base;
        std_sorted.sort_by_key(|a| a.0);
        assert_eq!(ours, std_sorted);
    }

    #[test]
    fn keeps_the_order_of_equal_items_and_handles_short_lists() {
        let mut v = vec![(1, 'a'), (0, 'b'), (1, 'c'), (0, 'd')];
        sort_by(&mut v, &|a, b| a.0.cmp(&b.0));
        assert_eq!(v, vec![(0, 'b'), (0, 'd'), (1, 'a'), (1, 'c')]);
        let mut empty: Vec<u8> = Vec::new();
        sort_by(&mut empty, &|a, b| a.cmp(b));
        assert!(empty.is_empty());
        let mut one = vec![String::from("x")];
        sort_by(&mut one, &|a, b| a.cmp(b));
        assert_eq!(one, vec!["x"]);
    }

    #[test]
    fn stable_order_returns_a_permutation() {
        let keys = [3, 1, 2, 1];
        assert_eq!(
            stable_order(keys.len(), &|a, b| keys[a].cmp(&keys[b])),
            vec![1, 3, 2, 0]
        );
    }
}
