//! GPU collectives, checked against a sequential model on every PE: every collective
//! (reduce, reduce_scatter, broadcast, fcollect, alltoall) at every scope (thread, warp,
//! block, grid, on-stream) under every protocol (forced simple, LL, LL128, and auto) at
//! odd sizes and sizes around the protocol thresholds up to 1 MiB, several element types
//! and operators, on the world team and (with 4 PEs or more) a strided team. No barrier
//! separates the checks: each call's inputs differ from the last, its sources are
//! rewritten right after it, and bytes past the expected end of dest must stay untouched.
//! Then back-to-back all-reduces inside one kernel at each scope and protocol, eight
//! on-stream collectives in flight on two streams of one team (one stream held back on
//! odd PEs), and an on-stream all-reduce replayed from a captured CUDA graph.
//! With a peer this PE has no pointer to (another host, or `RSHMEM_TRANSPORT=ucx`), every
//! call takes the proxy protocol whatever is forced: the matrix then runs once per scope
//! (auto), and the two-stream check, which needs concurrent calls on one team, is left out.
//! `--bench` adds on-stream all-reduce and all-to-all latency per protocol (8 B..64 KiB)
//! and bandwidth up to 256 MiB (`--anchor nvshmem.txt` for ratios against RESULT lines).
//! Prints a verdict line per check as it is made (tests/support: `RSHMEM-CHECK ...`) and a
//! summary per PE; exits non-zero if any check failed.
//! `rshmemrun -n 2 gpu_coll [--bench] [--anchor FILE]`

#![allow(clippy::needless_range_loop)]

use half::bf16;
use rshmem::coll::gpu::DeviceReduceType;
use rshmem::coll::gpu_select::{GpuProto, LL128_MAX, LL_MAX};
#[path = "../support/gpu.rs"]
mod gpu_support;
#[path = "../support/mod.rs"]
mod support;
use gpu_support::run_gpu_program;
use rshmem::gpu::{Gpu, KernelArg as A, LaunchConfig, Module};
use rshmem::{Ctx, ReduceOp, Sym, SymType, Team, TeamConfig};
use support::Check;

const SRC: &str = include_str!("coll.cu");
const SCOPES: [&str; 5] = ["thread", "warp", "block", "grid", "stream"];
const PROTOS: [GpuProto; 4] = [GpuProto::Simple, GpuProto::Ll, GpuProto::Ll128, GpuProto::Auto];
/// Sentinel past the end of dest.
const GUARD: usize = 16;

struct Env<'a> {
    ctx: &'a Ctx,
    g: &'a Gpu,
    m: &'a Module,
    sms: u32,
    /// Changes every check, so no call can pass on a previous call's data.
    salt: usize,
}

impl Env<'_> {
    /// Runs a test kernel at device scope `scope` (0 thread .. 3 grid) and waits for it.
    fn run(&self, kernel: &str, scope: usize, args: &[A], what: &str) {
        let cfg = match scope {
            0 | 1 => LaunchConfig::new(1, 64),
            2 => LaunchConfig::new(1, 256),
            _ => LaunchConfig { cooperative: true, ..LaunchConfig::new(self.sms, 256) },
        };
        // SAFETY: argument kinds match the kernels of tests/gpu/coll.cu; addresses are
        // of live symmetric allocations sized for the collective.
        unsafe { self.m.launch(kernel, cfg, None, args) }.unwrap_or_else(|e| panic!("{what}: launch: {e}"));
        self.g.synchronize().unwrap_or_else(|e| panic!("{what} failed on PE {}: {e}", self.ctx.my_pe()));
    }

    fn stream_done(&self, what: &str) {
        self.g.stream().synchronize().unwrap_or_else(|e| panic!("{what} failed on PE {}: {e}", self.ctx.my_pe()));
    }
}

fn mix(pe: usize, i: usize, salt: usize) -> usize {
    let mut x = (pe as u64).wrapping_mul(0x9E37_79B9_7F4A_7C15)
        ^ (i as u64).wrapping_mul(0xC2B2_AE3D_27D4_EB4F)
        ^ (salt as u64).wrapping_mul(0x1656_67B1_9E37_79F9);
    x ^= x >> 29;
    x = x.wrapping_mul(0xBF58_476D_1CE4_E5B9);
    (x ^ (x >> 32)) as usize
}

/// One element type of the reduction checks: inputs and the model's operator.
trait Elem: SymType + DeviceReduceType + PartialEq + Copy + std::fmt::Debug {
    /// The device type code of tests/gpu/coll.cu's `red` kernel.
    const DTYPE: i32;
    fn input(pe: usize, i: usize, salt: usize, op: ReduceOp) -> Self;
    fn sentinel() -> Self;
    /// Folds a rank-ordered list the way the device does.
    fn fold(vals: &[Self], op: ReduceOp) -> Self;
}

impl Elem for f32 {
    const DTYPE: i32 = 0;
    fn input(pe: usize, i: usize, salt: usize, _: ReduceOp) -> f32 {
        (mix(pe, i, salt) % 1000) as f32 / 8.0 - 60.0
    }
    fn sentinel() -> f32 {
        -12345.5
    }
    fn fold(v: &[f32], op: ReduceOp) -> f32 {
        v[1..].iter().fold(v[0], |a, &b| match op {
            ReduceOp::Sum => a + b,
            ReduceOp::Min => {
                if b < a {
                    b
                } else {
                    a
                }
            }
            ReduceOp::Max => {
                if b > a {
                    b
                } else {
                    a
                }
            }
            _ => a * b,
        })
    }
}

impl Elem for bf16 {
    const DTYPE: i32 = 3;
    fn input(pe: usize, i: usize, salt: usize, _: ReduceOp) -> bf16 {
        bf16::from_f32((mix(pe, i, salt) % 4000) as f32 / 7.0 - 250.0)
    }
    fn sentinel() -> bf16 {
        bf16::from_f32(-999.0)
    }
    fn fold(v: &[bf16], op: ReduceOp) -> bf16 {
        // 16-bit floats accumulate in f32 in rank order and round once.
        let acc = v[1..].iter().fold(v[0].to_f32(), |a, b| match op {
            ReduceOp::Sum => a + b.to_f32(),
            ReduceOp::Max => a.max(b.to_f32()),
            ReduceOp::Min => a.min(b.to_f32()),
            _ => a * b.to_f32(),
        });
        bf16::from_f32(acc)
    }
}

impl Elem for i32 {
    const DTYPE: i32 = 4;
    fn input(pe: usize, i: usize, salt: usize, _: ReduceOp) -> i32 {
        mix(pe, i, salt) as i32
    }
    fn sentinel() -> i32 {
        0x5EAD_BEEF
    }
    fn fold(v: &[i32], op: ReduceOp) -> i32 {
        v[1..].iter().fold(v[0], |a, &b| match op {
            ReduceOp::Xor => a ^ b,
            ReduceOp::Max => a.max(b),
            ReduceOp::Min => a.min(b),
            ReduceOp::Sum => a.wrapping_add(b),
            ReduceOp::And => a & b,
            ReduceOp::Or => a | b,
            ReduceOp::Prod => a.wrapping_mul(b),
        })
    }
}

impl Elem for u64 {
    const DTYPE: i32 = 7;
    fn input(pe: usize, i: usize, salt: usize, op: ReduceOp) -> u64 {
        if op == ReduceOp::Prod {
            (mix(pe, i, salt) % 5) as u64 + 1
        } else {
            mix(pe, i, salt) as u64
        }
    }
    fn sentinel() -> u64 {
        0xDEAD_BEEF_0BAD_F00D
    }
    fn fold(v: &[u64], op: ReduceOp) -> u64 {
        v[1..].iter().fold(v[0], |a, &b| match op {
            ReduceOp::Prod => a.wrapping_mul(b),
            ReduceOp::And => a & b,
            ReduceOp::Or => a | b,
            ReduceOp::Xor => a ^ b,
            ReduceOp::Max => a.max(b),
            ReduceOp::Min => a.min(b),
            ReduceOp::Sum => a.wrapping_add(b),
        })
    }
}

fn op_code(op: ReduceOp) -> i32 {
    [ReduceOp::Sum, ReduceOp::Prod, ReduceOp::Min, ReduceOp::Max, ReduceOp::And, ReduceOp::Or, ReduceOp::Xor]
        .iter()
        .position(|&o| o == op)
        .unwrap() as i32
}

/// Symmetric source and dest buffers of one type, sized for the largest check.
struct Bufs<T: SymType> {
    src: Sym<T>,
    dst: Sym<T>,
}

fn bufs<T: SymType>(ctx: &Ctx, elems: usize) -> Bufs<T> {
    Bufs { src: ctx.alloc(elems * ctx.n_pes()).unwrap(), dst: ctx.alloc(elems * ctx.n_pes() + GUARD).unwrap() }
}

/// One reduce (kind 0) or reduce_scatter (kind 1) check at `scope` (0..3 device, 4 stream).
#[allow(clippy::too_many_arguments)]
fn reduce_check<T: Elem>(
    e: &mut Env,
    r: &mut Check,
    b: &Bufs<T>,
    team: Team,
    members: &[usize],
    kind: usize,
    op: ReduceOp,
    n: usize,
    scope: usize,
    proto: GpuProto,
) {
    e.salt += 1;
    let (me, k) = (e.ctx.my_pe(), members.len());
    let idx = members.iter().position(|&p| p == me).unwrap();
    let salt = e.salt;
    let span = if kind == 0 { n } else { n * k };
    b.src.copy_from(0, &(0..span).map(|i| T::input(me, i, salt, op)).collect::<Vec<_>>()).unwrap();
    b.dst.copy_from(0, &vec![T::sentinel(); n + GUARD]).unwrap();
    let name = format!(
        "{} {} {:?} {} scope, proto {}, {n} elements, team of {k}",
        if kind == 0 { "reduce" } else { "reduce_scatter" },
        std::any::type_name::<T>(),
        op,
        SCOPES[scope],
        proto.name()
    );
    if scope == 4 {
        e.ctx.set_gpu_coll_proto(proto).unwrap();
        let st = e.g.stream();
        if kind == 0 {
            e.ctx.reduce_on_stream(team, &b.dst, &b.src, n, op, st).unwrap();
        } else {
            e.ctx.reduce_scatter_on_stream(team, &b.dst, &b.src, n, op, st).unwrap();
        }
        e.stream_done(&name);
    } else {
        let slot = e.ctx.device_team(team).unwrap();
        let args = [
            A::I32(scope as i32),
            A::I32(slot),
            A::U64(b.dst.addr() as u64),
            A::U64(b.src.addr() as u64),
            A::U64(n as u64),
            A::I32(T::DTYPE),
            A::I32(op_code(op)),
            A::I32(kind as i32),
            A::I32(proto.code()),
        ];
        e.run("red", scope, &args, &name);
    }
    let off = if kind == 0 { 0 } else { idx * n };
    let want = |i: usize| T::fold(&members.iter().map(|&p| T::input(p, off + i, salt, op)).collect::<Vec<_>>(), op);
    check_dest(r, &name, &b.dst.to_vec().expect("local access to the symmetric heap"), n, want, T::sentinel());
}

/// Check `name`: the first `n` elements of `got` are the model's `want(i)`, and the
/// `GUARD` elements after them still `sentinel` (nothing written past the end).
fn check_dest<T: PartialEq + Copy + std::fmt::Debug>(
    r: &mut Check,
    name: &str,
    got: &[T],
    n: usize,
    want: impl Fn(usize) -> T,
    sentinel: T,
) {
    let bad: Vec<usize> = (0..n).filter(|&i| got[i] != want(i)).collect();
    let guard_ok = got[n..n + GUARD].iter().all(|&v| v == sentinel);
    r.case(name, bad.is_empty() && guard_ok, || {
        if let Some(&i) = bad.first() {
            format!("{} wrong; first at {i}: {:?} != {:?}", bad.len(), got[i], want(i))
        } else {
            "wrote past the end of dest".into()
        }
    });
}

/// One broadcast (kind 0), fcollect (1) or alltoall (2) check of `n` bytes per pair.
#[allow(clippy::too_many_arguments)]
fn move_check(
    e: &mut Env,
    r: &mut Check,
    b: &Bufs<u8>,
    team: Team,
    members: &[usize],
    kind: usize,
    n: usize,
    scope: usize,
    proto: GpuProto,
) {
    e.salt += 1;
    let (me, k) = (e.ctx.my_pe(), members.len());
    let idx = members.iter().position(|&p| p == me).unwrap();
    let salt = e.salt;
    let root = (salt / 3) % k;
    let val = |p: usize, i: usize| mix(p, i, salt) as u8;
    let span = if kind == 2 { n * k } else { n };
    let out = if kind == 0 { n } else { n * k };
    b.src.copy_from(0, &(0..span).map(|i| val(me, i)).collect::<Vec<_>>()).unwrap();
    b.dst.copy_from(0, &vec![0xA5u8; out + GUARD]).unwrap();
    let cname = ["broadcast", "fcollect", "alltoall"][kind];
    let name = format!("{cname} {} scope, proto {}, {n} bytes, team of {k}", SCOPES[scope], proto.name());
    if scope == 4 {
        e.ctx.set_gpu_coll_proto(proto).unwrap();
        let st = e.g.stream();
        match kind {
            0 => e.ctx.broadcast_on_stream(team, &b.dst, &b.src, n, root, st),
            1 => e.ctx.fcollect_on_stream(team, &b.dst, &b.src, n, st),
            _ => e.ctx.alltoall_on_stream(team, &b.dst, &b.src, n, st),
        }
        .unwrap();
        e.stream_done(&name);
    } else {
        let slot = e.ctx.device_team(team).unwrap();
        let args = [
            A::I32(scope as i32),
            A::I32(slot),
            A::U64(b.dst.addr() as u64),
            A::U64(b.src.addr() as u64),
            A::U64(n as u64),
            A::I32(kind as i32),
            A::I32(root as i32),
            A::I32(proto.code()),
        ];
        e.run("move", scope, &args, &name);
    }
    let want = |i: usize| match kind {
        0 => val(members[root], i),
        1 => val(members[i / n], i % n),
        _ => val(members[i / n], idx * n + i % n),
    };
    check_dest(r, &name, &b.dst.to_vec().expect("local access to the symmetric heap"), out, want, 0xA5);
}

/// Largest check: 1 MiB per pair of PEs.
const BIG: usize = 1 << 20;

/// The matrix's buffers, one set per element type.
struct Matrix {
    fb: Bufs<f32>,
    ib: Bufs<i32>,
    hb: Bufs<bf16>,
    ub: Bufs<u64>,
    bb: Bufs<u8>,
}

fn main() {
    run_gpu_program("gpu_coll", |ctx, g| coll(&ctx, &g))
}

/// Every check on one PE; whether every one passed.
fn coll(ctx: &Ctx, g: &std::sync::Arc<Gpu>) -> bool {
    let args: Vec<String> = std::env::args().collect();
    let (me, np) = (ctx.my_pe(), ctx.n_pes());
    let t0 = std::time::Instant::now();
    let m = g.compile("coll", SRC, &[]).expect("compile");
    let mut r = Check::immediate("gpu_coll", me);
    // Grid-scope calls: one block per multiprocessor, shared among the PEs of this
    // process on the GPU (their grids run at once and must all be resident).
    let mut e = Env { ctx, g, m: &m, sms: g.grid_blocks().unwrap() as u32, salt: 0 };
    let b = Matrix { fb: bufs(ctx, BIG / 4), ib: bufs(ctx, 4096), hb: bufs(ctx, 4096), ub: bufs(ctx, 4096), bb: bufs(ctx, BIG) };
    // Peers without a pointer: the proxy protocol for every call on the world team.
    // (SHARED is the PEs this PE maps.)
    let remote = ctx.team_n_pes(Team::SHARED).unwrap() < np;
    let protos: &[GpuProto] = if remote { &[GpuProto::Auto] } else { &PROTOS };
    if remote {
        let p = ctx.gpu_coll_proto(Team::WORLD, 8).unwrap();
        r.case("a team with members behind the proxy takes the proxy protocol", p == GpuProto::Proxy, || format!("{p:?}"));
    }
    let mut teams = vec![(Team::WORLD, (0..np).collect::<Vec<usize>>(), true)];
    if np >= 4 {
        let evens = ctx.team_split_strided(Team::WORLD, 0, 2, np.div_ceil(2), TeamConfig::default()).unwrap();
        teams.push((evens, (0..np).step_by(2).collect(), false));
    }
    // A team of one member (each PE its own row of a 2-D split): its on-stream
    // collectives are stream copies, its device-scope ones the kernels with one member.
    let (alone, _column) = ctx.team_split_2d(Team::WORLD, 1, TeamConfig::default(), TeamConfig::default()).unwrap();
    teams.push((alone, vec![me], false));
    if me == 0 {
        println!("gpu_coll: {np} PEs, kernels ready after {:.1} s", t0.elapsed().as_secs_f64());
    }
    for t in &teams {
        if t.1.contains(&me) {
            team_matrix(&mut e, &mut r, &b, t, protos, remote);
            if me == 0 {
                println!("matrix on a team of {} done after {:.1} s", t.1.len(), t0.elapsed().as_secs_f64());
            }
        }
    }
    ctx.set_gpu_coll_proto(GpuProto::Auto).unwrap();
    // PEs outside the strided team ran fewer checks: agree on the salt again.
    e.salt = 1 << 20;
    typed_names(&mut e, &mut r);
    back_to_back(&mut e, &mut r, protos);
    if remote {
        if me == 0 {
            println!("two-stream check left out: calls on a team with members behind the proxy must not overlap");
        }
    } else {
        two_streams(&mut e, &mut r);
    }
    graph_replay(&mut e, &mut r);
    if me == 0 {
        println!("checks done after {:.1} s", t0.elapsed().as_secs_f64());
    }
    if args.iter().any(|a| a == "--bench") {
        bench(ctx, g, &args);
    }
    let passed = r.finish();
    ctx.barrier_all().unwrap();
    ctx.clone().finalize().unwrap();
    passed
}

/// Every collective at every scope and protocol on one team of (team, members, full):
/// `full` is the world, with every size and the type matrix; otherwise a few sizes.
/// `remote`: members behind the proxy.
fn team_matrix(e: &mut Env, r: &mut Check, b: &Matrix, t: &(Team, Vec<usize>, bool), protos: &[GpuProto], remote: bool) {
    let (team, members, full) = (t.0, &t.1[..], t.2);
    // Bytes per pair of PEs: odd sizes, both sides of the LL and LL128 thresholds, 1 MiB.
    // Behind the proxy every call is a few proxy round trips: fewer sizes, still one past a
    // scratch slot (several chunks) and 1 MiB.
    let sizes: Vec<usize> = match (full, remote) {
        // BIG - 36: an odd element count past the LL128 threshold, not a multiple of
        // n * 16 bytes (the simple all-reduce's split form then has a scalar remainder).
        (true, false) => vec![1, 7, 1000, LL_MAX, LL_MAX + 8, LL128_MAX, LL128_MAX + 8, BIG - 36, BIG],
        (true, true) => vec![7, 1000, LL128_MAX + 8, BIG],
        (false, _) => vec![7, 1000, LL_MAX + 8],
    };
    for scope in 0..5 {
        for &proto in protos {
            for &bytes in &sizes {
                // One thread moving a megabyte through every peer takes long: thread scope stops at 64 KiB.
                if scope == 0 && bytes > 64 << 10 {
                    continue;
                }
                let n = (bytes / 4).max(1);
                for kind in 0..2 {
                    reduce_check(e, r, &b.fb, team, members, kind, ReduceOp::Sum, n, scope, proto);
                }
                for kind in 0..3 {
                    move_check(e, r, &b.bb, team, members, kind, bytes, scope, proto);
                }
            }
            // The type matrix at a few sizes (elements).
            if full && (proto != GpuProto::Auto || remote) {
                for &n in if remote { &[7usize][..] } else { &[7usize, 1000, 4095][..] } {
                    for kind in 0..2 {
                        reduce_check(e, r, &b.fb, team, members, kind, ReduceOp::Min, n, scope, proto);
                        reduce_check(e, r, &b.ib, team, members, kind, ReduceOp::Xor, n, scope, proto);
                        reduce_check(e, r, &b.ib, team, members, kind, ReduceOp::Max, n, scope, proto);
                        reduce_check(e, r, &b.hb, team, members, kind, ReduceOp::Sum, n, scope, proto);
                        reduce_check(e, r, &b.ub, team, members, kind, ReduceOp::Prod, n, scope, proto);
                        reduce_check(e, r, &b.ub, team, members, kind, ReduceOp::Or, n, scope, proto);
                    }
                }
            }
        }
    }
}

/// The NVSHMEM-style typed names at every device scope.
fn typed_names(e: &mut Env, r: &mut Check) {
    let ctx = e.ctx;
    let (me, np) = (ctx.my_pe(), ctx.n_pes());
    let n = 300;
    let s: Sym<f32> = ctx.alloc(n).unwrap();
    let d: Sym<f32> = ctx.alloc(n).unwrap();
    let bs: Sym<i32> = ctx.alloc(n).unwrap();
    let bd: Sym<i32> = ctx.alloc(n).unwrap();
    for scope in 0..4 {
        e.salt += 1;
        let salt = e.salt;
        s.copy_from(0, &(0..n).map(|i| f32::input(me, i, salt, ReduceOp::Sum)).collect::<Vec<_>>()).unwrap();
        bs.copy_from(0, &(0..n).map(|i| (me * 100_000 + i + salt) as i32).collect::<Vec<_>>()).unwrap();
        bd.fill(-1).expect("local access to the symmetric heap");
        let args = [
            A::I32(scope as i32),
            A::I32(0),
            A::U64(d.addr() as u64),
            A::U64(s.addr() as u64),
            A::U64(bd.addr() as u64),
            A::U64(bs.addr() as u64),
            A::U64(n as u64),
        ];
        let name = format!("typed names float_sum_reduce + int_broadcast at {} scope", SCOPES[scope]);
        e.run("typed", scope, &args, &name);
        let (got, gotb) =
            (d.to_vec().expect("local access to the symmetric heap"), bd.to_vec().expect("local access to the symmetric heap"));
        let ok = (0..n)
            .all(|i| got[i] == f32::fold(&(0..np).map(|p| f32::input(p, i, salt, ReduceOp::Sum)).collect::<Vec<_>>(), ReduceOp::Sum))
            && (0..n).all(|i| gotb[i] == (i + salt) as i32);
        r.case(&name, ok, || "mismatch".into());
    }
}

/// Back-to-back all-reduces inside one kernel, sources rewritten right after each call.
fn back_to_back(e: &mut Env, r: &mut Check, protos: &[GpuProto]) {
    let ctx = e.ctx;
    let np = ctx.n_pes();
    let (rounds, n) = (24usize, 37usize);
    let s: Sym<i32> = ctx.alloc(n).unwrap();
    let d: Sym<i32> = ctx.alloc(n).unwrap();
    let out: Sym<i32> = ctx.alloc(rounds * n).unwrap();
    for scope in 0..4 {
        for &proto in protos {
            out.fill(0).expect("local access to the symmetric heap");
            let name = format!("{rounds} back-to-back all-reduces in one kernel, {} scope, proto {}", SCOPES[scope], proto.name());
            let args = [
                A::I32(scope as i32),
                A::I32(0),
                A::U64(s.addr() as u64),
                A::U64(d.addr() as u64),
                A::U64(out.addr() as u64),
                A::I32(rounds as i32),
                A::I32(n as i32),
                A::I32(proto.code()),
            ];
            e.run("back_to_back", scope, &args, &name);
            let o = out.to_vec().expect("rshmem");
            let want = |k: usize, i: usize| (0..np).map(|p| (p * 1000 + k * 10 + i) as i32).sum::<i32>();
            let bad = (0..rounds * n).filter(|&x| o[x] != want(x / n, x % n)).count();
            r.case(&name, bad == 0, || format!("{bad} wrong"));
        }
    }
}

/// Eight on-stream collectives in flight on two streams of one team; on odd PEs the
/// first stream is held back, so the second one runs ahead there.
fn two_streams(e: &mut Env, r: &mut Check) {
    let ctx = e.ctx;
    let g = e.g;
    let (me, np) = (ctx.my_pe(), ctx.n_pes());
    let world: Vec<usize> = (0..np).collect();
    let n = 1500usize;
    let fs: Vec<Bufs<f32>> = (0..4).map(|_| bufs(ctx, n)).collect();
    let bs: Vec<Bufs<u8>> = (0..4).map(|_| bufs(ctx, 4 * n)).collect();
    let sa = g.new_stream().unwrap();
    let sb = g.new_stream().unwrap();
    for proto in PROTOS {
        e.salt += 1;
        let salt = e.salt;
        ctx.set_gpu_coll_proto(proto).unwrap();
        for (j, b) in fs.iter().enumerate() {
            b.src.copy_from(0, &(0..n * np).map(|i| f32::input(me, i, salt + j, ReduceOp::Sum)).collect::<Vec<_>>()).unwrap();
        }
        for (j, b) in bs.iter().enumerate() {
            b.src.copy_from(0, &(0..4 * n * np).map(|i| mix(me, i, salt + 10 + j) as u8).collect::<Vec<_>>()).unwrap();
        }
        ctx.barrier_all().unwrap();
        if me % 2 == 1 {
            // SAFETY: delay(u64) takes a nanosecond count.
            unsafe { e.m.launch("delay", LaunchConfig::new(1, 1), Some(&sa), &[A::U64(3_000_000)]) }.unwrap();
        }
        // Every PE enqueues the same calls in the same order; sizes vary so the
        // protocols differ under auto.
        for j in 0..4 {
            let st = if j % 2 == 0 { &sa } else { &sb };
            let ot = if j % 2 == 0 { &sb } else { &sa };
            let len = [n, 700, 7, 1200][j];
            if j % 2 == 0 {
                ctx.reduce_on_stream(Team::WORLD, &fs[j].dst, &fs[j].src, len, ReduceOp::Sum, st).unwrap();
            } else {
                ctx.reduce_scatter_on_stream(Team::WORLD, &fs[j].dst, &fs[j].src, len, ReduceOp::Sum, st).unwrap();
            }
            let bytes = [4 * n, 333, 5000, 64][j];
            match j {
                0 | 3 => ctx.alltoall_on_stream(Team::WORLD, &bs[j].dst, &bs[j].src, bytes, ot),
                1 => ctx.fcollect_on_stream(Team::WORLD, &bs[j].dst, &bs[j].src, bytes, ot),
                _ => ctx.broadcast_on_stream(Team::WORLD, &bs[j].dst, &bs[j].src, bytes, np - 1, ot),
            }
            .unwrap();
        }
        let name = format!("8 on-stream collectives on two streams of one team, proto {}", proto.name());
        sa.synchronize().unwrap_or_else(|err| panic!("{name} failed on PE {me}: {err}"));
        sb.synchronize().unwrap_or_else(|err| panic!("{name} failed on PE {me}: {err}"));
        let mut bad = Vec::new();
        for j in 0..4 {
            let len = [n, 700, 7, 1200][j];
            let got = fs[j].dst.to_vec().expect("local access to the symmetric heap");
            let off = if j % 2 == 0 { 0 } else { me * len };
            for i in 0..len {
                let want = f32::fold(&(0..np).map(|p| f32::input(p, off + i, salt + j, ReduceOp::Sum)).collect::<Vec<_>>(), ReduceOp::Sum);
                if got[i] != want {
                    bad.push(format!("reduce #{j} at {i}"));
                    break;
                }
            }
            let bytes = [4 * n, 333, 5000, 64][j];
            let got = bs[j].dst.to_vec().expect("local access to the symmetric heap");
            let val = |p: usize, i: usize| mix(p, i, salt + 10 + j) as u8;
            let total = if j == 2 { bytes } else { bytes * np };
            for i in 0..total {
                let want = match j {
                    0 | 3 => val(world[i / bytes], me * bytes + i % bytes),
                    1 => val(world[i / bytes], i % bytes),
                    _ => val(np - 1, i),
                };
                if got[i] != want {
                    bad.push(format!("move #{j} at {i}"));
                    break;
                }
            }
        }
        r.case(&name, bad.is_empty(), || bad.join(", "));
    }
    ctx.set_gpu_coll_proto(GpuProto::Auto).unwrap();
    ctx.barrier_all().unwrap();
}

/// A captured graph replays an on-stream all-reduce with new inputs.
fn graph_replay(e: &mut Env, r: &mut Check) {
    let ctx = e.ctx;
    let g = e.g;
    let (me, np) = (ctx.my_pe(), ctx.n_pes());
    let n = 4096;
    let gs: Sym<f32> = ctx.alloc(n).unwrap();
    let gd: Sym<f32> = ctx.alloc(n).unwrap();
    let st = g.new_stream().unwrap();
    for proto in PROTOS {
        ctx.set_gpu_coll_proto(proto).unwrap();
        ctx.barrier_all().unwrap();
        st.begin_capture().unwrap();
        ctx.reduce_on_stream(Team::WORLD, &gd, &gs, n, ReduceOp::Sum, &st).unwrap();
        let graph = st.end_capture().unwrap();
        let mut ok = true;
        for round in 1..=3 {
            gs.copy_from(0, &(0..n).map(|i| (me * round + i) as f32).collect::<Vec<_>>()).unwrap();
            gd.fill(-1.0).expect("local access to the symmetric heap");
            // Inputs must be in place on every PE before anyone's replay reads them
            // (the simple protocol pulls sources; LL pushes them at the start).
            ctx.barrier_all().unwrap();
            graph.launch(&st).unwrap();
            st.synchronize().unwrap();
            let got = gd.to_vec().expect("rshmem");
            ok &= (0..n).all(|i| got[i] == f32::fold(&(0..np).map(|p| (p * round + i) as f32).collect::<Vec<_>>(), ReduceOp::Sum));
            // Nobody rewrites its source for the next round while a peer may still read it.
            ctx.barrier_all().unwrap();
        }
        r.case(&format!("all-reduce replayed 3 times from a captured CUDA graph, proto {}", proto.name()), ok, || "mismatch".into());
        drop(graph);
    }
    ctx.set_gpu_coll_proto(GpuProto::Auto).unwrap();
}

fn bench(ctx: &Ctx, g: &Gpu, args: &[String]) {
    let anchor: std::collections::BTreeMap<(String, usize), f64> = args
        .iter()
        .position(|a| a == "--anchor")
        .and_then(|i| args.get(i + 1))
        .and_then(|f| std::fs::read_to_string(f).ok())
        .map(|t| {
            t.lines()
                .filter_map(|l| {
                    let w: Vec<&str> = l.split_whitespace().collect();
                    if w.len() != 5 || w[0] != "RESULT" {
                        return None;
                    }
                    Some(((w[1].to_string(), w[2].parse::<usize>().ok()?), w[3].parse::<f64>().ok()?))
                })
                .collect()
        })
        .unwrap_or_default();
    let max = 1usize << 28;
    let np = ctx.n_pes();
    let s: Sym<f32> = ctx.alloc(max / 4).unwrap();
    let d: Sym<f32> = ctx.alloc(max / 4).unwrap();
    let st = g.new_stream().unwrap();
    let timer = g.timer().unwrap();
    let me = ctx.my_pe();
    // Times `reps` enqueued calls of `f` on `st` (after one warm-up), in microseconds per call.
    let time = |reps: usize, f: &dyn Fn()| {
        ctx.barrier_all().unwrap();
        f();
        st.synchronize().unwrap();
        ctx.barrier_all().unwrap();
        timer.start(&st).unwrap();
        for _ in 0..reps {
            f();
        }
        timer.stop_ms(&st).unwrap() as f64 * 1e3 / reps as f64
    };
    if me == 0 {
        println!("on-stream latency over {np} PEs, per protocol (us per call; anchor: nvshmem RESULT lines)");
        println!("{:>9} {:>9} {:>10} {:>10} {:>10} {:>10} {:>12}", "coll", "bytes", "simple", "ll", "ll128", "auto", "anchor");
    }
    for coll in ["reduce", "alltoall"] {
        let mut bytes = 8usize;
        while bytes <= 64 << 10 {
            let mut row = Vec::new();
            for proto in PROTOS {
                ctx.set_gpu_coll_proto(proto).unwrap();
                let us = if coll == "reduce" {
                    time(20, &|| ctx.reduce_on_stream(Team::WORLD, &d, &s, bytes / 4, ReduceOp::Sum, &st).unwrap())
                } else {
                    time(20, &|| ctx.alltoall_on_stream(Team::WORLD, &d, &s, bytes / 4, &st).unwrap())
                };
                row.push(us);
                if me == 0 {
                    println!("RESULT {coll}_stream_{}_us {bytes} {us} us", proto.name());
                }
            }
            if me == 0 {
                let a = anchor.get(&(format!("{coll}_stream_us"), bytes));
                println!(
                    "{:>9} {:>9} {:>10.2} {:>10.2} {:>10.2} {:>10.2} {:>12}",
                    coll,
                    bytes,
                    row[0],
                    row[1],
                    row[2],
                    row[3],
                    a.map(|v| format!("{v:.2}")).unwrap_or("-".into())
                );
            }
            bytes *= 4;
        }
    }
    ctx.set_gpu_coll_proto(GpuProto::Auto).unwrap();
    if me == 0 {
        println!("on-stream all-reduce (float sum) bandwidth, auto protocol");
        println!("{:>12} {:>8} {:>12} {:>10} {:>12} {:>8}", "bytes", "proto", "rshmem us", "GB/s", "nvshmem us", "ratio");
    }
    let mut bytes = 8usize;
    while bytes <= max {
        let reps = if bytes <= 1 << 20 { 50 } else { 5 };
        let us = time(reps, &|| ctx.reduce_on_stream(Team::WORLD, &d, &s, bytes / 4, ReduceOp::Sum, &st).unwrap());
        if me == 0 {
            let a = anchor.get(&("reduce_stream_us".to_string(), bytes));
            println!(
                "{:>12} {:>8} {:>12.2} {:>10.2} {:>12} {:>8}",
                bytes,
                ctx.gpu_coll_proto(Team::WORLD, bytes).unwrap().name(),
                us,
                bytes as f64 / us / 1e3,
                a.map(|v| format!("{v:.2}")).unwrap_or("-".into()),
                a.map(|v| format!("{:.2}", v / us)).unwrap_or("-".into())
            );
            println!("RESULT reduce_stream_us {bytes} {us} us");
        }
        bytes *= 8;
    }
}
