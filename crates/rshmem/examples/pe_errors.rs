//! Bad-input table (tests/errors.rs): every case must fail with its own `Error` variant
//! and a message naming the call, the argument and the PE; afterwards the runtime must
//! still work. PE 0 prints the table of (case, message). Needs at least 2 PEs; run with
//! `RSHMEM_MAX_SYMMETRIC_SIZE=64M rshmemrun -n 4 target/release/examples/pe_errors`.

#[path = "support/mod.rs"]
mod support;

use rshmem::{Cmp, Ctx, Error, Result, Team, TeamConfig};
use std::time::Duration;
use support::Check;

struct Table<'a> {
    ck: &'a mut Check,
    rows: Vec<(String, String)>,
}

impl Table<'_> {
    /// Records a case: `r` must be an error accepted by `variant` whose message holds
    /// every needle.
    fn case<T: std::fmt::Debug>(&mut self, name: &str, r: Result<T>, variant: impl Fn(&Error) -> bool, needles: &[&dyn ToString]) {
        let needles: Vec<String> = needles.iter().map(|n| n.to_string()).collect();
        let refs: Vec<&str> = needles.iter().map(String::as_str).collect();
        let msg = self.ck.err(r, variant, &refs, name);
        self.rows.push((name.to_string(), msg));
    }
}

fn pe(p: usize) -> String {
    format!("PE {p}")
}

fn run(ctx: &Ctx, t: &mut Table) -> Result<()> {
    let (me, n) = (ctx.my_pe(), ctx.n_pes());
    let right = (me + 1) % n;
    let a = ctx.alloc::<u64>(8)?;
    let b = ctx.alloc::<u64>(8)?; // right after `a`: catches writes that spill out of it
    let words = ctx.alloc::<u32>(4)?;
    let stack = [0u64; 4];
    let stack_addr = stack.as_ptr() as usize;

    // ----- PE out of range -----
    t.case("PE out of range: put", ctx.put(&a, 0, &[1], n), |e| matches!(e, Error::PeOutOfRange { .. }), &[&"put:", &"`pe`", &pe(n)]);
    t.case(
        "PE out of range: get",
        ctx.get(&mut [0u64; 2], &a, 0, n + 3),
        |e| matches!(e, Error::PeOutOfRange { .. }),
        &[&"get:", &"`pe`", &pe(n + 3)],
    );
    t.case(
        "PE out of range: p",
        ctx.p(&a, 0, 1u64, usize::MAX),
        |e| matches!(e, Error::PeOutOfRange { .. }),
        &[&"p:", &"`pe`", &"is out of range"],
    );
    t.case("PE out of range: g", ctx.g(&a, 0, n), |e| matches!(e, Error::PeOutOfRange { .. }), &[&"g:", &"`pe`", &pe(n)]);
    t.case(
        "PE out of range: iput",
        ctx.iput(&a, 0, &[1u64, 2], 2, 1, 2, n),
        |e| matches!(e, Error::PeOutOfRange { .. }),
        &[&"iput:", &"`pe`", &pe(n)],
    );
    t.case(
        "PE out of range: putmem_nbi",
        ctx.putmem_nbi(a.addr(), &[1], n),
        |e| matches!(e, Error::PeOutOfRange { .. }),
        &[&"putmem_nbi:", &"`pe`", &pe(n)],
    );
    t.case(
        "PE out of range: pe_quiet",
        ctx.pe_quiet(&[right, n]),
        |e| matches!(e, Error::PeOutOfRange { .. }),
        &[&"pe_quiet:", &"`pe`", &pe(n)],
    );

    // ----- address off the heap -----
    t.case(
        "off the heap: putmem to a stack address",
        ctx.putmem(stack_addr, &[1, 2, 3], right),
        |e| matches!(e, Error::NotSymmetric { .. }),
        &[&"putmem:", &"`dest`", &pe(right)],
    );
    t.case(
        "off the heap: getmem from a stack address",
        ctx.getmem(&mut [0; 8], stack_addr, right),
        |e| matches!(e, Error::NotSymmetric { .. }),
        &[&"getmem:", &"`source`", &pe(right)],
    );
    t.case(
        "off the heap: p_addr to a stack address",
        ctx.p_addr(stack_addr, 7u64, right),
        |e| matches!(e, Error::NotSymmetric { .. }),
        &[&"p:", &"`dest`", &pe(right)],
    );
    t.case(
        "off the heap: wait_until_addr on a stack address",
        ctx.wait_until_addr(stack_addr, Cmp::Eq, 0u64, Some(Duration::from_millis(10))),
        |e| matches!(e, Error::NotSymmetric { .. }),
        &[&"wait_until:", &"`ivars`", &pe(me)],
    );
    t.case(
        "off the heap: address 0",
        ctx.getmem(&mut [0; 8], 0, right),
        |e| matches!(e, Error::NotSymmetric { .. }),
        &[&"getmem:", &"`source`", &pe(right)],
    );

    // ----- range past an allocation -----
    t.case(
        "past an allocation: put of 2 at the last index",
        ctx.put(&a, 7, &[1, 2], right),
        |e| matches!(e, Error::OutOfBounds { .. }),
        &[&"put:", &"`index`", &"past the end", &pe(right)],
    );
    t.case(
        "past an allocation: put at index len",
        ctx.put(&a, 8, &[1], right),
        |e| matches!(e, Error::OutOfBounds { .. }),
        &[&"put:", &"`index`", &"past the end", &pe(right)],
    );
    t.case(
        "past an allocation: p at index len",
        ctx.p(&a, 8, 1u64, right),
        |e| matches!(e, Error::OutOfBounds { .. }),
        &[&"p:", &"`index`", &pe(right)],
    );
    t.case(
        "past an allocation: g at index len + 5",
        ctx.g(&a, 13, right),
        |e| matches!(e, Error::OutOfBounds { .. }),
        &[&"g:", &"`index`", &pe(right)],
    );
    t.case(
        "past an allocation: get of 9 from an 8-element array",
        ctx.get(&mut [0u64; 9], &a, 0, right),
        |e| matches!(e, Error::OutOfBounds { .. }),
        &[&"get:", &"past the end", &pe(right)],
    );
    t.case(
        "past an allocation: get_nbi at index len",
        ctx.get_nbi(&mut [0u64; 1], &a, 8, right),
        |e| matches!(e, Error::OutOfBounds { .. }),
        &[&"get_nbi:", &"`index`", &pe(right)],
    );
    t.case(
        "past an allocation: getmem 1 byte too many",
        ctx.getmem(&mut [0; 65], a.addr(), right),
        |e| matches!(e, Error::OutOfBounds { .. }),
        &[&"getmem:", &"`source`", &"1 bytes past the end", &pe(right)],
    );
    t.case(
        "past an allocation: iput whose stride spans past the end",
        ctx.iput(&a, 0, &[1u64, 2, 3], 4, 1, 3, right),
        |e| matches!(e, Error::OutOfBounds { .. }),
        &[&"iput:", &"`dest`", &pe(right)],
    );
    t.case(
        "past an allocation: iget whose stride spans past the end",
        ctx.iget(&mut [0u64; 3], &a, 1, 1, 4, 3, right),
        |e| matches!(e, Error::OutOfBounds { .. }),
        &[&"iget:", &"`source`", &pe(right)],
    );
    t.case(
        "past an allocation: wait_until at index len",
        ctx.wait_until_timeout(&a, 8, Cmp::Eq, 0u64, Duration::from_millis(10)),
        |e| matches!(e, Error::OutOfBounds { .. }),
        &[&"wait_until:", &"`index`", &pe(me)],
    );
    let gone = ctx.alloc::<u64>(4)?;
    let gone_addr = gone.addr();
    ctx.free(gone)?;
    t.case(
        "freed memory: putmem into a freed allocation",
        ctx.putmem(gone_addr, &[1; 8], right),
        |e| matches!(e, Error::OutOfBounds { .. }),
        &[&"putmem:", &"`dest`", &"not inside a live symmetric allocation", &pe(right)],
    );

    // ----- misaligned words -----
    t.case(
        "misaligned: p_addr of a u64 at +4",
        ctx.p_addr(a.addr() + 4, 1u64, right),
        |e| matches!(e, Error::Misaligned { .. }),
        &[&"p:", &"`dest`", &"aligned to 8 bytes", &pe(right)],
    );
    t.case(
        "misaligned: g_addr of a u32 at +2",
        ctx.g_addr::<u32>(words.addr() + 2, right),
        |e| matches!(e, Error::Misaligned { .. }),
        &[&"g:", &"`source`", &"aligned to 4 bytes", &pe(right)],
    );
    t.case(
        "misaligned: wait_until_addr of a u64 at +1",
        ctx.wait_until_addr(a.addr() + 1, Cmp::Eq, 0u64, Some(Duration::from_millis(10))),
        |e| matches!(e, Error::Misaligned { .. }),
        &[&"wait_until:", &"`ivars`", &pe(me)],
    );
    t.case(
        "misaligned: test_addr of an i16 at +1",
        ctx.test_addr(words.addr() + 1, Cmp::Eq, 0i16),
        |e| matches!(e, Error::Misaligned { .. }),
        &[&"test:", &"`ivars`", &pe(me)],
    );

    // ----- bad strides -----
    t.case(
        "bad stride: iput with dst stride 0",
        ctx.iput(&a, 0, &[1u64, 2], 0, 1, 2, right),
        |e| matches!(e, Error::InvalidArgument { .. }),
        &[&"iput:", &"`stride`", &pe(me)],
    );
    t.case(
        "bad stride: iget with src stride 0",
        ctx.iget(&mut [0u64; 2], &a, 0, 1, 0, 2, right),
        |e| matches!(e, Error::InvalidArgument { .. }),
        &[&"iget:", &"`stride`", &pe(me)],
    );
    t.case(
        "bad stride: iput whose strides overflow",
        ctx.iput(&a, 0, &[1u64, 2], usize::MAX / 2, 1, 3, right),
        |e| matches!(e, Error::InvalidArgument { .. }),
        &[&"iput:", &"`nelems`", &pe(me)],
    );
    t.case(
        "bad stride: iput source shorter than its stride spans",
        ctx.iput(&a, 0, &[1u64, 2, 3], 1, 2, 3, right),
        |e| matches!(e, Error::InvalidArgument { .. }),
        &[&"iput:", &"`source`", &pe(me)],
    );
    t.case(
        "bad stride: team_split_strided with stride 0 and size 2",
        ctx.team_split_strided(Team::WORLD, 0, 0, 2, TeamConfig::default()),
        |e| matches!(e, Error::InvalidArgument { .. }),
        &[&"team_split_strided:", &"`stride`", &pe(me)],
    );
    t.case(
        "bad stride: team_split_strided past the parent",
        ctx.team_split_strided(Team::WORLD, 1, n, 2, TeamConfig::default()),
        |e| matches!(e, Error::InvalidArgument { .. }),
        &[&"team_split_strided:", &"`size`", &pe(me)],
    );
    t.case(
        "bad stride: team_split_strided whose stride overflows",
        ctx.team_split_strided(Team::WORLD, 1, usize::MAX, 2, TeamConfig::default()),
        |e| matches!(e, Error::InvalidArgument { .. }),
        &[&"team_split_strided:", &pe(me)],
    );

    // ----- teams -----
    let pair = ctx.team_split_strided(Team::WORLD, 0, 1, 2, TeamConfig::default())?;
    if me < 2 {
        ctx.team_destroy(pair)?;
        t.case(
            "destroyed team: team_my_pe",
            ctx.team_my_pe(pair),
            |e| matches!(e, Error::InvalidTeam { .. }),
            &[&"team_my_pe:", &"`team`", &"destroyed", &pe(me)],
        );
        t.case(
            "destroyed team: barrier",
            ctx.barrier(pair),
            |e| matches!(e, Error::InvalidTeam { .. }),
            &[&"barrier:", &"`team`", &"destroyed", &pe(me)],
        );
        t.case(
            "destroyed team: destroyed twice",
            ctx.team_destroy(pair),
            |e| matches!(e, Error::InvalidTeam { .. }),
            &[&"team_destroy:", &"`team`", &"destroyed", &pe(me)],
        );
        t.case(
            "destroyed team: split of it",
            ctx.team_split_strided(pair, 0, 1, 1, TeamConfig::default()),
            |e| matches!(e, Error::InvalidTeam { .. }),
            &[&"team_split_strided:", &"`team`", &"destroyed", &pe(me)],
        );
    } else {
        t.case(
            "invalid team: a non-member's handle",
            ctx.team_n_pes(pair),
            |e| matches!(e, Error::InvalidTeam { .. }),
            &[&"team_n_pes:", &"`team`", &"SHMEM_TEAM_INVALID", &pe(me)],
        );
    }
    t.case(
        "invalid team: Team::INVALID",
        ctx.team_n_pes(Team::INVALID),
        |e| matches!(e, Error::InvalidTeam { .. }),
        &[&"team_n_pes:", &"`team`", &pe(me)],
    );
    t.case(
        "invalid team: a number never handed out",
        ctx.team_get_config(Team::from_raw(1 << 30)),
        |e| matches!(e, Error::InvalidTeam { .. }),
        &[&"team_get_config:", &"`team`", &"not a team handle", &pe(me)],
    );
    t.case(
        "invalid team: destroy the world",
        ctx.team_destroy(Team::WORLD),
        |e| matches!(e, Error::InvalidTeam { .. }),
        &[&"team_destroy:", &"`team`", &"predefined", &pe(me)],
    );
    t.case(
        "PE out of range: team_translate_pe",
        ctx.team_translate_pe(Team::WORLD, n, Team::SHARED),
        |e| matches!(e, Error::PeOutOfRange { .. }),
        &[&"team_translate_pe:", &"`src_pe`", &pe(n), &"in team 0"],
    );
    let start = if me == 1 { 1 } else { 0 };
    t.case(
        "mismatched collective: team_split_strided, PE 1 passes another start",
        ctx.team_split_strided(Team::WORLD, start, 1, 1, TeamConfig::default()),
        |e| matches!(e, Error::CollectiveMismatch { .. }),
        &[&"team_split_strided:", &"differs between PEs", &"PE 1 passed", &"PE 0 passed"],
    );

    // ----- heap -----
    ctx.barrier_all()?;
    t.case(
        "heap exhausted: alloc of 1 TiB",
        ctx.alloc::<u8>(1 << 40),
        |e| matches!(e, Error::HeapExhausted { .. }),
        &[&"alloc:", &"`size`", &(1u64 << 40), &pe(me)],
    );
    t.case(
        "heap exhausted: malloc_bytes of usize::MAX - 4096",
        ctx.malloc_bytes("malloc", usize::MAX - 4096, 16),
        |e| matches!(e, Error::HeapExhausted { .. }),
        &[&"malloc:", &"`size`", &pe(me)],
    );
    t.case(
        "heap exhausted: 2^62 u64 elements (size overflows)",
        ctx.alloc::<u64>(1 << 62),
        |e| matches!(e, Error::HeapExhausted { .. } | Error::InvalidArgument { .. }),
        &[&"alloc:", &pe(me)],
    );
    t.case(
        "heap exhausted: alignment 2^62",
        ctx.alloc_aligned::<u8>(8, 1 << 62),
        |e| matches!(e, Error::HeapExhausted { .. }),
        &[&"alloc:", &pe(me)],
    );
    t.case(
        "bad alignment: 24 (not a power of two)",
        ctx.alloc_aligned::<u8>(8, 24),
        |e| matches!(e, Error::InvalidArgument { .. }),
        &[&"alloc:", &"`alignment`", &pe(me)],
    );
    let size = if me == 1 { 200 } else { 100 };
    t.case(
        "mismatched collective: alloc, PE 1 asks another size",
        ctx.alloc::<u8>(size),
        |e| matches!(e, Error::CollectiveMismatch { .. }),
        &[&"alloc:", &"`size`", &"PE 1 passed 200", &"PE 0 passed 100"],
    );
    let align = if me == 0 { 24 } else { 64 };
    t.case(
        "mismatched collective: alloc_aligned, PE 0 asks a bad alignment",
        ctx.alloc_aligned::<u8>(8, align),
        |e| matches!(e, Error::CollectiveMismatch { .. }),
        &[&"alloc:", &"`alignment`", &"PE 0 passed 24"],
    );
    let f = ctx.alloc::<u8>(64)?;
    let bad_ptr = if me == 1 { stack_addr } else { f.addr() };
    t.case(
        "mismatched collective: free_bytes, PE 1 passes a stack address",
        ctx.free_bytes("free", bad_ptr),
        |e| matches!(e, Error::CollectiveMismatch { .. }),
        &[&"free:", &"`ptr", &"PE 1 passed", &"PE 0 passed"],
    );
    t.case(
        "not an allocation: free_bytes of the middle of one",
        ctx.free_bytes("free", f.addr() + 16),
        |e| matches!(e, Error::InvalidArgument { .. }),
        &[&"free:", &"`ptr`", &pe(me)],
    );
    ctx.free(f)?;

    // ----- waits that give up -----
    t.case(
        "timeout: wait_until_timeout on a word nobody writes",
        ctx.wait_until_timeout(&a, 0, Cmp::Eq, 99u64, Duration::from_millis(30)),
        |e| matches!(e, Error::Timeout { .. }),
        &[&"wait_until:", &"timed out", &"ivar", &pe(me)],
    );

    // ----- nothing was harmed: `b` (next to `a`) is untouched, the heap still works -----
    ctx.barrier_all()?;
    t.ck.eq(a.to_vec(), vec![0u64; 8], "no failed call wrote into `a`");
    t.ck.eq(b.to_vec(), vec![0u64; 8], "no failed call wrote into `b`, the allocation after `a`");
    let c = ctx.alloc::<u64>(1 << 20)?;
    ctx.put(&c, 0, &vec![me as u64 + 1; 1 << 20], right)?;
    ctx.barrier_all()?;
    let left = (me + n - 1) % n;
    t.ck.eq(c.to_vec(), vec![left as u64 + 1; 1 << 20], "an 8 MiB allocation after the errors works");
    ctx.barrier_all()?;
    ctx.free(c)?;
    Ok(())
}

fn main() -> Result<()> {
    let ctx = rshmem::init()?;
    let (me, n) = (ctx.my_pe(), ctx.n_pes());
    assert!(n >= 2, "pe_errors needs at least 2 PEs");
    let mut ck = Check::new("pe_errors", me);
    let mut table = Table { ck: &mut ck, rows: Vec::new() };
    if let Err(e) = run(&ctx, &mut table) {
        table.ck.ok(false, format_args!("unexpected error: {e}"));
    }
    let rows = std::mem::take(&mut table.rows);
    if me == 0 {
        let width = rows.iter().map(|(c, _)| c.len()).max().unwrap_or(0);
        let mut out = format!("error table on PE 0 of {n} ({} cases):\n", rows.len());
        for (case, msg) in &rows {
            out.push_str(&format!("  {case:<width$}  {msg}\n"));
        }
        print!("{out}");
        std::io::Write::flush(&mut std::io::stdout()).expect("flush stdout");
    }
    // The others' verdict lines after the table: a launcher that forwards output in
    // chunks (mpirun) would otherwise splice them into the table's lines.
    ctx.barrier_all()?;
    ck.finish();
    ctx.finalize()
}
