//! Bad-input table (tests/errors.rs): every case must fail with its own `Error` variant
//! and a message naming the call, the argument and the PE; afterwards the runtime must
//! still work. Each case is check `KIND.CASE` (`past_an_allocation.put_at_index_len`)
//! whose detail is the error's message; `unharmed.*` check that nothing was written and
//! the heap still works. Needs at least 2 PEs; run with
//! `RSHMEM_MAX_SYMMETRIC_SIZE=64M rshmemrun -n 4 target/release/examples/pe_errors`.

#[path = "../support/mod.rs"]
mod support;

use rshmem::{Cmp, Ctx, Error, Result, Sym, Team, TeamConfig};
use std::process::ExitCode;
use std::time::Duration;
use support::Check;

/// Check `name`: `r` must be an error accepted by `variant` whose message holds every
/// needle.
fn case<T: std::fmt::Debug>(ck: &mut Check, name: &str, r: Result<T>, variant: impl Fn(&Error) -> bool, needles: &[&dyn ToString]) {
    let needles: Vec<String> = needles.iter().map(|n| n.to_string()).collect();
    let refs: Vec<&str> = needles.iter().map(String::as_str).collect();
    ck.err(name, r, variant, &refs);
}

fn pe(p: usize) -> String {
    format!("PE {p}")
}

/// What every group of cases works on: two neighbouring allocations (`b` right after
/// `a`, to catch writes that spill out of it), 4-byte words, and a stack address.
struct Targets {
    me: usize,
    n: usize,
    right: usize,
    a: Sym<u64>,
    b: Sym<u64>,
    words: Sym<u32>,
    stack_addr: usize,
}

/// A PE number out of range.
fn pe_out_of_range(ctx: &Ctx, ck: &mut Check, x: &Targets) -> Result<()> {
    let Targets { n, right, .. } = *x;
    case(ck, "pe_out_of_range.put", ctx.put(&x.a, 0, &[1], n), |e| matches!(e, Error::PeOutOfRange { .. }), &[&"put:", &"`pe`", &pe(n)]);
    case(
        ck,
        "pe_out_of_range.get",
        ctx.get(&mut [0u64; 2], &x.a, 0, n + 3),
        |e| matches!(e, Error::PeOutOfRange { .. }),
        &[&"get:", &"`pe`", &pe(n + 3)],
    );
    case(
        ck,
        "pe_out_of_range.p",
        ctx.p(&x.a, 0, 1u64, usize::MAX),
        |e| matches!(e, Error::PeOutOfRange { .. }),
        &[&"p:", &"`pe`", &"is out of range"],
    );
    case(ck, "pe_out_of_range.g", ctx.g(&x.a, 0, n), |e| matches!(e, Error::PeOutOfRange { .. }), &[&"g:", &"`pe`", &pe(n)]);
    case(
        ck,
        "pe_out_of_range.iput",
        ctx.iput(&x.a, 0, &[1u64, 2], 2, 1, 2, n),
        |e| matches!(e, Error::PeOutOfRange { .. }),
        &[&"iput:", &"`pe`", &pe(n)],
    );
    case(
        ck,
        "pe_out_of_range.putmem_nbi",
        ctx.putmem_nbi(x.a.addr(), &[1], n),
        |e| matches!(e, Error::PeOutOfRange { .. }),
        &[&"putmem_nbi:", &"`pe`", &pe(n)],
    );
    case(
        ck,
        "pe_out_of_range.pe_quiet",
        ctx.pe_quiet(&[right, n]),
        |e| matches!(e, Error::PeOutOfRange { .. }),
        &[&"pe_quiet:", &"`pe`", &pe(n)],
    );

    Ok(())
}

/// Addresses outside the symmetric heap.
fn off_the_heap(ctx: &Ctx, ck: &mut Check, x: &Targets) -> Result<()> {
    let Targets { me, right, stack_addr, .. } = *x;
    case(
        ck,
        "off_the_heap.putmem_to_a_stack_address",
        ctx.putmem(stack_addr, &[1, 2, 3], right),
        |e| matches!(e, Error::NotSymmetric { .. }),
        &[&"putmem:", &"`dest`", &pe(right)],
    );
    case(
        ck,
        "off_the_heap.getmem_from_a_stack_address",
        ctx.getmem(&mut [0; 8], stack_addr, right),
        |e| matches!(e, Error::NotSymmetric { .. }),
        &[&"getmem:", &"`source`", &pe(right)],
    );
    case(
        ck,
        "off_the_heap.p_addr_to_a_stack_address",
        ctx.p_addr(stack_addr, 7u64, right),
        |e| matches!(e, Error::NotSymmetric { .. }),
        &[&"p:", &"`dest`", &pe(right)],
    );
    case(
        ck,
        "off_the_heap.wait_until_addr_on_a_stack_address",
        ctx.wait_until_addr(stack_addr, Cmp::Eq, 0u64, Some(Duration::from_millis(10))),
        |e| matches!(e, Error::NotSymmetric { .. }),
        &[&"wait_until:", &"`ivars`", &pe(me)],
    );
    case(
        ck,
        "off_the_heap.address_0",
        ctx.getmem(&mut [0; 8], 0, right),
        |e| matches!(e, Error::NotSymmetric { .. }),
        &[&"getmem:", &"`source`", &pe(right)],
    );

    Ok(())
}

/// Ranges past the end of an allocation, and freed memory.
fn past_an_allocation(ctx: &Ctx, ck: &mut Check, x: &Targets) -> Result<()> {
    let Targets { me, right, .. } = *x;
    case(
        ck,
        "past_an_allocation.put_of_2_at_the_last_index",
        ctx.put(&x.a, 7, &[1, 2], right),
        |e| matches!(e, Error::OutOfBounds { .. }),
        &[&"put:", &"`index`", &"past the end", &pe(right)],
    );
    case(
        ck,
        "past_an_allocation.put_at_index_len",
        ctx.put(&x.a, 8, &[1], right),
        |e| matches!(e, Error::OutOfBounds { .. }),
        &[&"put:", &"`index`", &"past the end", &pe(right)],
    );
    case(
        ck,
        "past_an_allocation.p_at_index_len",
        ctx.p(&x.a, 8, 1u64, right),
        |e| matches!(e, Error::OutOfBounds { .. }),
        &[&"p:", &"`index`", &pe(right)],
    );
    case(
        ck,
        "past_an_allocation.g_at_index_len_5",
        ctx.g(&x.a, 13, right),
        |e| matches!(e, Error::OutOfBounds { .. }),
        &[&"g:", &"`index`", &pe(right)],
    );
    case(
        ck,
        "past_an_allocation.get_of_9_from_an_8_element_array",
        ctx.get(&mut [0u64; 9], &x.a, 0, right),
        |e| matches!(e, Error::OutOfBounds { .. }),
        &[&"get:", &"past the end", &pe(right)],
    );
    case(
        ck,
        "past_an_allocation.get_nbi_at_index_len",
        ctx.get_nbi(&mut [0u64; 1], &x.a, 8, right),
        |e| matches!(e, Error::OutOfBounds { .. }),
        &[&"get_nbi:", &"`index`", &pe(right)],
    );
    case(
        ck,
        "past_an_allocation.getmem_1_byte_too_many",
        ctx.getmem(&mut [0; 65], x.a.addr(), right),
        |e| matches!(e, Error::OutOfBounds { .. }),
        &[&"getmem:", &"`source`", &"1 bytes past the end", &pe(right)],
    );
    case(
        ck,
        "past_an_allocation.iput_whose_stride_spans_past_the_end",
        ctx.iput(&x.a, 0, &[1u64, 2, 3], 4, 1, 3, right),
        |e| matches!(e, Error::OutOfBounds { .. }),
        &[&"iput:", &"`dest`", &pe(right)],
    );
    case(
        ck,
        "past_an_allocation.iget_whose_stride_spans_past_the_end",
        ctx.iget(&mut [0u64; 3], &x.a, 1, 1, 4, 3, right),
        |e| matches!(e, Error::OutOfBounds { .. }),
        &[&"iget:", &"`source`", &pe(right)],
    );
    case(
        ck,
        "past_an_allocation.wait_until_at_index_len",
        ctx.wait_until_timeout(&x.a, 8, Cmp::Eq, 0u64, Duration::from_millis(10)),
        |e| matches!(e, Error::OutOfBounds { .. }),
        &[&"wait_until:", &"`index`", &pe(me)],
    );
    let gone = ctx.alloc::<u64>(4)?;
    let gone_addr = gone.addr();
    ctx.free(gone)?;
    case(
        ck,
        "freed_memory.putmem_into_a_freed_allocation",
        ctx.putmem(gone_addr, &[1; 8], right),
        |e| matches!(e, Error::OutOfBounds { .. }),
        &[&"putmem:", &"`dest`", &"not inside a live symmetric allocation", &pe(right)],
    );
    // A typed handle skips the heap's range check only while no allocation has been freed
    // since it was made: one whose allocation was freed by address (as `shmem_free` may)
    // is refused, and so is a view of it.
    let stale = ctx.alloc::<u64>(4)?;
    let stale_view = stale.view::<u64>(8, 2)?;
    ctx.free_bytes("free", stale.addr())?;
    case(
        ck,
        "freed_memory.put_through_a_handle_freed_by_address",
        ctx.put(&stale, 0, &[1u64], right),
        |e| matches!(e, Error::OutOfBounds { .. }),
        &[&"put:", &"`dest`", &"not inside a live symmetric allocation", &pe(right)],
    );
    case(
        ck,
        "freed_memory.get_nbi_through_a_view_of_a_freed_handle",
        ctx.get_nbi(&mut [0u64; 1], &stale_view, 1, right),
        |e| matches!(e, Error::OutOfBounds { .. }),
        &[&"get_nbi:", &"`source`", &"not inside a live symmetric allocation", &pe(right)],
    );
    // Atomics on a handle take the same shortcut, with the same limit.
    case(
        ck,
        "freed_memory.atomic_fetch_add_through_a_handle_freed_by_address",
        ctx.atomic_fetch_add(&stale, 0, 1u64, right),
        |e| matches!(e, Error::OutOfBounds { .. }),
        &[&"atomic_fetch_add:", &"`dest`", &"not inside a live symmetric allocation", &pe(right)],
    );
    case(
        ck,
        "freed_memory.atomic_inc_through_a_view_of_a_freed_handle",
        ctx.atomic_inc(&stale_view, 1, right),
        |e| matches!(e, Error::OutOfBounds { .. }),
        &[&"atomic_inc:", &"`dest`", &"not inside a live symmetric allocation", &pe(right)],
    );

    Ok(())
}

/// Words at addresses not aligned to their size.
fn misaligned(ctx: &Ctx, ck: &mut Check, x: &Targets) -> Result<()> {
    let Targets { me, right, .. } = *x;
    case(
        ck,
        "misaligned.p_addr_of_a_u64_at_4",
        ctx.p_addr(x.a.addr() + 4, 1u64, right),
        |e| matches!(e, Error::Misaligned { .. }),
        &[&"p:", &"`dest`", &"aligned to 8 bytes", &pe(right)],
    );
    case(
        ck,
        "misaligned.g_addr_of_a_u32_at_2",
        ctx.g_addr::<u32>(x.words.addr() + 2, right),
        |e| matches!(e, Error::Misaligned { .. }),
        &[&"g:", &"`source`", &"aligned to 4 bytes", &pe(right)],
    );
    case(
        ck,
        "misaligned.wait_until_addr_of_a_u64_at_1",
        ctx.wait_until_addr(x.a.addr() + 1, Cmp::Eq, 0u64, Some(Duration::from_millis(10))),
        |e| matches!(e, Error::Misaligned { .. }),
        &[&"wait_until:", &"`ivars`", &pe(me)],
    );
    case(
        ck,
        "misaligned.test_addr_of_an_i16_at_1",
        ctx.test_addr(x.words.addr() + 1, Cmp::Eq, 0i16),
        |e| matches!(e, Error::Misaligned { .. }),
        &[&"test:", &"`ivars`", &pe(me)],
    );

    Ok(())
}

/// Strides that are zero, overflow, or span past the source.
fn bad_strides(ctx: &Ctx, ck: &mut Check, x: &Targets) -> Result<()> {
    let Targets { me, n, right, .. } = *x;
    case(
        ck,
        "bad_stride.iput_with_dst_stride_0",
        ctx.iput(&x.a, 0, &[1u64, 2], 0, 1, 2, right),
        |e| matches!(e, Error::InvalidArgument { .. }),
        &[&"iput:", &"`stride`", &pe(me)],
    );
    case(
        ck,
        "bad_stride.iget_with_src_stride_0",
        ctx.iget(&mut [0u64; 2], &x.a, 0, 1, 0, 2, right),
        |e| matches!(e, Error::InvalidArgument { .. }),
        &[&"iget:", &"`stride`", &pe(me)],
    );
    case(
        ck,
        "bad_stride.iput_whose_strides_overflow",
        ctx.iput(&x.a, 0, &[1u64, 2], usize::MAX / 2, 1, 3, right),
        |e| matches!(e, Error::InvalidArgument { .. }),
        &[&"iput:", &"`nelems`", &pe(me)],
    );
    case(
        ck,
        "bad_stride.iput_source_shorter_than_its_stride_spans",
        ctx.iput(&x.a, 0, &[1u64, 2, 3], 1, 2, 3, right),
        |e| matches!(e, Error::InvalidArgument { .. }),
        &[&"iput:", &"`source`", &pe(me)],
    );
    case(
        ck,
        "bad_stride.team_split_strided_with_stride_0_and_size_2",
        ctx.team_split_strided(Team::WORLD, 0, 0, 2, TeamConfig::default()),
        |e| matches!(e, Error::InvalidArgument { .. }),
        &[&"team_split_strided:", &"`stride`", &pe(me)],
    );
    case(
        ck,
        "bad_stride.team_split_strided_past_the_parent",
        ctx.team_split_strided(Team::WORLD, 1, n, 2, TeamConfig::default()),
        |e| matches!(e, Error::InvalidArgument { .. }),
        &[&"team_split_strided:", &"`size`", &pe(me)],
    );
    case(
        ck,
        "bad_stride.team_split_strided_whose_stride_overflows",
        ctx.team_split_strided(Team::WORLD, 1, usize::MAX, 2, TeamConfig::default()),
        |e| matches!(e, Error::InvalidArgument { .. }),
        &[&"team_split_strided:", &pe(me)],
    );

    Ok(())
}

/// Destroyed and invalid teams, and a team split that differs between PEs.
fn teams(ctx: &Ctx, ck: &mut Check, x: &Targets) -> Result<()> {
    let Targets { me, n, .. } = *x;
    let pair = ctx.team_split_strided(Team::WORLD, 0, 1, 2, TeamConfig::default())?;
    if me < 2 {
        ctx.team_destroy(pair)?;
        case(
            ck,
            "destroyed_team.team_my_pe",
            ctx.team_my_pe(pair),
            |e| matches!(e, Error::InvalidTeam { .. }),
            &[&"team_my_pe:", &"`team`", &"destroyed", &pe(me)],
        );
        case(
            ck,
            "destroyed_team.barrier",
            ctx.barrier(pair),
            |e| matches!(e, Error::InvalidTeam { .. }),
            &[&"barrier:", &"`team`", &"destroyed", &pe(me)],
        );
        case(
            ck,
            "destroyed_team.destroyed_twice",
            ctx.team_destroy(pair),
            |e| matches!(e, Error::InvalidTeam { .. }),
            &[&"team_destroy:", &"`team`", &"destroyed", &pe(me)],
        );
        case(
            ck,
            "destroyed_team.split_of_it",
            ctx.team_split_strided(pair, 0, 1, 1, TeamConfig::default()),
            |e| matches!(e, Error::InvalidTeam { .. }),
            &[&"team_split_strided:", &"`team`", &"destroyed", &pe(me)],
        );
    } else {
        case(
            ck,
            "invalid_team.a_non_member_s_handle",
            ctx.team_n_pes(pair),
            |e| matches!(e, Error::InvalidTeam { .. }),
            &[&"team_n_pes:", &"`team`", &"SHMEM_TEAM_INVALID", &pe(me)],
        );
    }
    case(
        ck,
        "invalid_team.team_invalid",
        ctx.team_n_pes(Team::INVALID),
        |e| matches!(e, Error::InvalidTeam { .. }),
        &[&"team_n_pes:", &"`team`", &pe(me)],
    );
    case(
        ck,
        "invalid_team.a_number_never_handed_out",
        ctx.team_get_config(Team::from_raw(1 << 30)),
        |e| matches!(e, Error::InvalidTeam { .. }),
        &[&"team_get_config:", &"`team`", &"not a team handle", &pe(me)],
    );
    case(
        ck,
        "invalid_team.destroy_the_world",
        ctx.team_destroy(Team::WORLD),
        |e| matches!(e, Error::InvalidTeam { .. }),
        &[&"team_destroy:", &"`team`", &"predefined", &pe(me)],
    );
    case(
        ck,
        "pe_out_of_range.team_translate_pe",
        ctx.team_translate_pe(Team::WORLD, n, Team::SHARED),
        |e| matches!(e, Error::PeOutOfRange { .. }),
        &[&"team_translate_pe:", &"`src_pe`", &pe(n), &"in team 0"],
    );
    let start = if me == 1 { 1 } else { 0 };
    case(
        ck,
        "mismatched_collective.team_split_strided_pe_1_passes_another_start",
        ctx.team_split_strided(Team::WORLD, start, 1, 1, TeamConfig::default()),
        |e| matches!(e, Error::CollectiveMismatch { .. }),
        &[&"team_split_strided:", &"differs between PEs", &"PE 1 passed", &"PE 0 passed"],
    );

    Ok(())
}

/// Allocations the heap cannot hold, bad alignments, and collective heap calls that differ between PEs.
fn heap(ctx: &Ctx, ck: &mut Check, x: &Targets) -> Result<()> {
    let Targets { me, stack_addr, .. } = *x;
    ctx.barrier_all()?;
    case(
        ck,
        "heap_exhausted.alloc_of_1_tib",
        ctx.alloc::<u8>(1 << 40),
        |e| matches!(e, Error::HeapExhausted { .. }),
        &[&"alloc:", &"`size`", &(1u64 << 40), &pe(me)],
    );
    case(
        ck,
        "heap_exhausted.malloc_bytes_of_usize_max_4096",
        ctx.malloc_bytes("malloc", usize::MAX - 4096, 16),
        |e| matches!(e, Error::HeapExhausted { .. }),
        &[&"malloc:", &"`size`", &pe(me)],
    );
    case(
        ck,
        "heap_exhausted.2_62_u64_elements_size_overflows",
        ctx.alloc::<u64>(1 << 62),
        |e| matches!(e, Error::HeapExhausted { .. } | Error::InvalidArgument { .. }),
        &[&"alloc:", &pe(me)],
    );
    case(
        ck,
        "heap_exhausted.alignment_2_62",
        ctx.alloc_aligned::<u8>(8, 1 << 62),
        |e| matches!(e, Error::HeapExhausted { .. }),
        &[&"alloc:", &pe(me)],
    );
    case(
        ck,
        "bad_alignment.24_not_a_power_of_two",
        ctx.alloc_aligned::<u8>(8, 24),
        |e| matches!(e, Error::InvalidArgument { .. }),
        &[&"alloc:", &"`alignment`", &pe(me)],
    );
    let size = if me == 1 { 200 } else { 100 };
    case(
        ck,
        "mismatched_collective.alloc_pe_1_asks_another_size",
        ctx.alloc::<u8>(size),
        |e| matches!(e, Error::CollectiveMismatch { .. }),
        &[&"alloc:", &"`size`", &"PE 1 passed 200", &"PE 0 passed 100"],
    );
    let align = if me == 0 { 24 } else { 64 };
    case(
        ck,
        "mismatched_collective.alloc_aligned_pe_0_asks_a_bad_alignment",
        ctx.alloc_aligned::<u8>(8, align),
        |e| matches!(e, Error::CollectiveMismatch { .. }),
        &[&"alloc:", &"`alignment`", &"PE 0 passed 24"],
    );
    let f = ctx.alloc::<u8>(64)?;
    let bad_ptr = if me == 1 { stack_addr } else { f.addr() };
    case(
        ck,
        "mismatched_collective.free_bytes_pe_1_passes_a_stack_address",
        ctx.free_bytes("free", bad_ptr),
        |e| matches!(e, Error::CollectiveMismatch { .. }),
        &[&"free:", &"`ptr", &"PE 1 passed", &"PE 0 passed"],
    );
    case(
        ck,
        "not_an_allocation.free_bytes_of_the_middle_of_one",
        ctx.free_bytes("free", f.addr() + 16),
        |e| matches!(e, Error::InvalidArgument { .. }),
        &[&"free:", &"`ptr`", &pe(me)],
    );
    ctx.free(f)?;

    Ok(())
}

/// Waits that give up.
fn waits(ctx: &Ctx, ck: &mut Check, x: &Targets) -> Result<()> {
    let Targets { me, .. } = *x;
    case(
        ck,
        "timeout.wait_until_timeout_on_a_word_nobody_writes",
        ctx.wait_until_timeout(&x.a, 0, Cmp::Eq, 99u64, Duration::from_millis(30)),
        |e| matches!(e, Error::Timeout { .. }),
        &[&"wait_until:", &"timed out", &"ivar", &pe(me)],
    );

    Ok(())
}

/// After every failed call: `a` and `b` are untouched, the heap still works.
fn unharmed(ctx: &Ctx, ck: &mut Check, x: &Targets) -> Result<()> {
    let Targets { me, n, right, .. } = *x;
    ctx.barrier_all()?;
    ck.eq("unharmed.a", x.a.to_vec()?, vec![0u64; 8], "no failed call wrote into `a`");
    ck.eq("unharmed.b", x.b.to_vec()?, vec![0u64; 8], "no failed call wrote into `b`, the allocation after `a`");
    let c = ctx.alloc::<u64>(1 << 20)?;
    ctx.put(&c, 0, &vec![me as u64 + 1; 1 << 20], right)?;
    ctx.barrier_all()?;
    let left = (me + n - 1) % n;
    let wrong = c.to_vec()?.iter().filter(|&&w| w != left as u64 + 1).count();
    ck.eq("unharmed.heap_works", wrong, 0, format_args!("wrong words of an 8 MiB allocation put by PE {left} after the errors"));
    ctx.barrier_all()?;
    ctx.free(c)?;
    Ok(())
}

fn run(ctx: &Ctx, ck: &mut Check) -> Result<()> {
    let (me, n) = (ctx.my_pe(), ctx.n_pes());
    let stack = [0u64; 4];
    let x = Targets {
        me,
        n,
        right: (me + 1) % n,
        a: ctx.alloc::<u64>(8)?,
        b: ctx.alloc::<u64>(8)?,
        words: ctx.alloc::<u32>(4)?,
        stack_addr: stack.as_ptr() as usize,
    };
    for group in [pe_out_of_range, off_the_heap, past_an_allocation, misaligned, bad_strides, teams, heap, waits, unharmed] {
        group(ctx, ck, &x)?;
    }
    Ok(())
}

fn main() -> ExitCode {
    support::run_program("pe_errors", 2, run)
}
