//! Every collective on every team shape and size, checked against a sequential model
//! that each PE computes itself (see tests/coll_matrix.rs, which forces the algorithms
//! through RSHMEM_COLL_ALGO).
//!
//! Teams: the world, a strided team (PEs 1, 3, 5, ...), the rows and columns of a 2-D
//! split with 3 columns, single-PE teams, and teams of 3, 5 and 7 PEs where the world is
//! big enough. Sizes: 0, 1 element, odd counts, the staging boundary, 1 MiB. Cases run
//! back to back with no barrier between them, reusing the same buffers: each PE rewrites
//! its source and poisons its dest right after the previous collective returned.
//! Float results are compared bit for bit against the model in the documented order
//! (team-rank order; ring order for the ring algorithms).
//!
//! Checks, each over every team and size: `barrier`, `broadcast`, `fcollect`, `collect`,
//! `alltoalls`, `reduce.TYPE.OP` (every operator of every type of the reduction table),
//! `reduce_scatter`, `scan`, `typed.COLLECTIVE` (the `Sym<T>` forms), and with
//! `expect-hier` the `hier.*` checks of the decision tree (`expect-push`: `push.plan`, small
//! collectives pushed into inboxes, and `push.staged_plan`, 2 KiB ones into staging sets; `expect-rounds`: `rounds.plan`, a 64 KiB all-reduce
//! one-shot, pushed in rounds, on a world whose pairs all go through the network).
//! With `stream`, only `bcast.stream`: a long stream of broadcasts, every call checked.

#[path = "../support/mod.rs"]
mod support;

use rshmem::coll::chunk_range;
use rshmem::{Ctx, ReduceAlgo, ReduceDtype, ReduceOp, ReduceScatterAlgo, ReduceType, Result, Sym, Team, TeamConfig};
use std::fmt::Debug;
use std::process::ExitCode;
use support::Check;

const MIB: usize = 1 << 20;

/// Deterministic value source: the same on every PE.
fn hash(seed: u64, rank: usize, i: usize) -> u64 {
    let mut z = seed ^ (rank as u64).wrapping_mul(0x9E37_79B9_7F4A_7C15) ^ (i as u64).wrapping_mul(0xC2B2_AE3D_27D4_EB4F);
    z = (z ^ (z >> 30)).wrapping_mul(0xBF58_476D_1CE4_E5B9);
    z = (z ^ (z >> 27)).wrapping_mul(0x94D0_49BB_1331_11EB);
    z ^ (z >> 31)
}

/// Element types with the test's own (sequential) model of each operator.
trait Elem: ReduceType + Copy + Debug {
    fn gen(h: u64, op: ReduceOp) -> Self;
    fn apply(op: ReduceOp, a: Self, b: Self) -> Self;
    fn same(a: Self, b: Self) -> bool;
}

macro_rules! int_elem {
    ($($t:ty),*) => { $(impl Elem for $t {
        fn gen(h: u64, _op: ReduceOp) -> Self { h as $t }
        fn apply(op: ReduceOp, a: Self, b: Self) -> Self {
            match op {
                ReduceOp::And => a & b,
                ReduceOp::Or => a | b,
                ReduceOp::Xor => a ^ b,
                ReduceOp::Max => if a > b { a } else { b },
                ReduceOp::Min => if a < b { a } else { b },
                ReduceOp::Sum => a.wrapping_add(b),
                ReduceOp::Prod => a.wrapping_mul(b),
            }
        }
        fn same(a: Self, b: Self) -> bool { a == b }
    })* };
}
int_elem!(i8, i16, i32, i64, isize, u8, u16, u32, u64, usize);

macro_rules! float_elem {
    ($($t:ty),*) => { $(impl Elem for $t {
        fn gen(h: u64, op: ReduceOp) -> Self {
            if op == ReduceOp::Prod {
                (1.0 + ((h % 4001) as f64 - 2000.0) / 9000.0) as $t
            } else {
                (((h % 2_000_001) as f64 - 1_000_000.0) / 977.0) as $t
            }
        }
        fn apply(op: ReduceOp, a: Self, b: Self) -> Self {
            match op {
                ReduceOp::Max => a.max(b),
                ReduceOp::Min => a.min(b),
                ReduceOp::Sum => a + b,
                ReduceOp::Prod => a * b,
                _ => unreachable!("bitwise op on a float"),
            }
        }
        fn same(a: Self, b: Self) -> bool { a.to_bits() == b.to_bits() }
    })* };
}
float_elem!(f32, f64);

/// A team this PE belongs to, with a name for messages.
struct TeamCase {
    name: String,
    team: Team,
    size: usize,
    me: usize,
}

/// Shared buffers, the values' seed and the checks of the run.
struct Env<'a> {
    ctx: Ctx,
    src: Sym<u8>,
    dst: Sym<u8>,
    seed: u64,
    ck: &'a mut Check,
}

impl Env<'_> {
    fn next_seed(&mut self) -> u64 {
        self.seed = hash(self.seed, 7, 11);
        self.seed
    }

    fn write<T: bytemuck::Pod>(&self, addr: usize, vals: &[T]) -> Result<()> {
        self.ctx.putmem(addr, bytemuck::cast_slice(vals), self.ctx.my_pe())
    }

    fn read<T: bytemuck::Pod + ReduceType>(&self, addr: usize, n: usize) -> Result<Vec<T>> {
        let mut v = vec![T::ZERO; n];
        self.ctx.getmem(bytemuck::cast_slice_mut(&mut v), addr, self.ctx.my_pe())?;
        Ok(v)
    }

    fn poison(&self, addr: usize, nbytes: usize) -> Result<()> {
        self.ctx.putmem(addr, &vec![0xA5u8; nbytes], self.ctx.my_pe())
    }

    /// Check `name`: the collective `what` gave `got` on team `tc`, where the model says `want`.
    fn compare<T: Elem>(&mut self, tc: &TeamCase, name: &str, what: &str, got: &[T], want: &[T]) {
        let on = format!("team {} of {} PEs, rank {}", tc.name, tc.size, tc.me);
        let detail = match (0..want.len()).find(|&i| !T::same(got[i], want[i])) {
            None => format!("{what} on {on}"),
            Some(i) => {
                let bad = (0..want.len()).filter(|&i| !T::same(got[i], want[i])).count();
                format!(
                    "{what} on {on}: element {i} is {:?}, the model says {:?} ({bad} of {} elements differ)",
                    got[i],
                    want[i],
                    want.len()
                )
            }
        };
        self.ck.ok(name, got.len() == want.len() && (0..want.len()).all(|i| T::same(got[i], want[i])), detail);
    }
}

fn vals<T: Elem>(seed: u64, rank: usize, count: usize, op: ReduceOp) -> Vec<T> {
    (0..count).map(|i| T::gen(hash(seed, rank, i), op)).collect()
}

/// The model: element `e` combined over `order(e)`.
fn model<T: Elem>(seed: u64, op: ReduceOp, count: usize, order: impl Fn(usize) -> Vec<usize>, offset: usize) -> Vec<T> {
    (0..count)
        .map(|e| {
            let ranks = order(e);
            let v = |r: usize| T::gen(hash(seed, r, offset + e), op);
            ranks[1..].iter().fold(v(ranks[0]), |acc, &r| T::apply(op, acc, v(r)))
        })
        .collect()
}

/// The hierarchical all-reduce's order: each host's members in rank order, then the
/// host partials in host order.
fn hier_model<T: Elem>(seed: u64, op: ReduceOp, count: usize, hosts: &[Vec<usize>]) -> Vec<T> {
    let partials: Vec<Vec<T>> = hosts.iter().map(|g| model(seed, op, count, |_| g.clone(), 0)).collect();
    (0..count).map(|e| partials[1..].iter().fold(partials[0][e], |acc, p| T::apply(op, acc, p[e]))).collect()
}

fn ring_order(n: usize, k: usize) -> Vec<usize> {
    (1..=n).map(|d| (k + d) % n).collect()
}

// ----- cases -----

fn barrier_case(env: &mut Env, tc: &TeamCase, flags: &Sym<u64>, world: &[usize], region: usize) -> Result<()> {
    // Two halves so a fast PE's next round cannot overwrite what a slow PE still checks;
    // a region per team, since PEs reach the teams at different times.
    for round in 1..=12u64 {
        let half = region * 128 + (round % 2) as usize * 64;
        for &pe in world {
            env.ctx.p(flags, half + tc.me, round, pe)?;
        }
        if round % 3 == 0 {
            env.ctx.sync(tc.team)?;
        } else {
            env.ctx.barrier(tc.team)?;
        }
        let flags: Vec<u64> = (0..tc.size).map(|k| flags.load(half + k)).collect::<Result<_>>()?;
        env.compare(tc, "barrier", &format!("flags of every rank after barrier round {round}"), &flags, &vec![round; tc.size]);
    }
    Ok(())
}

fn broadcast_case<T: Elem>(env: &mut Env, tc: &TeamCase, count: usize, root: usize, in_place: bool) -> Result<()> {
    let seed = env.next_seed();
    let sz = std::mem::size_of::<T>();
    let mine: Vec<T> = vals(seed, tc.me, count, ReduceOp::Sum);
    env.write(env.src.addr(), &mine)?;
    let dest = if in_place { env.src.addr() } else { env.dst.addr() };
    if !in_place {
        env.poison(dest, count * sz)?;
    }
    env.ctx.broadcastmem(tc.team, dest, env.src.addr(), count * sz, root)?;
    let got: Vec<T> = env.read(dest, count)?;
    let want: Vec<T> = vals(seed, root, count, ReduceOp::Sum);
    env.compare(tc, "broadcast", &format!("broadcast<{}> of {count} from root {root} (in place: {in_place})", T::NAME), &got, &want);
    Ok(())
}

fn fcollect_case<T: Elem>(env: &mut Env, tc: &TeamCase, count: usize) -> Result<()> {
    let seed = env.next_seed();
    let sz = std::mem::size_of::<T>();
    env.write(env.src.addr(), &vals::<T>(seed, tc.me, count, ReduceOp::Sum))?;
    env.poison(env.dst.addr(), count * sz * tc.size)?;
    env.ctx.fcollectmem(tc.team, env.dst.addr(), env.src.addr(), count * sz)?;
    let got: Vec<T> = env.read(env.dst.addr(), count * tc.size)?;
    let want: Vec<T> = (0..tc.size).flat_map(|r| vals::<T>(seed, r, count, ReduceOp::Sum)).collect();
    env.compare(tc, "fcollect", &format!("fcollect<{}> of {count} per PE", T::NAME), &got, &want);
    Ok(())
}

fn collect_case<T: Elem>(env: &mut Env, tc: &TeamCase, count_of: impl Fn(usize) -> usize) -> Result<()> {
    let seed = env.next_seed();
    let sz = std::mem::size_of::<T>();
    let total: usize = (0..tc.size).map(&count_of).sum();
    env.write(env.src.addr(), &vals::<T>(seed, tc.me, count_of(tc.me), ReduceOp::Sum))?;
    env.poison(env.dst.addr(), total * sz)?;
    env.ctx.collectmem(tc.team, env.dst.addr(), env.src.addr(), count_of(tc.me) * sz)?;
    let got: Vec<T> = env.read(env.dst.addr(), total)?;
    let want: Vec<T> = (0..tc.size).flat_map(|r| vals::<T>(seed, r, count_of(r), ReduceOp::Sum)).collect();
    env.compare(tc, "collect", &format!("collect<{}> of {total} in all ({} on this PE)", T::NAME, count_of(tc.me)), &got, &want);
    Ok(())
}

fn alltoall_case<T: Elem>(env: &mut Env, tc: &TeamCase, count: usize, dst: usize, sst: usize) -> Result<()> {
    let seed = env.next_seed();
    let sz = std::mem::size_of::<T>();
    let n = tc.size;
    let span = |stride: usize| if n * count == 0 { 0 } else { (n * count - 1) * stride + 1 };
    // Element m of the block for member j is source[(j*count + m)*sst] = value (me, j*count+m).
    let mut src = vec![T::ZERO; span(sst)];
    let mine: Vec<T> = vals(seed, tc.me, n * count, ReduceOp::Sum);
    for (i, v) in mine.iter().enumerate() {
        src[i * sst] = *v;
    }
    env.write(env.src.addr(), &src)?;
    env.poison(env.dst.addr(), span(dst) * sz)?;
    if dst == 1 && sst == 1 {
        env.ctx.alltoallmem(tc.team, env.dst.addr(), env.src.addr(), count * sz)?;
    } else {
        env.ctx.alltoalls_addr(tc.team, env.dst.addr(), env.src.addr(), dst, sst, count, sz)?;
    }
    let got: Vec<T> = env.read(env.dst.addr(), span(dst))?;
    let got: Vec<T> = (0..n * count).map(|i| got[i * dst]).collect();
    // Block i of dest comes from member i: its elements me*count .. me*count+count.
    let want: Vec<T> =
        (0..n).flat_map(|i| vals::<T>(seed, i, n * count, ReduceOp::Sum)[tc.me * count..(tc.me + 1) * count].to_vec()).collect();
    env.compare(tc, "alltoalls", &format!("alltoalls<{}> of {count} per PE, dst {dst}, sst {sst}", T::NAME), &got, &want);
    Ok(())
}

fn reduce_case<T: Elem>(env: &mut Env, tc: &TeamCase, count: usize, op: ReduceOp, in_place: bool) -> Result<()> {
    let seed = env.next_seed();
    let sz = std::mem::size_of::<T>();
    let n = tc.size;
    env.write(env.src.addr(), &vals::<T>(seed, tc.me, count, op))?;
    let dest = if in_place { env.src.addr() } else { env.dst.addr() };
    if !in_place {
        env.poison(dest, count * sz)?;
    }
    env.ctx.reduce_addr(tc.team, dest, env.src.addr(), count, T::DTYPE, op)?;
    let got: Vec<T> = env.read(dest, count)?;
    let algo = env.ctx.coll_plan(tc.team, count * sz)?.reduce;
    let want: Vec<T> = if algo == ReduceAlgo::Ring && n > 1 {
        model(seed, op, count, |e| ring_order(n, (0..n).find(|&k| chunk_range(count, n, k).contains(&e)).unwrap()), 0)
    } else if algo == ReduceAlgo::Hier && n > 1 {
        hier_model(seed, op, count, &env.ctx.team_hosts(tc.team)?)
    } else {
        model(seed, op, count, |_| (0..n).collect(), 0)
    };
    let name = format!("reduce.{}.{}", T::DTYPE.name(), op.name());
    env.compare(tc, &name, &format!("reduce<{}> {op:?} of {count} ({algo:?}, in place: {in_place})", T::NAME), &got, &want);
    Ok(())
}

fn reduce_scatter_case<T: Elem>(env: &mut Env, tc: &TeamCase, count: usize, op: ReduceOp) -> Result<()> {
    let seed = env.next_seed();
    let sz = std::mem::size_of::<T>();
    let n = tc.size;
    env.write(env.src.addr(), &vals::<T>(seed, tc.me, n * count, op))?;
    env.poison(env.dst.addr(), count * sz)?;
    env.ctx.reduce_scatter_addr(tc.team, env.dst.addr(), env.src.addr(), count, T::DTYPE, op)?;
    let got: Vec<T> = env.read(env.dst.addr(), count)?;
    let algo = env.ctx.coll_plan(tc.team, count * sz)?.reduce_scatter;
    let me = tc.me;
    let want: Vec<T> = if algo == ReduceScatterAlgo::Ring && n > 1 {
        model(seed, op, count, |_| ring_order(n, me), me * count)
    } else {
        model(seed, op, count, |_| (0..n).collect(), me * count)
    };
    env.compare(tc, "reduce_scatter", &format!("reduce_scatter<{}> {op:?} of {count} per block ({algo:?})", T::NAME), &got, &want);
    Ok(())
}

fn scan_case<T: Elem>(env: &mut Env, tc: &TeamCase, count: usize, exclusive: bool, in_place: bool) -> Result<()> {
    let seed = env.next_seed();
    let sz = std::mem::size_of::<T>();
    env.write(env.src.addr(), &vals::<T>(seed, tc.me, count, ReduceOp::Sum))?;
    let dest = if in_place { env.src.addr() } else { env.dst.addr() };
    if !in_place {
        env.poison(dest, count * sz)?;
    }
    env.ctx.sum_scan_addr(tc.team, dest, env.src.addr(), count, T::DTYPE, exclusive)?;
    let got: Vec<T> = env.read(dest, count)?;
    let upto = if exclusive { tc.me } else { tc.me + 1 };
    let want: Vec<T> = if upto == 0 { vec![T::ZERO; count] } else { model(seed, ReduceOp::Sum, count, |_| (0..upto).collect(), 0) };
    env.compare(
        tc,
        "scan",
        &format!("sum_{}scan<{}> of {count} (in place: {in_place})", if exclusive { "ex" } else { "in" }, T::NAME),
        &got,
        &want,
    );
    Ok(())
}

fn reduce_all_ops<T: Elem>(env: &mut Env, tc: &TeamCase, counts: &[usize]) -> Result<()> {
    for op in ReduceOp::ALL {
        if T::DTYPE.supports(op) {
            for &c in counts {
                reduce_case::<T>(env, tc, c, op, false)?;
            }
        }
    }
    Ok(())
}

fn team_cases(env: &mut Env, tc: &TeamCase, flags: &Sym<u64>, world: &[usize], region: usize, big: bool) -> Result<()> {
    let n = tc.size;
    barrier_case(env, tc, flags, world, region)?;
    // broadcast
    for &count in &[0usize, 1, 7, 1001] {
        for root in [0, n - 1, n / 2] {
            broadcast_case::<u8>(env, tc, count, root, false)?;
        }
        broadcast_case::<f64>(env, tc, count, n / 2, false)?;
        broadcast_case::<i32>(env, tc, count, n - 1, true)?;
    }
    broadcast_case::<u64>(env, tc, 2048, 0, false)?; // exactly one staging set
    broadcast_case::<u64>(env, tc, 2049, n - 1, false)?;
    // fcollect / collect
    for &count in &[0usize, 1, 7, 333] {
        fcollect_case::<u8>(env, tc, count)?;
        fcollect_case::<i64>(env, tc, count)?;
    }
    fcollect_case::<i64>(env, tc, 1024)?; // half a staging set: a staging part on 3 PEs over a network
    fcollect_case::<i64>(env, tc, 2048)?; // a whole staging set: the part of 2 PEs over a network
    collect_case::<u16>(env, tc, |r| (r * 7 + 3) % 11)?;
    collect_case::<f64>(env, tc, |r| if r % 2 == 0 { 0 } else { 2 * r + 1 })?;
    collect_case::<u8>(env, tc, |_| 0)?;
    collect_case::<u32>(env, tc, |r| if r == 0 { 1 } else { 0 })?;
    // alltoall(s)
    for &count in &[0usize, 1, 7, 129] {
        alltoall_case::<u16>(env, tc, count, 1, 1)?;
        alltoall_case::<f64>(env, tc, count, 1, 1)?;
    }
    for (dst, sst) in [(2, 3), (3, 1), (1, 2)] {
        alltoall_case::<u32>(env, tc, 5, dst, sst)?;
        alltoall_case::<u8>(env, tc, 1, dst, sst)?;
    }
    // reductions over the whole type table
    for dtype in ReduceDtype::ALL {
        let counts: &[usize] = if dtype.is_float() { &[1, 7, 1001] } else { &[1, 7] };
        rshmem::with_reduce_type!(dtype, T => reduce_all_ops::<T>(env, tc, counts))?;
    }
    reduce_case::<u64>(env, tc, 0, ReduceOp::Sum, false)?;
    reduce_case::<f64>(env, tc, 2048, ReduceOp::Sum, false)?; // exactly one staging set
    reduce_case::<f64>(env, tc, 2049, ReduceOp::Sum, false)?;
    reduce_case::<f64>(env, tc, 37, ReduceOp::Sum, true)?;
    reduce_case::<f64>(env, tc, 1024, ReduceOp::Sum, true)?; // a staging part on 3 PEs over a network
    reduce_case::<f64>(env, tc, 2048, ReduceOp::Max, true)?; // the whole set, 2 PEs' part, in place
    reduce_case::<i16>(env, tc, 1001, ReduceOp::Prod, true)?;
    reduce_case::<f32>(env, tc, 5000, ReduceOp::Prod, true)?;
    // reduce_scatter
    for &count in &[0usize, 1, 7, 1001] {
        reduce_scatter_case::<f64>(env, tc, count, ReduceOp::Sum)?;
        reduce_scatter_case::<i32>(env, tc, count, ReduceOp::Max)?;
        reduce_scatter_case::<u8>(env, tc, count, ReduceOp::Xor)?;
    }
    reduce_scatter_case::<f32>(env, tc, 4097, ReduceOp::Prod)?;
    // scans
    for &count in &[0usize, 1, 7, 1001] {
        for exclusive in [false, true] {
            scan_case::<i64>(env, tc, count, exclusive, false)?;
            scan_case::<f64>(env, tc, count, exclusive, false)?;
            scan_case::<u8>(env, tc, count, exclusive, false)?;
        }
    }
    scan_case::<f32>(env, tc, 7, false, true)?;
    scan_case::<i32>(env, tc, 3001, true, true)?;
    if big {
        // 1 MiB per PE.
        broadcast_case::<u8>(env, tc, MIB, 1 % n, false)?;
        broadcast_case::<f64>(env, tc, MIB / 8, n - 1, true)?;
        fcollect_case::<u64>(env, tc, MIB / 8)?;
        collect_case::<u32>(env, tc, |r| (MIB / 4) * (r % 3) / 2)?;
        alltoall_case::<u64>(env, tc, MIB / 8 / n, 1, 1)?;
        reduce_case::<f64>(env, tc, MIB / 8, ReduceOp::Sum, false)?;
        reduce_case::<u32>(env, tc, MIB / 4 + 3, ReduceOp::Or, true)?;
        reduce_case::<i64>(env, tc, MIB / 8, ReduceOp::Min, false)?;
        reduce_scatter_case::<f64>(env, tc, MIB / 8 / n, ReduceOp::Sum)?;
        scan_case::<f64>(env, tc, MIB / 8, false, false)?;
        scan_case::<u16>(env, tc, MIB / 2, true, true)?;
    }
    Ok(())
}

/// Checks that the decision tree picks the hierarchical forms on the world team (run
/// with `expect-hier` where the world spans hosts with several PEs on some host).
fn expect_hier(ctx: &Ctx, ck: &mut Check) -> Result<()> {
    use rshmem::coll::{BarrierAlgo, BroadcastAlgo, GatherAlgo};
    let hosts = ctx.team_hosts(Team::WORLD)?;
    for bytes in [8, 64 << 10, MIB] {
        let p = ctx.coll_plan(Team::WORLD, bytes)?;
        let hier = p.barrier == BarrierAlgo::Hier
            && p.broadcast == BroadcastAlgo::Hier
            && (p.fcollect, p.collect) == (GatherAlgo::Hier, GatherAlgo::Hier)
            && p.reduce == ReduceAlgo::Hier;
        let detail = if hier {
            format!("the decision tree picks the hierarchical forms on hosts {hosts:?}")
        } else {
            format!("expected the hierarchical forms for {bytes} bytes on hosts {hosts:?}, the plan is {p:?}")
        };
        ck.ok("hier.plan", hier && hosts.len() >= 2, detail);
    }
    // Only PEs of this host are mapped (a pointer), and SHARED is this host's PEs.
    let me = ctx.my_pe();
    let mine = hosts.iter().find(|h| h.contains(&me)).cloned().unwrap_or_default();
    let probe = ctx.alloc::<u64>(1)?;
    let mapped: Vec<usize> = (0..ctx.n_pes()).filter(|&pe| ctx.ptr(&probe, pe).is_some()).collect();
    ck.eq("hier.mapped", mapped, mine.clone(), "the PEs with a pointer are this PE's host");
    let strided = mine.windows(2).all(|w| w[1] - w[0] == mine[1.min(mine.len() - 1)] - mine[0]);
    let want = if strided { mine.len() } else { 1 };
    ck.eq(
        "hier.shared",
        ctx.team_n_pes(Team::SHARED)?,
        want,
        format_args!("SHARED is the host's PEs {mine:?} (1 PE if they are not evenly strided)"),
    );
    ctx.free(probe)
}

/// The typed (`Sym<T>`) forms, once each, on the world team.
fn typed_api(env: &mut Env) -> Result<()> {
    let ctx = env.ctx.clone();
    let (me, n) = (ctx.my_pe(), ctx.n_pes());
    let tc = TeamCase { name: "world (typed API)".into(), team: Team::WORLD, size: n, me };
    let a = ctx.alloc::<f64>(4 * n)?;
    let b = ctx.alloc::<f64>(4 * n)?;
    a.copy_from(0, &[me as f64 + 0.5, 2.0, -(me as f64), 1.0])?;
    ctx.reduce(Team::WORLD, &b, &a, 4, ReduceOp::Sum)?;
    let s: f64 = (0..n).map(|p| p as f64 + 0.5).sum();
    env.compare(&tc, "typed.reduce", "typed reduce", &b.to_vec()?[..4], &[s, 2.0 * n as f64, -((0..n).sum::<usize>() as f64), n as f64]);
    ctx.reduce(Team::WORLD, &a, &a, 1, ReduceOp::Max)?;
    env.compare(&tc, "typed.reduce_in_place", "typed in-place reduce", &a.to_vec()?[..1], &[n as f64 - 0.5]);
    a.copy_from(0, &[me as f64; 4])?;
    ctx.broadcast(Team::WORLD, &b, &a, 3, n - 1)?;
    env.compare(&tc, "typed.broadcast", "typed broadcast", &b.to_vec()?[..3], &[(n - 1) as f64; 3]);
    ctx.fcollect(Team::WORLD, &b, &a, 2)?;
    let want: Vec<f64> = (0..n).flat_map(|p| [p as f64; 2]).collect();
    env.compare(&tc, "typed.fcollect", "typed fcollect", &b.to_vec()?[..2 * n], &want);
    ctx.collect(Team::WORLD, &b, &a, me % 2)?;
    let want: Vec<f64> = (0..n).filter(|p| p % 2 == 1).map(|p| p as f64).collect();
    env.compare(&tc, "typed.collect", "typed collect", &b.to_vec()?[..want.len()], &want);
    let src: Vec<f64> = (0..n).map(|j| (me * 100 + j) as f64).collect();
    a.copy_from(0, &src)?;
    ctx.alltoall(Team::WORLD, &b, &a, 1)?;
    let want: Vec<f64> = (0..n).map(|i| (i * 100 + me) as f64).collect();
    env.compare(&tc, "typed.alltoall", "typed alltoall", &b.to_vec()?[..n], &want);
    ctx.alltoalls(Team::WORLD, &b, &a, 2, 1, 1)?;
    let all = b.to_vec()?;
    let got: Vec<f64> = (0..n).map(|i| all[2 * i]).collect();
    env.compare(&tc, "typed.alltoalls", "typed alltoalls", &got, &want);
    let ints = ctx.alloc::<i64>(2 * n)?;
    let out = ctx.alloc::<i64>(2 * n)?;
    ints.copy_from(0, &(0..2 * n).map(|i| (i + me) as i64).collect::<Vec<_>>())?;
    ctx.reduce_scatter(Team::WORLD, &out, &ints, 2, ReduceOp::Sum)?;
    let tri = (0..n).sum::<usize>() as i64;
    env.compare(
        &tc,
        "typed.reduce_scatter",
        "typed reduce_scatter",
        &out.to_vec()?[..2],
        &[(2 * me * n) as i64 + tri, (2 * me * n + n) as i64 + tri],
    );
    ints.copy_from(0, &[me as i64 + 1])?;
    ctx.sum_inscan(Team::WORLD, &out, &ints, 1)?;
    env.compare(&tc, "typed.sum_inscan", "typed sum_inscan", &out.to_vec()?[..1], &[((me + 1) * (me + 2) / 2) as i64]);
    ctx.sum_exscan(Team::WORLD, &out, &ints, 1)?;
    env.compare(&tc, "typed.sum_exscan", "typed sum_exscan", &out.to_vec()?[..1], &[(me * (me + 1) / 2) as i64]);
    Ok(())
}

/// `bcast.stream`: 600 broadcasts back to back on the world, roots in turn and in runs of
/// 40 calls of one root (which may then run ahead of its members), sizes through every
/// form (inbox, the staging ring's slot sizes over the staging area and the world team's
/// ring extension, past the ring's largest slot), members that fall behind now and then,
/// sources overwritten as soon as a call returns; every call checked.
fn broadcast_stream(ctx: &Ctx, ck: &mut Check) -> Result<()> {
    const SIZES: [usize; 11] = [8, 1016, 1017, 2048, 4096, 8192, 16384, 16385, 32768, 32769, 64];
    const ROOM: usize = 64 << 10;
    let (me, n) = (ctx.my_pe(), ctx.n_pes());
    let src = ctx.alloc::<u8>(ROOM)?;
    let dst = ctx.alloc::<u8>(ROOM)?;
    let byte = |it: usize, k: usize| (it * 31 + k * 7 + 1) as u8;
    let mut wrong = None;
    let calls = 600;
    for it in 0..calls {
        let root = if it % 80 < 40 { it % n } else { (it / 80) % n };
        let bytes = SIZES[it % SIZES.len()];
        if me == root {
            src.copy_from(0, &(0..bytes).map(|k| byte(it, k)).collect::<Vec<u8>>())?;
        } else if (it * (me + 3)) % 37 == 0 {
            std::thread::sleep(std::time::Duration::from_millis(2));
        }
        ctx.broadcastmem(Team::WORLD, dst.addr(), src.addr(), bytes, root)?;
        src.copy_from(0, &vec![0xEE; ROOM])?;
        let got = dst.to_vec()?;
        if let Some(k) = (0..bytes).find(|&k| got[k] != byte(it, k)) {
            wrong.get_or_insert(format!("call {it} ({bytes} B from PE {root}): byte {k} is {} (want {})", got[k], byte(it, k)));
        }
        dst.copy_from(0, &vec![0u8; ROOM])?;
    }
    ctx.barrier_all()?;
    let detail = wrong.unwrap_or_else(|| format!("{calls} broadcasts on {n} PEs arrived, each checked"));
    ck.ok("bcast.stream", !detail.contains("byte"), detail);
    Ok(())
}

fn run(ctx: &Ctx, ck: &mut Check, args: &[String]) -> Result<()> {
    let n = ctx.n_pes();
    if args.iter().any(|a| a == "stream") {
        return broadcast_stream(ctx, ck);
    }
    if args.iter().any(|a| a == "expect-hier") {
        expect_hier(ctx, ck)?;
    }
    if args.iter().any(|a| a == "expect-push") {
        let p = ctx.coll_plan(Team::WORLD, 8)?;
        let push =
            (p.broadcast, p.fcollect, p.reduce) == (rshmem::coll::BroadcastAlgo::Push, rshmem::coll::GatherAlgo::Push, ReduceAlgo::Push);
        ck.ok("push.plan", push, format!("8-byte broadcast, fcollect and all-reduce pushed into inboxes; the plan is {p:?}"));
        // Past an inbox part, over the network: pushed into the members' staging sets.
        let p = ctx.coll_plan(Team::WORLD, 2048)?;
        let staged = (p.fcollect, p.reduce) == (rshmem::coll::GatherAlgo::Push, ReduceAlgo::Push);
        ck.ok("push.staged_plan", staged, format!("2 KiB fcollect and all-reduce pushed into staging sets; the plan is {p:?}"));
    }
    if args.iter().any(|a| a == "expect-rounds") {
        let p = ctx.coll_plan(Team::WORLD, 64 << 10)?;
        ck.ok("rounds.plan", p.reduce == ReduceAlgo::OneShot, format!("64 KiB all-reduce one-shot over the network; the plan is {p:?}"));
    }
    let big = !args.iter().any(|a| a == "small");
    // Buffers big enough for 1 MiB per PE gathered from every PE.
    let room = (n * MIB).max(4 * MIB) + 4096;
    let src = ctx.alloc_aligned::<u8>(room, 64)?;
    let dst = ctx.alloc_aligned::<u8>(room, 64)?;
    let flags = ctx.alloc::<u64>(16 * 128)?;
    let mut env = Env { ctx: ctx.clone(), src, dst, seed: 12345, ck };

    // Teams, created collectively in one order on every PE.
    let cfg = TeamConfig::default();
    let mut teams: Vec<(String, Team)> = vec![("world".into(), Team::WORLD)];
    if n >= 3 {
        teams.push(("strided 1+2i".into(), ctx.team_split_strided(Team::WORLD, 1, 2, n / 2, cfg)?));
    }
    let (row, col) = ctx.team_split_2d(Team::WORLD, 3, cfg, cfg)?;
    teams.push(("2-D row".into(), row));
    teams.push(("2-D column".into(), col));
    let (single, all) = ctx.team_split_2d(Team::WORLD, 1, cfg, cfg)?;
    teams.push(("single PE".into(), single));
    for (k, start) in [(3, 0), (5, 1), (7, 0)] {
        if k < n && start + k <= n {
            teams.push((format!("{k} PEs from {start}"), ctx.team_split_strided(Team::WORLD, start, 1, k, cfg)?));
        }
    }
    for (region, (name, team)) in teams.iter().enumerate() {
        if team.is_invalid() {
            continue;
        }
        let (start, stride, size) = ctx.team_layout(*team)?;
        let world: Vec<usize> = (0..size).map(|i| start + i * stride).collect();
        let tc = TeamCase { name: name.clone(), team: *team, size, me: ctx.team_my_pe(*team)? };
        // 1 MiB cases on the world and on one smaller team of several PEs.
        let big_here = big && (name == "world" || name == "2-D column");
        // Members reach a team after different teams of their own: restart the values.
        env.seed = hash(99, region, 0);
        team_cases(&mut env, &tc, &flags, &world, region, big_here)?;
    }
    typed_api(&mut env)?;
    ctx.barrier_all()?;
    for (_, team) in teams.into_iter().skip(1).chain([("".to_string(), all)]) {
        if !team.is_invalid() {
            ctx.team_destroy(team)?;
        }
    }
    ctx.barrier_all()
}

fn main() -> ExitCode {
    support::run_program("pe_coll", 1, |ctx, ck| {
        let args: Vec<String> = std::env::args().skip(1).collect();
        run(ctx, ck, &args)
    })
}
