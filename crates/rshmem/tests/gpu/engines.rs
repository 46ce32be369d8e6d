//! The engine check: device-initiated transfers through an explicit engine (SM, copy
//! engine, remote transport) at thread, warp and block scope, remote-engine atomics,
//! batches, 2-D copies, L2 prefetch, 32-bit signals and the team PE mapping, each checked
//! against expected data; quiet and fence over mixed engines checked against a model
//! (many puts through every engine, then quiet, then every byte); then timings (SM vs copy
//! engine vs remote put, 4 KiB to 256 MiB; batched vs unbatched requests; the cost of an
//! empty quiet and fence).
//!
//! `relay` (3 PEs or more, `RSHMEM_REMOTE_ENGINE=ucx`; the README's run makes them two
//! simulated hosts with `RSHMEM_HOST`): relayed puts and gets from every PE to every
//! other through every third PE, at each scope and size, checked byte by byte; then PE 0's
//! put to PE 2 relayed through PE 1 timed beside the remote engine's direct put.
//!
//! `engines [all|check|bench|relay|misuse-ce|misuse-remote|misuse-relay]` (default all) under
//! `rshmemrun -n 2` (processes) or `rshmemrun -n 2 --pes-per-process 2` (thread PEs).
//! The remote engine needs a remote transport to the peer: `RSHMEM_REMOTE_ENGINE=ucx`
//! with `UCX_TLS=tcp` (or `cma`) on one host. Checks of an engine that does not reach the
//! peer are skipped with a line saying so. `misuse-*` make the device stop a kernel on
//! purpose (a copy-engine put to an unmapped peer under `RSHMEM_TRANSPORT=ucx`, a remote
//! put without a remote transport) and exit 0 once the kernel failed as it should (the
//! device's message is on stdout).

#[path = "../support/mod.rs"]
mod support;

#[path = "../support/gpu.rs"]
mod gpu_support;
use gpu_support::{a, launch, run_gpu_program, GpuRun};
use rshmem::gpu::{KernelArg as A, LaunchConfig};
use rshmem::{Engine, Sym};
use support::mix;

const SRC: &str = include_str!("engines.cu");

/// Bytes of the bulk buffers: more than the proxy's staging buffer.
const NMAX: usize = 3 * (1 << 20) + 17;
/// Engine codes of engines.cu (`EN_*`).
const EN_SM: i32 = 0;
const EN_CE: i32 = 1;
const EN_REMOTE: i32 = 2;
const EN_BATCH_REMOTE: i32 = 3;
const EN_BATCH_CE: i32 = 4;
/// `RSHMEMX_ENGINE_*`.
const ENGINE_REMOTE: i32 = 1;
const ENGINE_CE: i32 = 2;
/// Bytes of one `rshmemx_batch_entry`.
const ENTRY: usize = 32;

fn byte_pat(pe: usize, i: usize, tag: usize) -> u8 {
    (i.wrapping_mul(31) ^ (pe * 77) ^ (tag * 13)) as u8
}

fn pattern(pe: usize, len: usize, tag: usize) -> Vec<u8> {
    (0..len).map(|i| byte_pat(pe, i, tag)).collect()
}

fn engine_name(e: i32) -> &'static str {
    ["sm", "ce", "remote", "batch-remote", "batch-ce"][e as usize]
}

/// Which engines reach both ring neighbours (the checks send right and receive from left).
#[derive(Clone, Copy)]
struct Reach {
    ce: bool,
    remote: bool,
}

fn main() {
    let mode = std::env::args().nth(1).unwrap_or_else(|| "all".into());
    if !["all", "check", "bench", "relay", "misuse-ce", "misuse-remote", "misuse-relay"].contains(&mode.as_str()) {
        eprintln!("gpu_engines: unknown mode {mode} (all, check, bench, relay, misuse-ce, misuse-remote, misuse-relay)");
        std::process::exit(2);
    }
    run_gpu_program("gpu_engines", |ctx, g| engines(&ctx, &g, &mode))
}

fn engines(ctx: &rshmem::Ctx, g: &rshmem::gpu::Gpu, mode: &str) -> bool {
    let (me, n) = (ctx.my_pe(), ctx.n_pes());
    if n < 2 {
        eprintln!("gpu_engines: needs at least 2 PEs");
        std::process::exit(2);
    }
    let m = g.compile("engines", SRC, &[]).expect("compile engine kernels");
    let mut s = GpuRun::new("gpu_engines", ctx, g, &m);
    let both = |e: Engine| ctx.engine_reaches(e, s.right) && ctx.engine_reaches(e, s.left);
    let reach = Reach { ce: both(Engine::CopyEngine), remote: both(Engine::Remote) };
    if me == 0 {
        println!(
            "gpu_engines: {n} PEs on {} ({}), {} PE(s) on this GPU in this process; copy engine reaches the neighbours: {}, remote engine: {}",
            g.device_name(),
            g.arch(),
            g.sharers(),
            reach.ce,
            reach.remote
        );
    }
    if mode.starts_with("misuse") {
        misuse(&s, mode);
    }
    let t0 = std::time::Instant::now();
    if mode == "all" || mode == "check" {
        let b = Bulk { src: ctx.alloc::<u8>(NMAX).unwrap(), dst: ctx.alloc::<u8>(NMAX).unwrap() };
        bulk(&mut s, &b, reach);
        remote_atomics(&mut s, reach);
        mixed(&mut s, reach);
        fences(&mut s, reach);
        batches(&mut s, &b, reach);
        two_d(&mut s, reach);
        prefetch(&mut s);
        signal32(&mut s);
        team_map(&mut s);
        println!("gpu_engines: PE {me}: checks took {:.1} s", t0.elapsed().as_secs_f64());
    }
    if mode == "all" || mode == "bench" {
        bench(&mut s, reach);
    }
    if mode == "relay" {
        relay(&mut s);
    }
    s.conclude()
}

/// The bulk source and destination buffers, `NMAX` bytes each.
struct Bulk {
    src: Sym<u8>,
    dst: Sym<u8>,
}

fn skip(s: &GpuRun, what: &str, engine: &str) {
    if s.me == 0 {
        println!("gpu_engines: skipped {what}: the {engine} engine does not reach the neighbours in this run");
    }
}

/// Engines of this run for the bulk checks.
fn engine_list(reach: Reach) -> Vec<i32> {
    let mut v = vec![EN_SM];
    if reach.ce {
        v.push(EN_CE);
    }
    if reach.remote {
        v.push(EN_REMOTE);
    }
    v
}

/// Put and get of 8 B to 3 MiB through each engine at each scope, with the engine's own
/// quiet and with rshmem_quiet.
fn bulk(s: &mut GpuRun, b: &Bulk, reach: Reach) {
    let GpuRun { ctx, g, m, me, right, left, .. } = *s;
    if !reach.ce {
        skip(s, "copy-engine put/get", "copy");
    }
    if !reach.remote {
        skip(s, "remote-engine put/get", "remote");
    }
    let ck = &mut s.ck;
    for engine in engine_list(reach) {
        for scope in 0..3i32 {
            for (k, len) in [8usize, 64, 65, 4099, NMAX].into_iter().enumerate() {
                let qmode = ((k + scope as usize) % 2) as i32;
                let tag = (engine as usize * 3 + scope as usize) * 7 + k;
                let qname = if qmode == 0 { "engine quiet" } else { "rshmem_quiet" };
                let sname = ["thread", "warp", "block"][scope as usize];
                b.src.copy_from(0, &pattern(me, NMAX, tag)).unwrap();
                b.dst.fill(0xee).expect("local access to the symmetric heap");
                ctx.barrier_all().unwrap();
                let args = |get: i32| {
                    [
                        a(&b.dst),
                        a(&b.src),
                        A::U64(len as u64),
                        A::I32(engine),
                        A::I32(scope),
                        A::I32(qmode),
                        A::I32(get),
                        A::I32(right as i32),
                    ]
                };
                launch(g, m, "en_rma", 1, 64, &args(0));
                ctx.barrier_all().unwrap();
                let got = b.dst.to_vec().expect("local access to the symmetric heap");
                let bad = (0..NMAX).filter(|&i| got[i] != if i < len { byte_pat(left, i, tag) } else { 0xee }).count();
                ck.case(&format!("{} put {sname} {len} B, {qname}", engine_name(engine)), bad == 0, || format!("{bad} bytes wrong"));
                // Get: this PE reads the right PE's source (its pattern with the same tag).
                b.dst.fill(0xee).expect("local access to the symmetric heap");
                ctx.barrier_all().unwrap();
                launch(g, m, "en_rma", 1, 64, &args(1));
                let got = b.dst.to_vec().expect("local access to the symmetric heap");
                let bad = (0..NMAX).filter(|&i| got[i] != if i < len { byte_pat(right, i, tag) } else { 0xee }).count();
                ck.case(&format!("{} get {sname} {len} B, {qname}", engine_name(engine)), bad == 0, || format!("{bad} bytes wrong"));
                ctx.barrier_all().unwrap();
            }
        }
    }
}

/// Remote-engine atomics: a sequence against the model, and fetch_inc tickets.
fn remote_atomics(s: &mut GpuRun, reach: Reach) {
    if !reach.remote {
        skip(s, "remote-engine atomics", "remote");
        return;
    }
    let GpuRun { ctx, g, m, right, .. } = *s;
    let ck = &mut s.ck;
    let w = ctx.alloc::<u64>(1).unwrap();
    let w32 = ctx.alloc::<u32>(1).unwrap();
    let out = ctx.alloc::<u64>(32).unwrap();
    w.fill(1000).expect("local access to the symmetric heap");
    w32.fill(0xffff_fffe).expect("local access to the symmetric heap");
    ctx.barrier_all().unwrap();
    launch(g, m, "en_remote_amo_sequence", 1, 1, &[a(&w), a(&w32), a(&out), A::I32(right as i32)]);
    ctx.barrier_all().unwrap();
    let model: Vec<u64> = vec![1000, 1000, 1005, 77, 99, 99, 0x163, 0x160, 0x15560, 0xffff_fffe, 1, 7, 0xffff_fffd];
    let got = out.to_vec().expect("local access to the symmetric heap");
    ck.case(
        "remote atomics (fetch, fetch_add, swap, cswap, or, and, xor, set, inc, add, or; u32, i32) match the model",
        got[..model.len()] == model[..],
        || format!("got {:x?}, model {:x?}", &got[..model.len()], model),
    );
    let (fw, fw32) = (w.read(0).unwrap(), w32.read(0).unwrap());
    ck.case("remote atomics left the model's final words", fw == 0x15560 && fw32 == 0xffff_fffd, || format!("{fw:#x} {fw32:#x}"));
    let ctr = ctx.alloc::<u64>(1).unwrap();
    let tickets = ctx.alloc::<u64>(1024).unwrap();
    ctr.fill(0).expect("local access to the symmetric heap");
    ctx.barrier_all().unwrap();
    launch(g, m, "en_remote_tickets", 2, 64, &[a(&ctr), a(&tickets), A::I32(8), A::I32(right as i32)]);
    ctx.barrier_all().unwrap();
    let mut tk = tickets.to_vec().expect("local access to the symmetric heap");
    tk.sort_unstable();
    let perm = tk.iter().enumerate().all(|(i, &t)| t == i as u64);
    let total = ctr.read(0).unwrap();
    ck.case("1024 remote fetch_inc tickets form a permutation, counter exact", perm && total == 1024, || {
        format!("counter {total}, permutation {perm}")
    });
    ctx.barrier_all().unwrap();
}

/// The model check: 512 chunks of up to 8 KiB, each in two pieces through engines drawn at
/// random (SM, CE, remote, batched remote, batched CE) from 128 threads, then rshmem_quiet;
/// every byte of the destination checked (covered bytes hold the sender's pattern, the
/// rest stays 0xee).
fn mixed(s: &mut GpuRun, reach: Reach) {
    let GpuRun { ctx, g, m, me, right, left, .. } = *s;
    let ck = &mut s.ck;
    let (chunk, nchunks, cap, threads) = (8192usize, 512usize, 8u32, 128usize);
    let bytes = chunk * nchunks;
    let src = ctx.alloc::<u8>(bytes).unwrap();
    let dst = ctx.alloc::<u8>(bytes).unwrap();
    let entries = ctx.alloc::<u8>(threads * cap as usize * ENTRY).unwrap();
    let mut all = 1u32 << EN_SM;
    if reach.ce {
        all |= (1 << EN_CE) | (1 << EN_BATCH_CE);
    }
    if reach.remote {
        all |= (1 << EN_REMOTE) | (1 << EN_BATCH_REMOTE);
    }
    let mut rounds = vec![(all, 11u64), (all, 12)];
    if reach.ce {
        rounds.push(((1 << EN_CE) | (1 << EN_BATCH_CE) | (1 << EN_SM), 13));
    }
    if reach.remote {
        rounds.push(((1 << EN_REMOTE) | (1 << EN_BATCH_REMOTE) | (1 << EN_SM), 14));
    }
    for (mask, seed) in rounds {
        let tag = seed as usize;
        src.copy_from(0, &pattern(me, bytes, tag)).unwrap();
        dst.fill(0xee).expect("local access to the symmetric heap");
        ctx.barrier_all().unwrap();
        let args = [
            a(&dst),
            a(&src),
            A::U64(chunk as u64),
            A::U64(nchunks as u64),
            A::U32(mask),
            A::U64(seed),
            a(&entries),
            A::U32(cap),
            A::I32(right as i32),
        ];
        launch(g, m, "en_mixed", 2, (threads / 2) as u32, &args);
        ctx.barrier_all().unwrap();
        let got = dst.to_vec().expect("local access to the symmetric heap");
        let mut bad = 0usize;
        for i in 0..nchunks {
            let len = chunk - (mix(seed.wrapping_mul(1_000_003).wrapping_add(i as u64)) % 97) as usize;
            for j in 0..chunk {
                let at = i * chunk + j;
                let want = if j < len { byte_pat(left, at, tag) } else { 0xee };
                bad += usize::from(got[at] != want);
            }
        }
        let names: Vec<&str> = (0..5).filter(|e| mask & (1 << e) != 0).map(engine_name).collect();
        ck.case(&format!("mixed engines [{}] x 1024 pieces, then quiet: every byte (seed {seed})", names.join(",")), bad == 0, || {
            format!("{bad} of {bytes} bytes wrong")
        });
        ctx.barrier_all().unwrap();
    }
}

/// Fence across engines: 16 chunks of 256 KiB through an engine, each followed by
/// rshmem_fence and a p of a flag; the receiver finds each chunk whole when its flag arrives.
fn fences(s: &mut GpuRun, reach: Reach) {
    let GpuRun { ctx, g, m, me, right, left, .. } = *s;
    let ck = &mut s.ck;
    let (chunk, k) = (256usize << 10, 16i32);
    let bytes = chunk * k as usize;
    let src = ctx.alloc::<u8>(bytes).unwrap();
    let dst = ctx.alloc::<u8>(bytes).unwrap();
    let flag = ctx.alloc::<u64>(1).unwrap();
    let bad = ctx.alloc::<u64>(1).unwrap();
    for engine in engine_list(reach) {
        let tag = 50 + engine as usize;
        src.copy_from(0, &pattern(me, bytes, tag)).unwrap();
        dst.fill(0xee).expect("local access to the symmetric heap");
        flag.fill(0).expect("local access to the symmetric heap");
        bad.fill(u64::MAX).expect("local access to the symmetric heap");
        ctx.barrier_all().unwrap();
        let args = [
            a(&dst),
            a(&src),
            A::U64(chunk as u64),
            A::I32(k),
            a(&flag),
            A::I32(engine),
            A::I32(right as i32),
            A::I32(left as i32),
            A::U64(tag as u64),
            a(&bad),
        ];
        launch(g, m, "en_fence", 2, 256, &args);
        ctx.barrier_all().unwrap();
        let nbad = bad.read(0).unwrap();
        ck.case(
            &format!("{} put, fence, p(flag): each of {k} chunks of 256 KiB whole when its flag arrives", engine_name(engine)),
            nbad == 0,
            || format!("{nbad} bytes not there yet when their flag was"),
        );
        ctx.barrier_all().unwrap();
    }
}

/// Batches: 37 puts of 1000 B (capacity 8, so several submissions) per engine, with the
/// engine's quiet and with rshmem_quiet.
fn batches(s: &mut GpuRun, b: &Bulk, reach: Reach) {
    let GpuRun { ctx, g, m, me, right, left, .. } = *s;
    let entries = ctx.alloc::<u8>(8 * ENTRY).unwrap();
    let (count, n) = (37usize, 1000usize);
    let mut list = Vec::new();
    if reach.remote {
        list.push((ENGINE_REMOTE, "remote"));
    } else {
        skip(s, "remote-engine batches", "remote");
    }
    if reach.ce {
        list.push((ENGINE_CE, "ce"));
    } else {
        skip(s, "copy-engine batches", "copy");
    }
    let ck = &mut s.ck;
    for (engine, name) in list {
        for qmode in [0i32, 1] {
            let tag = 60 + engine as usize * 2 + qmode as usize;
            b.src.copy_from(0, &pattern(me, NMAX, tag)).unwrap();
            b.dst.fill(0xee).expect("local access to the symmetric heap");
            ctx.barrier_all().unwrap();
            let args = [
                a(&b.dst),
                a(&b.src),
                A::U64(n as u64),
                A::U32(count as u32),
                A::I32(engine),
                a(&entries),
                A::U32(8),
                A::I32(qmode),
                A::I32(right as i32),
            ];
            launch(g, m, "en_batch", 1, 1, &args);
            ctx.barrier_all().unwrap();
            let got = b.dst.to_vec().expect("local access to the symmetric heap");
            let bad = (0..NMAX).filter(|&i| got[i] != if i < count * n { byte_pat(left, i, tag) } else { 0xee }).count();
            let q = if qmode == 0 { "engine quiet" } else { "rshmem_quiet" };
            ck.case(&format!("batch of {count} {name} puts of {n} B (capacity 8), {q}"), bad == 0, || format!("{bad} bytes wrong"));
            ctx.barrier_all().unwrap();
        }
    }
}

/// 2-D put and get at each scope and on the copy engine: 9 rows of 100 B, destination
/// pitch 160, source pitch 128.
fn two_d(s: &mut GpuRun, reach: Reach) {
    let GpuRun { ctx, g, m, me, right, left, .. } = *s;
    let ck = &mut s.ck;
    let (rows, row, dp, sp) = (9usize, 100usize, 160usize, 128usize);
    let src = ctx.alloc::<u8>(rows * sp).unwrap();
    let dst = ctx.alloc::<u8>(rows * dp).unwrap();
    let expect = |from: usize, tag: usize, j: usize| -> u8 {
        let (r, c) = (j / dp, j % dp);
        if c < row {
            byte_pat(from, r * sp + c, tag)
        } else {
            0xee
        }
    };
    let scopes = if reach.ce { 0..4i32 } else { 0..3 };
    for get in [0i32, 1] {
        for scope in scopes.clone() {
            let tag = 70 + get as usize * 4 + scope as usize;
            src.copy_from(0, &pattern(me, rows * sp, tag)).unwrap();
            dst.fill(0xee).expect("local access to the symmetric heap");
            ctx.barrier_all().unwrap();
            let args = [
                a(&dst),
                a(&src),
                A::U64(rows as u64),
                A::U64(row as u64),
                A::U64(dp as u64),
                A::U64(sp as u64),
                A::I32(scope),
                A::I32(get),
                A::I32(right as i32),
            ];
            launch(g, m, "en_2d", 1, 64, &args);
            ctx.barrier_all().unwrap();
            let got = dst.to_vec().expect("local access to the symmetric heap");
            let from = if get == 1 { right } else { left };
            let bad = (0..rows * dp).filter(|&j| got[j] != expect(from, tag, j)).count();
            let what = format!(
                "{} {} 9 x 100 B, pitches 160/128",
                if get == 1 { "get2d_nbi" } else { "put2d_nbi" },
                ["thread", "warp", "block", "copy engine"][scope as usize]
            );
            ck.case(&what, bad == 0, || format!("{bad} bytes wrong"));
            ctx.barrier_all().unwrap();
        }
    }
}

/// L2 prefetch at each scope (a hint: checked to run and leave the data as it is).
fn prefetch(s: &mut GpuRun) {
    let GpuRun { ctx, g, m, me, right, .. } = *s;
    let ck = &mut s.ck;
    let n = (1usize << 20) + 77;
    let buf = ctx.alloc::<u8>(n).unwrap();
    let out = ctx.alloc::<u64>(2).unwrap();
    buf.copy_from(0, &pattern(me, n, 80)).unwrap();
    ctx.barrier_all().unwrap();
    let sum = |pe: usize| pattern(pe, n, 80).iter().map(|&b| b as u64).sum::<u64>();
    for scope in 0..3i32 {
        out.fill(0).expect("local access to the symmetric heap");
        // Offset 3: an unaligned start, so the bulk form's head and tail run too.
        let off = 3u64;
        launch(
            g,
            m,
            "en_prefetch",
            1,
            64,
            &[
                A::U64(buf.addr() as u64 + off),
                A::U64(buf.addr() as u64 + off),
                A::U64(n as u64 - off),
                A::I32(scope),
                A::I32(right as i32),
                a(&out),
            ],
        );
        let (ra, la) = (out.read(0).unwrap(), out.read(1).unwrap());
        let skip_sum = |pe: usize| sum(pe) - pattern(pe, 3, 80).iter().map(|&b| b as u64).sum::<u64>();
        // A peer without a mapping (RSHMEM_TRANSPORT=ucx) has no rshmem_ptr: the kernel sums nothing there.
        let want_r = if ctx.engine_reaches(Engine::Sm, right) { skip_sum(right) } else { 0 };
        let want_l = skip_sum(me);
        ck.case(
            &format!("prefetch_nbi / cmo_nbi {} then reads", ["thread", "warp", "block"][scope as usize]),
            ra == want_r && la == want_l,
            || format!("sums {ra} / {la}, expected {want_r} / {want_l}"),
        );
    }
    ctx.barrier_all().unwrap();
}

/// 32-bit signals: 256 adds and a set from the left PE, waited for on the device.
fn signal32(s: &mut GpuRun) {
    let GpuRun { ctx, g, m, right, .. } = *s;
    let ck = &mut s.ck;
    let sig = ctx.alloc::<u32>(2).unwrap();
    let sig2 = ctx.alloc::<u32>(1).unwrap();
    let out = ctx.alloc::<u32>(2).unwrap();
    sig.fill(0).expect("local access to the symmetric heap");
    sig2.fill(0).expect("local access to the symmetric heap");
    ctx.barrier_all().unwrap();
    launch(g, m, "en_sig32_send", 4, 64, &[a(&sig), a(&sig2), A::U32(0xabc), A::I32(right as i32)]);
    launch(g, m, "en_sig32_wait", 1, 1, &[a(&sig), a(&sig2), A::U32(0xabc), A::U32(256), a(&out)]);
    ctx.barrier_all().unwrap();
    let (a0, a1, next) = (out.read(0).unwrap(), out.read(1).unwrap(), sig.read(1).unwrap());
    ck.case(
        "signal32_op: 256 adds and a set arrive, signal32_wait_until sees them; the next word untouched",
        a0 == 256 && a1 == 0xabc && next == 0,
        || format!("add word {a0}, set word {a1:#x}, neighbour {next}"),
    );
    ctx.barrier_all().unwrap();
}

/// rshmemx_team_pe_mapping against rshmem_team_translate_pe to the world, on the world and
/// the shared team.
fn team_map(s: &mut GpuRun) {
    let GpuRun { ctx, g, m, n, .. } = *s;
    let ck = &mut s.ck;
    let out = ctx.alloc::<i32>(2 * n + 4).unwrap();
    for (team, name) in [(rshmem::Team::WORLD, "world"), (rshmem::Team::SHARED, "shared")] {
        let slot = ctx.device_team(team).unwrap();
        let size = ctx.team_n_pes(team).unwrap();
        out.fill(-9).expect("local access to the symmetric heap");
        launch(g, m, "en_team_map", 1, 1, &[A::I32(slot), A::I32(size as i32), a(&out)]);
        let got = out.to_vec().expect("local access to the symmetric heap");
        let (map, tr) = (&got[..size + 2], &got[size + 2..2 * size + 4]);
        let world_ok = team != rshmem::Team::WORLD || (0..size).all(|i| map[i + 1] == i as i32);
        let ok = map == tr && map[0] == -1 && map[size + 1] == -1 && world_ok;
        ck.case(&format!("team_pe_mapping on the {name} team ({size} PEs) = translate to world"), ok, || {
            format!("mapping {map:?}, translate {tr:?}")
        });
    }
    ctx.barrier_all().unwrap();
}

/// The misuse modes: the kernel must stop with the device's message.
fn misuse(s: &GpuRun, mode: &str) -> ! {
    let GpuRun { ctx, g, m, right, .. } = *s;
    let (engine, kernel) = match mode {
        "misuse-ce" => (Some(Engine::CopyEngine), "en_misuse_ce"),
        "misuse-remote" => (Some(Engine::Remote), "en_misuse_remote"),
        _ => (None, "en_misuse_relay"),
    };
    if engine.is_some_and(|e| ctx.engine_reaches(e, right)) {
        eprintln!("gpu_engines: {mode}: the engine reaches PE {right} in this run: nothing to misuse (use RSHMEM_TRANSPORT=ucx for misuse-ce, no RSHMEM_REMOTE_ENGINE for misuse-remote)");
        std::process::exit(2);
    }
    let buf = ctx.alloc::<u8>(64).unwrap();
    ctx.barrier_all().unwrap();
    // SAFETY: the kernel's parameters are (char*, const char*, int); the buffer is live.
    let launched = unsafe { m.launch(kernel, LaunchConfig::new(1, 1), None, &[a(&buf), a(&buf), A::I32(right as i32)]) };
    let r = launched.and_then(|_| g.synchronize());
    match r {
        Err(e) => {
            println!("gpu_engines: PE {}: {mode}: the kernel stopped as it should: {e}", ctx.my_pe());
            std::process::exit(0)
        }
        Ok(()) => {
            println!("RSHMEM-CHECK pe={} program=gpu_engines name={mode} result=fail detail=\"the kernel completed\"", ctx.my_pe());
            std::process::exit(1)
        }
    }
}

/// Median of `v` (sorted in place).
fn median(v: &mut [f64]) -> f64 {
    v.sort_by(|a, b| a.partial_cmp(b).unwrap());
    v[v.len() / 2]
}

/// Timings, PE 0 to PE 1 (the others wait on the host).
fn bench(s: &mut GpuRun, reach: Reach) {
    let GpuRun { ctx, g, m, me, .. } = *s;
    let max = 256usize << 20;
    let src = ctx.alloc::<u8>(max).unwrap();
    let dst = ctx.alloc::<u8>(max).unwrap();
    let out = ctx.alloc::<u64>(3).unwrap();
    let entries = ctx.alloc::<u8>(256 * ENTRY).unwrap();
    let ov = Overlap {
        src: ctx.alloc::<u8>(1 << 30).unwrap(),
        dst: ctx.alloc::<u8>(1 << 30).unwrap(),
        t: ctx.alloc::<u64>(4).unwrap(),
        sink: ctx.alloc::<f32>(1).unwrap(),
    };
    ctx.barrier_all().unwrap();
    if me == 0 {
        let sms = g.sm_count().unwrap_or(1);
        // Seconds per launch of `kernel`, timed with events over `iters` back-to-back
        // launches (median of 3).
        let per_launch = |kernel: &str, blocks: u32, threads: u32, args: &[A], iters: usize| -> f64 {
            launch(g, m, kernel, blocks, threads, args);
            let mut t = Vec::new();
            for _ in 0..3 {
                let timer = g.timer().unwrap();
                timer.start(g.stream()).unwrap();
                for _ in 0..iters {
                    // SAFETY: the argument kinds match the kernel's signature in engines.cu.
                    unsafe { m.launch(kernel, LaunchConfig::new(blocks, threads), None, args) }.unwrap();
                }
                t.push(timer.stop_ms(g.stream()).unwrap() as f64 / 1e3 / iters as f64);
            }
            g.synchronize().unwrap();
            median(&mut t)
        };
        println!("bench: one put per launch, PE 0 to PE 1, launch included; 'SMs' = blocks the transfer occupies");
        println!("{:>8} {:>6} {:>12} {:>11} {:>9}", "engine", "SMs", "bytes", "us", "GB/s");
        let mut sizes = Vec::new();
        let mut b = 4096usize;
        while b <= max {
            sizes.push(b);
            b *= 4;
        }
        let mut rows: Vec<(&str, u32, i32)> = vec![("sm", 1, EN_SM), ("sm", sms as u32, EN_SM)];
        if reach.ce {
            rows.push(("ce", 0, EN_CE));
        }
        if reach.remote {
            rows.push(("remote", 0, EN_REMOTE));
        }
        for &bytes in &sizes {
            let iters = if bytes <= 1 << 20 {
                100
            } else if bytes <= 16 << 20 {
                10
            } else {
                3
            };
            for &(name, blocks, engine) in &rows {
                // The remote engine stages through 1 MiB of host memory: keep its big sizes short.
                if engine == EN_REMOTE && bytes > 64 << 20 {
                    continue;
                }
                let args = [a(&dst), a(&src), A::U64(bytes as u64), A::I32(engine), A::I32(1)];
                // 512 threads, as in `overlap`: at 1024 en_bench asks for more registers than a
                // block may have (CUDA_ERROR_LAUNCH_OUT_OF_RESOURCES on the H200).
                let (grid, threads) = if engine == EN_SM { (blocks, 512) } else { (1, 32) };
                let sec = per_launch("en_bench", grid, threads, &args, iters);
                let used = if engine == EN_SM { blocks.to_string() } else { "0 (+1 thread)".into() };
                println!("{name:>8} {used:>6} {bytes:>12} {:>11.2} {:>9.2}", sec * 1e6, bytes as f64 / sec / 1e9);
            }
        }
        // The device-to-device copy limit (one local cudaMemcpyAsync of 256 MiB).
        let timer = g.timer().unwrap();
        timer.start(g.stream()).unwrap();
        for _ in 0..3 {
            g.cuda_copy_async(dst.addr() as u64, src.addr() as u64, max, g.stream()).unwrap();
        }
        let sec = timer.stop_ms(g.stream()).unwrap() as f64 / 1e3 / 3.0;
        println!("anchor: local device-to-device copy of 256 MiB: {:.2} GB/s", max as f64 / sec / 1e9);
        // Batched vs unbatched: 256 puts of 4 KiB through one engine, then quiet.
        for (engine, name, ok) in [(ENGINE_CE, "ce", reach.ce), (ENGINE_REMOTE, "remote", reach.remote)] {
            if !ok {
                continue;
            }
            let n = 4096u64;
            let batched = [a(&dst), a(&src), A::U64(n), A::U32(256), A::I32(engine), a(&entries), A::U32(256), A::I32(1), A::I32(1)];
            let single = [a(&dst), a(&src), A::U64(n), A::U32(256), A::I32(engine), A::I32(1)];
            let tb = per_launch("en_batch", 1, 1, &batched, 10);
            let tu = per_launch("en_unbatched", 1, 1, &single, 10);
            println!(
                "batch: 256 {name} puts of 4 KiB + quiet: batched {:.1} us ({:.0} requests/s), one by one {:.1} us ({:.0} requests/s)",
                tb * 1e6,
                256.0 / tb,
                tu * 1e6,
                256.0 / tu
            );
        }
        if reach.ce {
            overlap(&ov, g, m, sms);
        }
        launch(g, m, "en_quiet_cost", 1, 1, &[A::I32(1000), a(&out)]);
        let (q, f, bare) = (out.read(0).unwrap(), out.read(1).unwrap(), out.read(2).unwrap());
        println!(
            "cost: empty rshmem_quiet {:.3} us, empty rshmem_fence {:.3} us, the bare memory fence {:.3} us (1000 each, one thread)",
            q as f64 / 1e6,
            f as f64 / 1e6,
            bare as f64 / 1e6
        );
    }
    ctx.barrier_all().unwrap();
}

/// Buffers of [`overlap`]: 1 GiB source and destination, timestamps, a sink.
struct Overlap {
    src: Sym<u8>,
    dst: Sym<u8>,
    t: Sym<u64>,
    sink: Sym<f32>,
}

/// A compute kernel on every SM beside a 1 GiB x 16 transfer to PE 1: its slowdown with SM
/// puts and with copy-engine puts, and the transfer's bandwidth each way (PE 0 only).
fn overlap(ov: &Overlap, g: &rshmem::gpu::Gpu, m: &rshmem::gpu::Module, sms: usize) {
    let n = 1usize << 30;
    let reps = 16i32;
    let Overlap { src, dst, t, sink } = ov;
    let (s1, s2) = (g.new_stream().unwrap(), g.new_stream().unwrap());
    let fma_grid = (sms * 16) as u32;
    let reset = || t.copy_from(0, &[u64::MAX, 0, u64::MAX, 0]).unwrap();
    let span = |i: usize| -> f64 {
        let v = t.to_vec().unwrap();
        (v[i + 1] - v[i]) as f64 / 1e6
    };
    // SAFETY (every launch below): the argument kinds match the kernels in engines.cu; the
    // buffers are live symmetric allocations.
    let fma = |iters: i32, stream: &rshmem::gpu::cuda::Stream| unsafe {
        m.launch("en_fma", LaunchConfig::new(fma_grid, 256), Some(stream), &[A::I32(iters), a(sink), A::U64(t.addr() as u64)]).unwrap()
    };
    let xfer = |engine: i32, stream: &rshmem::gpu::cuda::Stream| unsafe {
        // 512 threads: at 1024 the kernel asks for more registers than a block may have
        // (CUDA_ERROR_LAUNCH_OUT_OF_RESOURCES on the H200).
        let (grid, threads) = if engine == EN_SM { (sms as u32, 512) } else { (1, 32) };
        m.launch(
            "en_xfer",
            LaunchConfig::new(grid, threads),
            Some(stream),
            &[a(dst), a(src), A::U64(n as u64), A::I32(engine), A::I32(reps), A::I32(1), A::U64(t.addr() as u64 + 16)],
        )
        .unwrap()
    };
    // Calibrate the compute kernel to about 40 ms alone.
    let mut iters = 1 << 16;
    let alone = loop {
        reset();
        fma(iters, &s1);
        g.synchronize().unwrap();
        let ms = span(0);
        if ms > 20.0 || iters > 1 << 26 {
            break ms;
        }
        iters = (iters as f64 * (40.0 / ms.max(0.01))).min((1u64 << 27) as f64) as i32;
    };
    let gib = (n as f64 * reps as f64) / 1e9;
    println!("overlap: compute kernel ({fma_grid} blocks x 256 threads, FMA) alone {alone:.2} ms; transfers of {reps} x 1 GiB to PE 1");
    for (engine, name) in [(EN_SM, "sm puts (every SM)"), (EN_CE, "copy-engine puts")] {
        reset();
        xfer(engine, &s2);
        g.synchronize().unwrap();
        let x_alone = span(2);
        // The transfer first: its kernel is on the GPU before the compute kernel's blocks
        // fill every SM (a copy-engine transfer then holds one block while it waits in
        // ce_quiet; an SM transfer holds its SMs until it is done).
        reset();
        xfer(engine, &s2);
        fma(iters, &s1);
        g.synchronize().unwrap();
        let (c, x) = (span(0), span(2));
        // Whether the two really ran at once: both kernels' spans on the GPU's clock, the
        // time they overlapped and the time until both were done (the makespan), against
        // the sum of their times alone (what running one after the other costs).
        let v = t.to_vec().unwrap();
        let ms = |ns: u64| ns as f64 / 1e6;
        let both = ms(v[1].max(v[3]) - v[0].min(v[2]));
        let overlapped = ms(v[1].min(v[3]).saturating_sub(v[0].max(v[2])));
        println!(
            "overlap: {name:<20} transfer alone {:.1} GB/s; beside compute: compute {c:.2} ms ({:.2}x slowdown), transfer {:.1} GB/s; \
             ran at once for {overlapped:.2} ms, both done in {both:.2} ms (one after the other: {:.2} ms)",
            gib / (x_alone / 1e3),
            c / alone,
            gib / (x / 1e3),
            alone + x_alone
        );
    }
}

/// Relayed puts and gets: in round (d, r), every PE sends to the PE `d` to its right through
/// the PE `r` to its right (all distinct), at thread, warp and block scope, 8 B to 3 MiB,
/// quieted by rshmem_quiet or the remote quiet; every byte of the destination is checked.
/// Then PE 0's put to PE 2 through PE 1 is timed beside the remote engine's direct put.
fn relay(s: &mut GpuRun) {
    let GpuRun { ctx, g, m, me, .. } = *s;
    let n = ctx.n_pes();
    if n < 3 {
        eprintln!("gpu_engines: relay needs at least 3 PEs");
        std::process::exit(2);
    }
    if !(1..n).all(|r| ctx.engine_reaches(Engine::Remote, (me + r) % n)) {
        eprintln!("gpu_engines: relay needs the remote engine to every peer (RSHMEM_REMOTE_ENGINE=ucx)");
        std::process::exit(2);
    }
    let b = Bulk { src: ctx.alloc::<u8>(NMAX).unwrap(), dst: ctx.alloc::<u8>(NMAX).unwrap() };
    let local = ctx.alloc::<u8>(NMAX).unwrap();
    let t0 = std::time::Instant::now();
    let mut k = 0usize;
    for d in 1..n {
        for r in (1..n).filter(|&r| r != d) {
            let (pe, relay_pe, from) = ((me + d) % n, (me + r) % n, (me + n - d) % n);
            for len in [8usize, 64, 65, 4099, NMAX] {
                k += 1;
                let (scope, qmode, tag) = ((k % 3) as i32, (k % 2) as i32, 100 + k);
                let sname = ["thread", "warp", "block"][scope as usize];
                let qname = ["remote quiet", "rshmem_quiet"][qmode as usize];
                b.src.copy_from(0, &pattern(me, NMAX, tag)).unwrap();
                b.dst.fill(0xee).expect("local access to the symmetric heap");
                ctx.barrier_all().unwrap();
                let args = |dst: &Sym<u8>, get: i32| {
                    [
                        a(dst),
                        a(&b.src),
                        A::U64(len as u64),
                        A::I32(scope),
                        A::I32(get),
                        A::I32(qmode),
                        A::I32(pe as i32),
                        A::I32(relay_pe as i32),
                    ]
                };
                launch(g, m, "en_relay", 1, 64, &args(&b.dst, 0));
                ctx.barrier_all().unwrap();
                let got = b.dst.to_vec().expect("local access to the symmetric heap");
                let bad = (0..NMAX).filter(|&i| got[i] != if i < len { byte_pat(from, i, tag) } else { 0xee }).count();
                s.ck.case(&format!("relay put {sname} {len} B, {qname}"), bad == 0, || {
                    format!("{bad} bytes wrong in the put from PE {from} through PE {}", (from + r) % n)
                });
                // Get: this PE reads PE `pe`'s source (its pattern, same tag) through the relay.
                local.fill(0xee).expect("local access to the symmetric heap");
                launch(g, m, "en_relay", 1, 64, &args(&local, 1));
                let got = local.to_vec().expect("local access to the symmetric heap");
                let bad = (0..NMAX).filter(|&i| got[i] != if i < len { byte_pat(pe, i, tag) } else { 0xee }).count();
                s.ck.case(&format!("relay get {sname} {len} B, {qname}"), bad == 0, || {
                    format!("{bad} bytes wrong in the get from PE {pe} through PE {relay_pe}")
                });
                ctx.barrier_all().unwrap();
            }
        }
    }
    println!("gpu_engines: PE {me}: relay checks took {:.1} s", t0.elapsed().as_secs_f64());
    let max = 64usize << 20;
    let src = ctx.alloc::<u8>(max).unwrap();
    let dst = ctx.alloc::<u8>(max).unwrap();
    src.copy_from(0, &pattern(me, max, 7)).unwrap();
    dst.fill(0xee).expect("local access to the symmetric heap");
    ctx.barrier_all().unwrap();
    if me == 0 {
        println!(
            "relay: PE 0 to PE 2, one put per launch + remote quiet (launch included), relayed through PE 1 vs the remote engine straight"
        );
        println!("{:>12} {:>13} {:>11} {:>13} {:>11}", "bytes", "relayed us", "GB/s", "direct us", "GB/s");
        let mut bytes = 4096usize;
        while bytes <= max {
            let iters = if bytes <= 1 << 20 { 20 } else { 3 };
            let time = |relay_pe: i32| {
                let args = [a(&dst), a(&src), A::U64(bytes as u64), A::I32(2), A::I32(relay_pe)];
                launch(g, m, "en_relay_bench", 1, 1, &args);
                let mut t = Vec::new();
                for _ in 0..3 {
                    let timer = g.timer().unwrap();
                    timer.start(g.stream()).unwrap();
                    for _ in 0..iters {
                        // SAFETY: the argument kinds match en_relay_bench in engines.cu.
                        unsafe { m.launch("en_relay_bench", LaunchConfig::new(1, 1), None, &args) }.unwrap();
                    }
                    t.push(timer.stop_ms(g.stream()).unwrap() as f64 / 1e3 / iters as f64);
                }
                g.synchronize().unwrap();
                median(&mut t)
            };
            let (tr, td) = (time(1), time(-1));
            let gbs = |t: f64| bytes as f64 / t / 1e9;
            println!("{bytes:>12} {:>13.1} {:>11.3} {:>13.1} {:>11.3}", tr * 1e6, gbs(tr), td * 1e6, gbs(td));
            bytes *= 4;
        }
    }
    ctx.barrier_all().unwrap();
    // Every timed put wrote the first bytes of PE 0's source to PE 2: check them there.
    if me == 2 {
        let got = dst.to_vec().expect("local access to the symmetric heap");
        let bad = (0..max).filter(|&i| got[i] != byte_pat(0, i, 7)).count();
        s.ck.case("relay bench: PE 2 holds PE 0's 64 MiB", bad == 0, || format!("{bad} bytes wrong"));
    }
    ctx.barrier_all().unwrap();
}
