//! The allocator of the first and second modules: the standard one (dlmalloc), which grows the
//! WebAssembly memory by as little as it needs (64 KiB at a time), with the memory grown ahead
//! by an eighth of its size once it passes 32 MiB. Each `memory.grow` costs the engine a new
//! `ArrayBuffer` (and the glue its views): reading 160,000 messages took ~2,400 of them, over
//! half of a first `toApiMessages` or `validateForApi` on them (10.6 s, then 1.4 s warm).
//! Below 32 MiB nothing changes (the memory rows of bench.mjs measure growth there); above,
//! at most an eighth of the memory is grown and not yet used. The counting module keeps the
//! plain allocator (its size budget; it reads no conversation into memory).

use std::alloc::{GlobalAlloc, Layout, System};

/// Past this size, the memory grows by at least [`STEP_DIVISOR`]th of itself at a time.
const AHEAD_FROM: usize = 32 << 20;
const STEP_DIVISOR: usize = 8;

pub struct GrowAhead;

fn memory_bytes() -> usize {
    core::arch::wasm32::memory_size(0) * 65536
}

/// After an allocation that grew the memory: when it is past [`AHEAD_FROM`], one more block
/// of an eighth of it, at once freed, so that dlmalloc's free top chunk (where it carves the
/// next allocations) holds that much (the block is never written, so its pages cost the process
/// nothing until they are used).
#[cold]
fn grow_ahead() {
    let size = memory_bytes();
    if size < AHEAD_FROM {
        return;
    }
    if let Ok(layout) = Layout::from_size_align(size / STEP_DIVISOR, 16) {
        // SAFETY: a non-zero layout; the block is freed with the layout it was taken with.
        unsafe {
            let p = System.alloc(layout);
            if !p.is_null() {
                System.dealloc(p, layout);
            }
        }
    }
}

// SAFETY: every call is System's; `grow_ahead` only allocates and frees through System.
unsafe impl GlobalAlloc for GrowAhead {
    unsafe fn alloc(&self, layout: Layout) -> *mut u8 {
        let before = memory_bytes();
        let p = System.alloc(layout);
        if memory_bytes() != before {
            grow_ahead();
        }
        p
    }

    unsafe fn alloc_zeroed(&self, layout: Layout) -> *mut u8 {
        let before = memory_bytes();
        let p = System.alloc_zeroed(layout);
        if memory_bytes() != before {
            grow_ahead();
        }
        p
    }

    unsafe fn dealloc(&self, ptr: *mut u8, layout: Layout) {
        System.dealloc(ptr, layout)
    }

    unsafe fn realloc(&self, ptr: *mut u8, layout: Layout, new_size: usize) -> *mut u8 {
        let before = memory_bytes();
        let p = System.realloc(ptr, layout, new_size);
        if memory_bytes() != before {
            grow_ahead();
        }
        p
    }
}

#[global_allocator]
static ALLOCATOR: GrowAhead = GrowAhead;
