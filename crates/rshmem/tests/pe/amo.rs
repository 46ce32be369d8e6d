//! Multi-PE checks of the atomic memory operations (see tests/amo.rs). Modes:
//!
//! * `table`: every AMO of every type of its table, issued by each PE in turn to every
//!   PE (itself included), each returned value and final word checked against a model;
//!   then all PEs at once, checked against the model's sums.
//! * `stress [ops]`: every PE issues `ops` (default 100,000) mixed atomics from a
//!   deterministic per-PE sequence on counters of every PE; each PE recomputes all the
//!   sequences and checks its counters end with exactly the model's values.
//! * `tickets [per_pe]`: fetch_inc tickets (default 100,000 per PE) form a permutation;
//!   fetch_add ranges tile the total.
//! * `stack`: a compare_swap (Treiber) stack of nodes spread over all PEs, churned by
//!   every PE: no node lost, none held twice, none duplicated.
//! * `errors`: bad atomic targets get the right error, and change nothing.
//!
//! Checks are named by mode: `standard.TYPE`, `bitwise.TYPE`, `extended.TYPE` (one per
//! entry of the library's AMO tables), `stress.*`, `tickets.*`, `stack.*`, `errors.*`.

#[path = "../support/mod.rs"]
mod support;

use rshmem::{BitwiseAmo, Ctx, CtxOptions, Error, ExtendedAmo, Result, StandardAmo, Sym, WordType};
use std::process::ExitCode;
use support::{mix, unknown_mode, Check};

fn name_seed(name: &str) -> u64 {
    name.bytes().fold(0xcbf2_9ce4_8422_2325u64, |h, b| (h ^ b as u64).wrapping_mul(0x100_0000_01b3))
}

fn mask<T: WordType>() -> u64 {
    if T::WIDTH == 8 {
        u64::MAX
    } else {
        (1u64 << (8 * T::WIDTH)) - 1
    }
}

/// The checks of one type of a table: every evaluation is check `name`, its detail the
/// turn and the operation (the last one's when all held).
struct Checker<'a> {
    ck: &'a mut Check,
    name: String,
    what: String,
}

impl Checker<'_> {
    fn eq(&mut self, op: &str, got: u64, want: u64) {
        let detail =
            if got == want { format!("{}: {op}", self.what) } else { format!("{}: {op}: got {got:#x}, expected {want:#x}", self.what) };
        self.ck.ok(&self.name, got == want, detail);
    }
}

// ----- table mode -----

/// The standard AMOs on `T`, each PE in turn, then all at once.
fn standard<T: StandardAmo + ExtendedAmo>(ctx: &Ctx, name: &str, c: &mut Checker) -> Result<()> {
    let (me, n) = (ctx.my_pe(), ctx.n_pes());
    let m = mask::<T>();
    let v = |b: u64| T::from_bits(b);
    let x = ctx.alloc::<T>(1)?;
    let mut model = vec![0u64; n];
    let s0 = name_seed(name);
    for turn in 0..n {
        for (q, word) in model.iter_mut().enumerate() {
            let s = |k: u64| mix(s0 ^ mix((turn * 64 + q) as u64 * 16 + k)) & m;
            let mine = me == turn;
            c.what = format!("{name} (turn of PE {turn}, target PE {q})");
            let (a, b, d, e, f, g, h) = (s(1), s(2), s(3), s(4), s(5), s(6), s(7) | (1 << (8 * T::WIDTH - 1)));
            if mine {
                ctx.atomic_set(&x, 0, v(a), q)?;
                c.eq("fetch after set", ctx.atomic_fetch(&x, 0, q)?.to_bits(), a);
                let mut out = v(0);
                ctx.atomic_fetch_nbi(&mut out, &x, 0, q)?;
                c.eq("fetch_nbi", out.to_bits(), a);
                c.eq("swap", ctx.atomic_swap(&x, 0, v(b), q)?.to_bits(), a);
                ctx.atomic_swap_nbi(&mut out, &x, 0, v(d), q)?;
                c.eq("swap_nbi", out.to_bits(), b);
                c.eq("compare_swap (no match)", ctx.atomic_compare_swap(&x, 0, v(d ^ 1), v(e), q)?.to_bits(), d);
                c.eq("compare_swap (match)", ctx.atomic_compare_swap(&x, 0, v(d), v(e), q)?.to_bits(), d);
                ctx.atomic_compare_swap_nbi(&mut out, &x, 0, v(e), v(f), q)?;
                c.eq("compare_swap_nbi", out.to_bits(), e);
                c.eq("fetch_inc", ctx.atomic_fetch_inc(&x, 0, q)?.to_bits(), f);
                ctx.atomic_fetch_inc_nbi(&mut out, &x, 0, q)?;
                c.eq("fetch_inc_nbi", out.to_bits(), f.wrapping_add(1) & m);
                ctx.atomic_inc(&x, 0, q)?;
                c.eq("fetch_add", ctx.atomic_fetch_add(&x, 0, v(g), q)?.to_bits(), f.wrapping_add(3) & m);
                ctx.atomic_fetch_add_nbi(&mut out, &x, 0, v(h), q)?;
                c.eq("fetch_add_nbi", out.to_bits(), f.wrapping_add(3).wrapping_add(g) & m);
                ctx.atomic_add(&x, 0, v(g), q)?;
            }
            *word = f.wrapping_add(3).wrapping_add(g).wrapping_add(h).wrapping_add(g) & m;
            if mine {
                c.eq("fetch at end", ctx.atomic_fetch(&x, 0, q)?.to_bits(), *word);
            }
        }
        ctx.barrier_all()?;
        c.what = format!("{name} after the turn of PE {turn}");
        c.eq("local word", x.load(0)?.to_bits(), model[me]);
        ctx.barrier_all()?;
    }
    // Everyone at once on every PE's word: inc, add, fetch_add (with a negative operand).
    let rounds = 50u64;
    let (k1, k2) = (mix(s0) & m & 0xffff, (mix(s0 + 1) | (1 << (8 * T::WIDTH - 1))) & m);
    for r in 0..rounds {
        for q in 0..n {
            let q = (q + me + r as usize) % n;
            ctx.atomic_inc(&x, 0, q)?;
            ctx.atomic_add(&x, 0, v(k1), q)?;
            ctx.atomic_fetch_add(&x, 0, v(k2), q)?;
            ctx.atomic_fetch_inc(&x, 0, q)?;
        }
    }
    ctx.barrier_all()?;
    let per = 2u64.wrapping_add(k1).wrapping_add(k2).wrapping_mul(rounds * n as u64);
    c.what = format!("{name} after concurrent updates by all PEs");
    c.eq("local word", x.load(0)?.to_bits(), model[me].wrapping_add(per) & m);
    ctx.barrier_all()?;
    ctx.free(x)
}

/// The bitwise AMOs on `T`, each PE in turn, then all at once.
fn bitwise<T: BitwiseAmo + ExtendedAmo>(ctx: &Ctx, name: &str, c: &mut Checker) -> Result<()> {
    let (me, n) = (ctx.my_pe(), ctx.n_pes());
    let m = mask::<T>();
    let v = |b: u64| T::from_bits(b);
    let x = ctx.alloc::<T>(1)?;
    let mut model = vec![0u64; n];
    let s0 = name_seed(name) ^ 0xb17;
    for turn in 0..n {
        for (q, word) in model.iter_mut().enumerate() {
            let s = |k: u64| mix(s0 ^ mix((turn * 64 + q) as u64 * 16 + k)) & m;
            let mine = me == turn;
            c.what = format!("{name} (turn of PE {turn}, target PE {q})");
            let a = s(1);
            let mut w = a;
            let mut out = v(0);
            if mine {
                ctx.atomic_set(&x, 0, v(a), q)?;
                c.eq("fetch_and", ctx.atomic_fetch_and(&x, 0, v(s(2)), q)?.to_bits(), w);
            }
            w &= s(2);
            if mine {
                ctx.atomic_fetch_and_nbi(&mut out, &x, 0, v(s(3)), q)?;
                c.eq("fetch_and_nbi", out.to_bits(), w);
                ctx.atomic_and(&x, 0, v(s(4)), q)?;
            }
            w = w & s(3) & s(4);
            if mine {
                c.eq("fetch_or", ctx.atomic_fetch_or(&x, 0, v(s(5)), q)?.to_bits(), w);
            }
            w |= s(5);
            if mine {
                ctx.atomic_fetch_or_nbi(&mut out, &x, 0, v(s(6)), q)?;
                c.eq("fetch_or_nbi", out.to_bits(), w);
                ctx.atomic_or(&x, 0, v(s(7)), q)?;
            }
            w = w | s(6) | s(7);
            if mine {
                c.eq("fetch_xor", ctx.atomic_fetch_xor(&x, 0, v(s(8)), q)?.to_bits(), w);
            }
            w ^= s(8);
            if mine {
                ctx.atomic_fetch_xor_nbi(&mut out, &x, 0, v(s(9)), q)?;
                c.eq("fetch_xor_nbi", out.to_bits(), w);
                ctx.atomic_xor(&x, 0, v(s(10)), q)?;
            }
            w = w ^ s(9) ^ s(10);
            *word = w;
            if mine {
                c.eq("fetch at end", ctx.atomic_fetch(&x, 0, q)?.to_bits(), w);
            }
        }
        ctx.barrier_all()?;
        c.what = format!("{name} after the turn of PE {turn}");
        c.eq("local word", x.load(0)?.to_bits(), model[me]);
        ctx.barrier_all()?;
    }
    // All at once: each PE xors its own pattern 101 times into every PE's word (net: once).
    let pat = |p: usize| mix(s0 ^ p as u64) & m;
    for r in 0..50 {
        for q in 0..n {
            let q = (q + me + r) % n;
            ctx.atomic_xor(&x, 0, v(pat(me)), q)?;
            ctx.atomic_fetch_xor(&x, 0, v(pat(me)), q)?;
        }
    }
    for q in 0..n {
        ctx.atomic_xor(&x, 0, v(pat(me)), q)?;
    }
    ctx.barrier_all()?;
    let want = (0..n).fold(model[me], |w, p| w ^ pat(p));
    c.what = format!("{name} after concurrent xor by all PEs");
    c.eq("local word", x.load(0)?.to_bits(), want);
    ctx.barrier_all()?;
    // Then or in one bit and and out another, each PE its own.
    let bits = 8 * T::WIDTH;
    for q in 0..n {
        ctx.atomic_fetch_or(&x, 0, v(1 << (me % bits)), q)?;
        ctx.atomic_and(&x, 0, v(!(1u64 << ((me + n) % bits)) & m), q)?;
    }
    ctx.barrier_all()?;
    let (ors, ands) = (0..n).fold((0u64, m), |(o, a), p| (o | 1 << (p % bits), a & !(1u64 << ((p + n) % bits))));
    c.what = format!("{name} after concurrent or/and by all PEs");
    // The or bits (0..n) and the and bits (n..2n) are disjoint when 2n <= width.
    c.eq("local word", x.load(0)?.to_bits(), (want | ors) & ands);
    ctx.barrier_all()?;
    ctx.free(x)
}

/// fetch, set, swap on `T` (floats included), each PE in turn.
fn extended<T: ExtendedAmo>(ctx: &Ctx, name: &str, make: impl Fn(u64) -> T, c: &mut Checker) -> Result<()> {
    let (me, n) = (ctx.my_pe(), ctx.n_pes());
    let x = ctx.alloc::<T>(1)?;
    let mut model = vec![0u64; n];
    let s0 = name_seed(name) ^ 0xe7;
    for turn in 0..n {
        for (q, word) in model.iter_mut().enumerate() {
            let s = |k: u64| make(mix(s0 ^ mix((turn * 64 + q) as u64 * 16 + k)));
            c.what = format!("{name} (turn of PE {turn}, target PE {q})");
            if me == turn {
                ctx.atomic_set(&x, 0, s(1), q)?;
                c.eq("fetch after set", ctx.atomic_fetch(&x, 0, q)?.to_bits(), s(1).to_bits());
                let mut out = make(0);
                ctx.atomic_fetch_nbi(&mut out, &x, 0, q)?;
                c.eq("fetch_nbi", out.to_bits(), s(1).to_bits());
                c.eq("swap", ctx.atomic_swap(&x, 0, s(2), q)?.to_bits(), s(1).to_bits());
                ctx.atomic_swap_nbi(&mut out, &x, 0, s(3), q)?;
                c.eq("swap_nbi", out.to_bits(), s(2).to_bits());
                c.eq("value", ctx.atomic_fetch(&x, 0, q)?.to_bits(), s(3).to_bits());
            }
            *word = s(3).to_bits();
        }
        ctx.barrier_all()?;
        c.what = format!("{name} after the turn of PE {turn}");
        c.eq("local word", x.load(0)?.to_bits(), model[me]);
        ctx.barrier_all()?;
    }
    ctx.free(x)
}

macro_rules! run_standard {
    ($(($name:ident, $t:ty)),*) => {
        fn all_standard(ctx: &Ctx, ck: &mut Check) -> Result<()> {
            $( standard::<$t>(ctx, concat!(stringify!($name), " (", stringify!($t), ")"), &mut checker(ck, "standard", stringify!($name)))?; )*
            Ok(())
        }
        fn all_extended_ints(ctx: &Ctx, ck: &mut Check) -> Result<()> {
            $( extended::<$t>(ctx, stringify!($name), |b| <$t as WordType>::from_bits(b), &mut checker(ck, "extended", stringify!($name)))?; )*
            Ok(())
        }
    };
}
rshmem::amo_standard_types!(run_standard);

macro_rules! run_bitwise {
    ($(($name:ident, $t:ty)),*) => {
        fn all_bitwise(ctx: &Ctx, ck: &mut Check) -> Result<()> {
            $( bitwise::<$t>(ctx, concat!(stringify!($name), " (", stringify!($t), ")"), &mut checker(ck, "bitwise", stringify!($name)))?; )*
            Ok(())
        }
    };
}
rshmem::amo_bitwise_types!(run_bitwise);

/// The checker of check `TABLE.TYPE`.
fn checker<'a>(ck: &'a mut Check, table: &str, ty: &str) -> Checker<'a> {
    Checker { ck, name: format!("{table}.{ty}"), what: String::new() }
}

fn table(ctx: &Ctx, ck: &mut Check) -> Result<()> {
    all_standard(ctx, ck)?;
    all_bitwise(ctx, ck)?;
    all_extended_ints(ctx, ck)?;
    extended::<f32>(ctx, "float", |b| (b % 100_000) as f32 * 0.25 - 1000.0, &mut checker(ck, "extended", "float"))?;
    extended::<f64>(ctx, "double", |b| (b % 10_000_000) as f64 * 0.125 - 5e5, &mut checker(ck, "extended", "double"))
}

// ----- stress mode -----

/// Words of the or and and classes: many, so that random bits leave them far from full
/// (or empty) and the final values say something.
const BIT_WORDS: usize = 1024;

/// Counter words on every PE; each class holds operations that commute with each other.
struct Counters {
    adds: Sym<u64>,
    adds32: Sym<i32>,
    xors: Sym<u64>,
    ors: Sym<u32>,
    ands: Sym<u64>,
    cas: Sym<i64>,
}

/// The model's final value of each counter on one PE.
#[derive(Debug, Clone, PartialEq, Eq)]
struct Model {
    adds: [u64; 4],
    adds32: [i32; 2],
    xors: [u64; 2],
    ors: Vec<u32>,
    ands: Vec<u64>,
    cas: i64,
}

impl Model {
    fn new() -> Model {
        Model { adds: [0; 4], adds32: [0; 2], xors: [0; 2], ors: vec![0; BIT_WORDS], ands: vec![u64::MAX; BIT_WORDS], cas: 0 }
    }
}

/// (word, bit) of an or/and operand.
fn bit_of(x: u64, bits: u64) -> (usize, u64) {
    (((x >> 8) % BIT_WORDS as u64) as usize, x % bits)
}

/// Op `i` of PE `pe`: (target PE, kind, index, operand).
fn stress_op(pe: usize, i: u64, n: usize) -> (usize, u64, usize, u64) {
    let r = mix(mix(pe as u64 + 1) ^ i);
    let r2 = mix(r);
    ((r % n as u64) as usize, (r >> 16) % 12, ((r >> 32) % 4) as usize, r2)
}

fn apply_model(m: &mut Model, kind: u64, idx: usize, x: u64) {
    match kind {
        0 | 1 => m.adds[idx] = m.adds[idx].wrapping_add(x),
        2 | 3 => m.adds[idx] = m.adds[idx].wrapping_add(1),
        4 | 5 => m.adds32[idx % 2] = m.adds32[idx % 2].wrapping_add(x as i32),
        6 | 7 => m.xors[idx % 2] ^= x,
        8 => {
            let (w, b) = bit_of(x, 32);
            m.ors[w] |= 1 << b
        }
        9 | 10 => {
            let (w, b) = bit_of(x, 64);
            m.ands[w] &= !(1 << b)
        }
        _ => m.cas = m.cas.wrapping_add((x % 1000) as i64 - 500),
    }
}

fn stress(ctx: &Ctx, ck: &mut Check, ops: u64) -> Result<()> {
    let (me, n) = (ctx.my_pe(), ctx.n_pes());
    let c = Counters {
        adds: ctx.alloc(4)?,
        adds32: ctx.alloc(2)?,
        xors: ctx.alloc(2)?,
        ors: ctx.alloc(BIT_WORDS)?,
        ands: ctx.alloc_from(&[u64::MAX; BIT_WORDS])?,
        cas: ctx.alloc(1)?,
    };
    let mut last_seen = vec![vec![0u32; BIT_WORDS]; n];
    let mut fetched = 0u64;
    for i in 0..ops {
        let (q, kind, idx, x) = stress_op(me, i, n);
        match kind {
            0 => ctx.atomic_add(&c.adds, idx, x, q)?,
            1 => {
                ctx.atomic_fetch_add(&c.adds, idx, x, q)?;
            }
            2 => ctx.atomic_inc(&c.adds, idx, q)?,
            3 => {
                // adds[0..4] only grow by increments and arbitrary adds, so nothing to check
                // on the value beyond atomicity; count them.
                ctx.atomic_fetch_inc(&c.adds, idx, q)?;
                fetched += 1;
            }
            4 => ctx.atomic_add(&c.adds32, idx % 2, x as i32, q)?,
            5 => {
                let mut out = 0i32;
                ctx.atomic_fetch_add_nbi(&mut out, &c.adds32, idx % 2, x as i32, q)?;
            }
            6 => ctx.atomic_xor(&c.xors, idx % 2, x, q)?,
            7 => {
                ctx.atomic_fetch_xor(&c.xors, idx % 2, x, q)?;
            }
            8 => {
                // Or bits never go away: what this PE fetched from q's word only grows.
                let (w, b) = bit_of(x, 32);
                let seen = ctx.atomic_fetch_or(&c.ors, w, 1 << b, q)?;
                let before = last_seen[q][w];
                ck.ok_with("stress.or_bits_stay", seen & before == before, || {
                    format!("op {i}: or word {w} of PE {q} lost bits: {seen:#x} after {before:#x}")
                });
                last_seen[q][w] = seen | 1 << b;
            }
            9 => {
                let (w, b) = bit_of(x, 64);
                ctx.atomic_and(&c.ands, w, !(1 << b), q)?
            }
            10 => {
                let (w, b) = bit_of(x, 64);
                let mut out = 0u64;
                ctx.atomic_fetch_and_nbi(&mut out, &c.ands, w, !(1 << b), q)?;
            }
            _ => {
                // Lock-free add built on compare_swap.
                let d = (x % 1000) as i64 - 500;
                let mut old = ctx.atomic_fetch(&c.cas, 0, q)?;
                loop {
                    let got = ctx.atomic_compare_swap(&c.cas, 0, old, old.wrapping_add(d), q)?;
                    if got == old {
                        break;
                    }
                    old = got;
                }
            }
        }
    }
    ctx.barrier_all()?;
    let mut model = Model::new();
    for pe in 0..n {
        for i in 0..ops {
            let (q, kind, idx, x) = stress_op(pe, i, n);
            if q == me {
                apply_model(&mut model, kind, idx, x);
            }
        }
    }
    let got = Model {
        adds: c.adds.to_vec()?.try_into().expect("4"),
        adds32: c.adds32.to_vec()?.try_into().expect("2"),
        xors: c.xors.to_vec()?.try_into().expect("2"),
        ors: c.ors.to_vec()?,
        ands: c.ands.to_vec()?,
        cas: c.cas.load(0)?,
    };
    let set: u32 = model.ors.iter().map(|w| w.count_ones()).sum();
    let cleared: u32 = model.ands.iter().map(|w| w.count_zeros()).sum();
    let wrong_ors = (0..BIT_WORDS).filter(|&w| got.ors[w] != model.ors[w]).count();
    let wrong_ands = (0..BIT_WORDS).filter(|&w| got.ands[w] != model.ands[w]).count();
    let detail = if got == model {
        format!(
            "{ops} mixed atomics issued ({fetched} fetch_inc), counters equal the model of {n} PEs x {ops} ops \
             ({set} or bits set, {cleared} and bits cleared)"
        )
    } else {
        format!(
            "counters differ from the model of {n} PEs x {ops} ops ({wrong_ors} or words, {wrong_ands} and words differ): \
             got {:?} {:?} {:?} {}, model {:?} {:?} {:?} {}",
            got.adds, got.adds32, got.xors, got.cas, model.adds, model.adds32, model.xors, model.cas
        )
    };
    ck.ok("stress.counters", got == model, detail);
    Ok(())
}

// ----- tickets mode -----

fn tickets(ctx: &Ctx, ck: &mut Check, per_pe: usize) -> Result<()> {
    let (me, n) = (ctx.my_pe(), ctx.n_pes());
    let counter = ctx.alloc::<u64>(1)?;
    let counter32 = ctx.alloc::<u32>(1)?;
    let range = ctx.alloc::<u64>(1)?;
    let got_tickets = ctx.alloc::<u64>(n * per_pe)?;
    let got_tickets32 = ctx.alloc::<u32>(n * per_pe)?;
    let got_starts = ctx.alloc::<u64>(n * per_pe)?;
    let amount = |pe: usize, i: usize| 1 + (mix((pe * per_pe + i) as u64) % 7);
    let (host, host32) = (n - 1, n / 2);
    let mut mine = Vec::with_capacity(per_pe);
    let mut mine32 = Vec::with_capacity(per_pe);
    let mut starts = Vec::with_capacity(per_pe);
    for i in 0..per_pe {
        mine.push(ctx.atomic_fetch_inc(&counter, 0, host)?);
        let mut t = 0u32;
        ctx.atomic_fetch_inc_nbi(&mut t, &counter32, 0, host32)?;
        mine32.push(t);
        starts.push(ctx.atomic_fetch_add(&range, 0, amount(me, i), 0)?);
    }
    for (label, v) in [("fetch_inc", &mine), ("fetch_add", &starts)] {
        ck.ok("tickets.increasing", v.windows(2).all(|w| w[0] < w[1]), format_args!("this PE's {per_pe} {label} results increase"));
    }
    ctx.put(&got_tickets, me * per_pe, &mine, 0)?;
    ctx.put(&got_tickets32, me * per_pe, &mine32, 0)?;
    ctx.put(&got_starts, me * per_pe, &starts, 0)?;
    ctx.barrier_all()?;
    if me == 0 {
        let total = (n * per_pe) as u64;
        let mut all = got_tickets.to_vec()?;
        all.sort_unstable();
        let gap = (0..all.len()).find(|&i| all[i] != i as u64);
        ck.ok_with("tickets.u64_permutation", gap.is_none(), || {
            format!("sorted u64 ticket {} is {} (duplicate or gap)", gap.unwrap_or(0), all[gap.unwrap_or(0)])
        });
        let mut all32 = got_tickets32.to_vec()?;
        all32.sort_unstable();
        let gap32 = (0..all32.len()).find(|&i| all32[i] != i as u32);
        ck.ok_with("tickets.u32_permutation", gap32.is_none(), || {
            format!("sorted u32 ticket {} is {} (duplicate or gap)", gap32.unwrap_or(0), all32[gap32.unwrap_or(0)])
        });
        let finals = (ctx.atomic_fetch(&counter, 0, host)?, ctx.atomic_fetch(&counter32, 0, host32)?);
        ck.eq("tickets.final_counters", finals, (total, total as u32), "final u64 and u32 counters");
        let starts = got_starts.to_vec()?;
        let mut pieces: Vec<(u64, u64)> = (0..n * per_pe).map(|j| (starts[j], amount(j / per_pe, j % per_pe))).collect();
        pieces.sort_unstable();
        let mut at = 0;
        let mut tiled = true;
        for (s, len) in pieces {
            tiled &= ck.ok_with("tickets.ranges_tile", s == at, || format!("a fetch_add range starts at {s}, expected {at}"));
            at += len;
        }
        ck.eq("tickets.range_total", range.load(0)?, at, "fetch_add total against the ranges' end");
        // The counts the test reads back: every ticket of every PE took part.
        ck.ok(
            "tickets.permutation",
            gap.is_none() && gap32.is_none(),
            format_args!("{total} fetch_inc tickets (u64 and u32) form a permutation"),
        );
        ck.ok("tickets.tiling", tiled, format_args!("{total} fetch_add ranges tile 0..{at}"));
    }
    ctx.barrier_all()
}

// ----- stack mode -----

const LOW: u64 = 0xffff_ffff;

struct Stack {
    head: Sym<u64>,
    next: Sym<u64>,
    holders: Sym<u64>,
    per_pe: usize,
}

impl Stack {
    fn push(&self, ctx: &Ctx, id: usize) -> Result<()> {
        let (home, i) = (id / self.per_pe, id % self.per_pe);
        let mut h = ctx.atomic_fetch(&self.head, 0, 0)?;
        loop {
            ctx.atomic_set(&self.next, i, h & LOW, home)?;
            // A set is a non-fetching atomic: it may land after the call returns (over
            // the network it does), and only quiet orders it before the compare-swap
            // on another PE that publishes the node (a popper reads `next` after it).
            ctx.quiet()?;
            let new = (h >> 32).wrapping_add(1) << 32 | (id as u64 + 1);
            let got = ctx.atomic_compare_swap(&self.head, 0, h, new, 0)?;
            if got == h {
                return Ok(());
            }
            h = got;
        }
    }

    fn pop(&self, ctx: &Ctx) -> Result<Option<usize>> {
        let mut h = ctx.atomic_fetch(&self.head, 0, 0)?;
        loop {
            let top = h & LOW;
            if top == 0 {
                return Ok(None);
            }
            let id = top as usize - 1;
            let next = ctx.atomic_fetch(&self.next, id % self.per_pe, id / self.per_pe)?;
            let new = (h >> 32).wrapping_add(1) << 32 | next;
            let got = ctx.atomic_compare_swap(&self.head, 0, h, new, 0)?;
            if got == h {
                return Ok(Some(id));
            }
            h = got;
        }
    }

    /// Marks `id` held by this PE; it must have been held by nobody.
    fn take(&self, ctx: &Ctx, ck: &mut Check, id: usize) -> Result<()> {
        let before = ctx.atomic_fetch_inc(&self.holders, id % self.per_pe, id / self.per_pe)?;
        ck.ok_with("stack.popped_node_was_free", before == 0, || format!("node {id} popped while {before} other PE(s) held it"));
        Ok(())
    }

    fn give(&self, ctx: &Ctx, ck: &mut Check, id: usize) -> Result<()> {
        let before = ctx.atomic_fetch_add(&self.holders, id % self.per_pe, u64::MAX, id / self.per_pe)?;
        ck.ok_with("stack.pushed_node_was_held_once", before == 1, || format!("node {id} pushed back while {before} PE(s) held it"));
        Ok(())
    }
}

fn stack(ctx: &Ctx, ck: &mut Check, per_pe: usize, churn: usize) -> Result<()> {
    let (me, n) = (ctx.my_pe(), ctx.n_pes());
    let s = Stack { head: ctx.alloc(1)?, next: ctx.alloc(per_pe)?, holders: ctx.alloc(per_pe)?, per_pe };
    let drained = ctx.alloc::<u64>(n * per_pe + 1)?;
    let slot = ctx.alloc::<u64>(1)?;
    for i in 0..per_pe {
        s.push(ctx, me * per_pe + i)?;
    }
    ctx.barrier_all()?;
    let (mut popped, mut empty) = (0usize, 0usize);
    let mut hold = Vec::new();
    for r in 0..churn {
        for _ in 0..1 + (mix((me * churn + r) as u64) % 3) {
            match s.pop(ctx)? {
                Some(id) => {
                    s.take(ctx, ck, id)?;
                    hold.push(id);
                    popped += 1;
                }
                None => empty += 1,
            }
        }
        while let Some(id) = hold.pop() {
            s.give(ctx, ck, id)?;
            s.push(ctx, id)?;
        }
    }
    ctx.barrier_all()?;
    let mut mine = 0;
    while let Some(id) = s.pop(ctx)? {
        s.take(ctx, ck, id)?;
        let at = ctx.atomic_fetch_inc(&slot, 0, 0)? as usize;
        if !ck.ok("stack.drained_at_most_all", at < n * per_pe, format_args!("drained node {at} of the {} pushed", n * per_pe)) {
            break;
        }
        ctx.p(&drained, at, id as u64, 0)?;
        mine += 1;
    }
    ctx.barrier_all()?;
    if me == 0 {
        let count = slot.load(0)? as usize;
        let mut ids = drained.to_vec()?;
        ids.truncate(count);
        ids.sort_unstable();
        let intact = count == n * per_pe && ids.iter().enumerate().all(|(i, &v)| v == i as u64);
        let lost = (0..(n * per_pe) as u64).filter(|v| ids.binary_search(v).is_err()).count();
        let dups = ids.windows(2).filter(|w| w[0] == w[1]).count();
        let detail = if intact {
            format!("{} nodes on {n} PEs survived the churn: none lost, none duplicated", n * per_pe)
        } else {
            format!("drained {count} of {} nodes: {lost} lost, {dups} duplicated", n * per_pe)
        };
        ck.ok("stack.survived", intact, detail);
    }
    println!("PE {me}: stack: churn popped {popped} (found empty {empty} times), drained {mine}");
    ctx.barrier_all()
}

// ----- errors mode -----

fn errors(ctx: &Ctx, ck: &mut Check) -> Result<()> {
    let (me, n) = (ctx.my_pe(), ctx.n_pes());
    let x = ctx.alloc_from(&[7u64, 9])?;
    let small = ctx.alloc::<u32>(1)?;
    let right = (me + 1) % n;
    let rs = format!("PE {right}");
    ck.err(
        "errors.misaligned_u64_fetch_add",
        ctx.atomic_fetch_add_addr::<u64>(x.addr() + 4, 1, right),
        |e| matches!(e, Error::Misaligned { call: "atomic_fetch_add", arg: "dest", align: 8, .. }),
        &["atomic_fetch_add", "dest", "aligned to 8", &rs],
    );
    ck.err(
        "errors.misaligned_u32_compare_swap",
        ctx.atomic_compare_swap_addr::<u32>(x.addr() + 2, 0, 1, right),
        |e| matches!(e, Error::Misaligned { call: "atomic_compare_swap", align: 4, .. }),
        &["atomic_compare_swap", "dest", "aligned to 4", &rs],
    );
    let bad = format!("PE {n}");
    ck.err(
        "errors.pe_out_of_range",
        ctx.atomic_inc(&x, 0, n),
        |e| matches!(e, Error::PeOutOfRange { call: "atomic_inc", .. }),
        &["atomic_inc", &bad, &format!("0..{n}")],
    );
    let local = [0u64; 2];
    ck.err(
        "errors.target_off_the_heap",
        ctx.atomic_fetch_addr::<u64>(local.as_ptr() as usize, right),
        |e| matches!(e, Error::NotSymmetric { call: "atomic_fetch", arg: "source", .. }),
        &["atomic_fetch", "source", "not in the symmetric heap", &rs],
    );
    ck.err(
        "errors.u64_atomic_on_a_4_byte_allocation",
        ctx.atomic_swap_addr::<u64>(small.addr(), 1, right),
        |e| matches!(e, Error::OutOfBounds { call: "atomic_swap", .. }),
        &["atomic_swap", "dest", "past the end", &rs],
    );
    ck.err(
        "errors.index_past_the_end",
        ctx.atomic_fetch_xor(&x, 2, 1, right),
        |e| matches!(e, Error::OutOfBounds { call: "atomic_fetch_xor", .. }),
        &["atomic_fetch_xor", &rs],
    );
    let mut out = 0u64;
    ck.err(
        "errors.nbi_misaligned",
        ctx.atomic_fetch_inc_nbi_addr::<u64>(&mut out, x.addr() + 1, right),
        |e| matches!(e, Error::Misaligned { call: "atomic_fetch_inc_nbi", .. }),
        &["atomic_fetch_inc_nbi", &rs],
    );
    let ro = ctx.create_ctx(CtxOptions { nostore: true, ..Default::default() })?;
    ck.err(
        "errors.add_through_a_nostore_context",
        ro.atomic_add(&x, 0, 1, right),
        |e| matches!(e, Error::InvalidArgument { call: "atomic_add", arg: "ctx", .. }),
        &["atomic_add", "NOSTORE", &format!("PE {me}")],
    );
    ck.eq("errors.nostore_fetch", ro.atomic_fetch(&x, 1, right)?, 9, "fetch through a NOSTORE context");
    ro.destroy_ctx()?;
    ctx.barrier_all()?;
    ck.eq("errors.memory_unchanged", (x.to_vec()?, small.load(0)?), (vec![7, 9], 0), "memory after the refused atomics");
    ctx.barrier_all()
}

fn main() -> ExitCode {
    support::run_program("pe_amo", 1, |ctx, ck| {
        let args: Vec<String> = std::env::args().skip(1).collect();
        let num = |i: usize, default: u64| args.get(i).and_then(|a| a.parse().ok()).unwrap_or(default);
        match args.first().map(String::as_str).unwrap_or("table") {
            "table" => table(ctx, ck),
            "stress" => stress(ctx, ck, num(1, 100_000)),
            "tickets" => tickets(ctx, ck, num(1, 100_000) as usize),
            "stack" => stack(ctx, ck, num(1, 500) as usize, num(2, 2000) as usize),
            "errors" => errors(ctx, ck),
            other => Err(unknown_mode(ctx, "pe_amo", other)),
        }
    })
}
