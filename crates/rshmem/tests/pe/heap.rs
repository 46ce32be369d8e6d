//! Symmetric heap test program (tests/heap.rs): alignment of alloc_aligned, free and
//! deterministic reuse, zeroed allocations, growth from a small initial heap (64 MiB
//! allocated on a 2 MiB start, every byte written by a peer), exhaustion past the limit
//! (HeapExhausted on every PE, nothing crashes, the heap keeps working) and reuse of the
//! freed space. Expects `RSHMEM_SYMMETRIC_SIZE=2M RSHMEM_MAX_SYMMETRIC_SIZE=96M`.
//! Checks are named `align.*`, `realloc.*`, `reuse.*`, `growth.*`, `exhaustion.*`, and
//! `fill.BLOCK.written` / `fill.BLOCK.read_back` for each block a peer fills.
//! Run: `rshmemrun -n 2 -x RSHMEM_SYMMETRIC_SIZE=2M -x RSHMEM_MAX_SYMMETRIC_SIZE=96M target/release/examples/pe_heap`.

#[path = "../support/mod.rs"]
mod support;

use rshmem::{Ctx, Error, Result, Sym};
use std::process::ExitCode;
use support::{mix, Check};

const MIB: usize = 1 << 20;

fn word(pe: usize, tag: u64, i: usize) -> u64 {
    mix((pe as u64) << 56 ^ tag << 40 ^ i as u64)
}

/// The right neighbour fills all of `s` (in chunks of `chunk` words) with a pattern of
/// its own; every PE then checks every word it received, and reads back the right
/// neighbour's copy with get: checks `fill.BLOCK.written` and `fill.BLOCK.read_back`.
fn fill_from_peer(ctx: &Ctx, ck: &mut Check, s: &Sym<u64>, tag: u64, chunk: usize, block: &str) -> Result<()> {
    let (me, n) = (ctx.my_pe(), ctx.n_pes());
    let (right, left) = ((me + 1) % n, (me + n - 1) % n);
    let mut buf = vec![0u64; chunk];
    for start in (0..s.len()).step_by(chunk) {
        let len = chunk.min(s.len() - start);
        for (j, w) in buf[..len].iter_mut().enumerate() {
            *w = word(me, tag, start + j);
        }
        ctx.put(s, start, &buf[..len], right)?;
    }
    ctx.barrier_all()?;
    let got = s.to_vec()?;
    let bad = got.iter().enumerate().filter(|&(i, &v)| v != word(left, tag, i)).count();
    ck.eq(&format!("fill.{block}.written"), bad, 0, format_args!("wrong words of {} MiB written by PE {left}", s.size_bytes() / MIB));
    // The right neighbour's copy holds what this PE wrote.
    let mut bad = 0;
    for start in (0..s.len()).step_by(chunk) {
        let len = chunk.min(s.len() - start);
        ctx.get(&mut buf[..len], s, start, right)?;
        bad += buf[..len].iter().enumerate().filter(|&(j, &v)| v != word(me, tag, start + j)).count();
    }
    ck.eq(&format!("fill.{block}.read_back"), bad, 0, format_args!("wrong words read back by get from PE {right}"));
    ctx.barrier_all()
}

fn alignment(ctx: &Ctx, ck: &mut Check) -> Result<()> {
    let right = (ctx.my_pe() + 1) % ctx.n_pes();
    let mut held = Vec::new();
    for align in [1usize, 8, 16, 64, 4096, 65536, 1 << 21] {
        // An odd-sized allocation first, so that the next one has to be moved to align.
        held.push(ctx.alloc::<u8>(24)?);
        let s = ctx.alloc_aligned::<u8>(100, align)?;
        ck.eq("align.address", s.addr() % align, 0, format_args!("alloc_aligned({align}) address {:#x}", s.addr()));
        ck.eq("align.min16", s.addr() % 16, 0, format_args!("alloc_aligned({align}) keeps the minimum 16-byte alignment"));
        ctx.put(&s, 99, &[align as u8 ^ 0x5a], right)?;
        ctx.barrier_all()?;
        ck.eq("align.last_byte", s.read(99)?, align as u8 ^ 0x5a, format_args!("the last byte of alloc_aligned({align}) is usable"));
        held.push(s);
    }
    let wide = ctx.alloc::<u128>(3)?;
    ck.eq("align.u128", wide.addr() % std::mem::align_of::<u128>(), 0, "alloc::<u128> is aligned for u128");
    held.push(ctx.alloc::<u8>(0)?);
    for s in held {
        ctx.free(s)?;
    }
    ctx.free(wide)
}

fn free_and_reuse(ctx: &Ctx, ck: &mut Check) -> Result<()> {
    let a = ctx.alloc::<u64>(1000)?;
    let b = ctx.alloc::<u64>(1000)?;
    let c = ctx.alloc::<u64>(1000)?;
    let (a_addr, b_addr) = (a.addr(), b.addr());
    b.fill(0xdead_beef)?;
    ctx.barrier_all()?;
    ctx.free(b)?;
    // First fit: a smaller request takes the hole that b left, and is zeroed.
    let d = ctx.alloc::<u64>(500)?;
    ck.eq("reuse.hole", d.addr(), b_addr, "a smaller allocation reuses the freed hole");
    ck.eq(
        "reuse.zeroed",
        d.to_vec()?.iter().filter(|&&w| w != 0).count(),
        0,
        "non-zero words in reused memory (it must be handed out zeroed)",
    );
    ck.eq("reuse.allocation_size", ctx.allocation_size(d.addr()), Some(4000), "allocation_size of the reused block");
    ctx.barrier_all()?; // every PE has looked before the peer writes into `d`
    fill_from_peer(ctx, ck, &d, 1, 128, "reused_hole")?;
    // Freeing everything coalesces: one allocation of the three sizes fits at a's place.
    ctx.free(a)?;
    ctx.free(d)?;
    ctx.free(c)?;
    ck.eq("reuse.all_free", ctx.heap_usage().0, 0, "every byte is free again");
    let e = ctx.alloc::<u64>(3000)?;
    ck.eq("reuse.coalesced", e.addr(), a_addr, "the coalesced space is reused from the start");
    fill_from_peer(ctx, ck, &e, 2, 1000, "coalesced")?;
    ctx.free(e)
}

fn growth_and_exhaustion(ctx: &Ctx, ck: &mut Check) -> Result<()> {
    let me = ctx.my_pe();
    let (used0, reserved) = ctx.heap_usage();
    ck.eq("growth.reserved", reserved, 96 * MIB, "the heap may grow to RSHMEM_MAX_SYMMETRIC_SIZE (96M)");
    ck.eq("growth.empty_before", used0, 0, "nothing allocated before the growth test");

    // 64 MiB on a 2 MiB heap: the heap grows; a peer writes every byte of it.
    let big = ctx.alloc::<u64>(64 * MIB / 8)?;
    ck.eq("growth.in_use", ctx.heap_usage().0, 64 * MIB, "64 MiB in use after the growth");
    fill_from_peer(ctx, ck, &big, 3, MIB, "grown_64m")?;
    if let Some(p) = ctx.ptr(&big, (me + 1) % ctx.n_pes()) {
        ck.ok("growth.ptr", !p.is_null(), "ptr into the grown segment");
    }

    // 40 MiB more does not fit under 96 MiB: every PE gets HeapExhausted; nothing changes.
    let r = ctx.alloc::<u8>(40 * MIB);
    let pe = format!("PE {me}");
    ck.err(
        "exhaustion.past_limit",
        r,
        |e| matches!(e, Error::HeapExhausted { .. }),
        &["alloc:", "`size`", "41943040 bytes", "limit 100663296 bytes", &pe],
    );
    ck.eq("exhaustion.nothing_allocated", ctx.heap_usage().0, 64 * MIB, "a failed allocation allocates nothing");
    let r = ctx.alloc::<u8>(1 << 40);
    ck.err("exhaustion.one_tib", r, |e| matches!(e, Error::HeapExhausted { .. }), &["alloc:", &pe]);

    // The heap still works: a 16 MiB allocation (another growth step) and the 64 MiB one.
    let more = ctx.alloc::<u64>(16 * MIB / 8)?;
    fill_from_peer(ctx, ck, &more, 4, MIB, "after_failures_16m")?;
    let tail = big.to_vec()?;
    let left = (me + ctx.n_pes() - 1) % ctx.n_pes();
    ck.eq(
        "exhaustion.block_intact",
        tail.iter().enumerate().filter(|&(i, &v)| v != word(left, 3, i)).count(),
        0,
        "the 64 MiB block is intact after the failures",
    );

    // Free the 64 MiB block: a 60 MiB request reuses its place without growing.
    let big_addr = big.addr();
    ctx.free(big)?;
    let again = ctx.alloc::<u64>(60 * MIB / 8)?;
    ck.eq("reuse.freed_64m", again.addr(), big_addr, "60 MiB reuses the freed 64 MiB block");
    fill_from_peer(ctx, ck, &again, 5, MIB, "reused_60m")?;
    ctx.free(again)?;
    ctx.free(more)?;

    // Everything freed and coalesced: 90 of the 96 MiB fit in one allocation.
    let most = ctx.alloc::<u64>(90 * MIB / 8)?;
    fill_from_peer(ctx, ck, &most, 6, MIB, "limit_90m")?;
    ctx.free(most)?;
    ck.eq("growth.empty_at_end", ctx.heap_usage().0, 0, "the heap is empty at the end");
    Ok(())
}

/// realloc keeps this PE's data, zeroes new elements, and the new block is usable by peers.
fn realloc_keeps_data(ctx: &Ctx, ck: &mut Check) -> Result<()> {
    let (me, n) = (ctx.my_pe(), ctx.n_pes());
    let a = ctx.alloc_from(&(0..100u64).map(|i| i + 1000 * me as u64).collect::<Vec<_>>())?;
    let old = a.addr();
    let b = ctx.realloc(a, 5000)?;
    let v = b.to_vec()?;
    ck.ok("realloc.kept", (0..100).all(|i| v[i] == i as u64 + 1000 * me as u64), "realloc kept the first 100 elements");
    ck.eq("realloc.zeroed", v[100..].iter().filter(|&&w| w != 0).count(), 0, "non-zero words in the grown part");
    ck.ok("realloc.old_freed", ctx.allocation_size(old).is_none() || b.addr() == old, "the old block was freed");
    // Everyone has looked at its grown part before peers write into it.
    ctx.barrier_all()?;
    ctx.put(&b, 4999, &[7 + me as u64], (me + 1) % n)?;
    ctx.barrier_all()?;
    ck.eq("realloc.peer_put", b.read(4999)?, 7 + ((me + n - 1) % n) as u64, "a peer's put into the grown part");
    let c = ctx.realloc(b, 10)?;
    ck.ok(
        "realloc.shrink_kept",
        c.to_vec()? == (0..10).map(|i| i + 1000 * me as u64).collect::<Vec<_>>(),
        "shrinking realloc kept the first 10",
    );
    ctx.free(c)
}

fn main() -> ExitCode {
    support::run_program("pe_heap", 1, |ctx, ck| {
        alignment(ctx, ck)
            .and_then(|_| realloc_keeps_data(ctx, ck))
            .and_then(|_| free_and_reuse(ctx, ck))
            .and_then(|_| growth_and_exhaustion(ctx, ck))
    })
}
