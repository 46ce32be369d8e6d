//! The GPU test suite: every device op family at thread, warp and block scope, put_signal
//! ordering, exact atomic counts, device barriers and teams, the host API and the
//! stream-ordered API on GPU heaps, checked on the GPU host. Run with
//! `rshmemrun -n 2 gpu_suite` (also 4 PEs; several PEs may share one GPU).
//! Prints a verdict line per check as it is made (tests/support: `RSHMEM-CHECK ...`) and a
//! summary per PE; exits non-zero if any check failed.

#[path = "../support/mod.rs"]
mod support;

#[path = "../support/gpu.rs"]
mod gpu_support;
use gpu_support::{a, launch, run_gpu_program, GpuRun};
use rshmem::gpu::{KernelArg as A, LaunchConfig};
use rshmem::{Cmp, SignalOp, Team, TeamConfig};
use support::Check;

const SRC: &str = include_str!("suite.cu");

/// The word a PE writes at index `i` under `tag`.
fn pat(pe: usize, i: usize, tag: u64) -> u64 {
    ((pe as u64) << 40) | (tag << 32) | i as u64
}

fn main() {
    run_gpu_program("gpu_suite", |ctx, g| suite(&ctx, &g))
}

/// The suite on one PE; whether every check passed.
fn suite(ctx: &rshmem::Ctx, g: &rshmem::gpu::Gpu) -> bool {
    let n = ctx.n_pes();
    if ctx.my_pe() == 0 {
        println!("gpu_suite: {n} PEs on {} ({}, {} SMs), heap in GPU memory", g.device_name(), g.arch(), g.sm_count().unwrap_or(0));
    }
    let m = g.compile("suite", SRC, &[]).expect("compile suite kernels");
    let mut s = GpuRun::new("gpu_suite", ctx, g, &m);
    if std::env::args().any(|a| a == "--bad-pe") {
        return bad_pe(&mut s);
    }
    let sections: [fn(&mut GpuRun); 11] =
        [bulk, typed_nbi, p_and_g, strided, atomics, signals, waits, barriers, device_teams, host_api, stream_api];
    for section in sections {
        section(&mut s);
    }
    s.conclude()
}

/// Device-side checks (RSHMEM_DEVICE_DEBUG=1): a put to PE 1000 must stop the kernel with
/// a message naming the call and the PE, and surface as an error here. Alone: the kernel's
/// trap leaves the context unusable.
fn bad_pe(s: &mut GpuRun) -> bool {
    let t = s.ctx.alloc::<i32>(1).unwrap();
    // SAFETY: bad_pe takes one pointer; the kernel traps by design.
    unsafe { s.m.launch("bad_pe", LaunchConfig::new(1, 32), None, &[a(&t)]) }.unwrap();
    let r = s.g.synchronize();
    let detail = match &r {
        Err(e) => format!("the device check stopped the kernel: {e}"),
        Ok(()) => "an out-of-range PE in a device call was not caught (is RSHMEM_DEVICE_DEBUG=1 set?)".to_string(),
    };
    s.ck.ok("device_check_stops_bad_pe", r.is_err(), detail);
    std::mem::replace(&mut s.ck, Check::new("gpu_suite", s.me)).finish()
}

/// Bulk put/get at each scope, odd and aligned sizes; unaligned bytes.
fn bulk(s: &mut GpuRun) {
    let GpuRun { ctx, g, m, me, right, left, .. } = *s;
    let ck = &mut s.ck;
    let nmax = 100_003usize;
    let src = ctx.alloc::<u64>(nmax).unwrap();
    let dst = ctx.alloc::<u64>(nmax).unwrap();
    for (scope, sname) in [(0i32, "thread"), (1, "warp"), (2, "block")] {
        for len in [1usize, 31, 4096, nmax] {
            let tag = (scope as usize * 10 + len % 7) as u64 + 1;
            src.copy_from(0, &(0..nmax).map(|i| pat(me, i, tag)).collect::<Vec<_>>()).unwrap();
            dst.fill(u64::MAX).expect("local access to the symmetric heap");
            ctx.barrier_all().unwrap();
            launch(g, m, "put_scope", 1, 256, &[a(&dst), a(&src), A::U64(len as u64), A::I32(scope), A::I32(right as i32)]);
            ctx.barrier_all().unwrap();
            let got = dst.to_vec().expect("local access to the symmetric heap");
            let bad = (0..nmax).filter(|&i| got[i] != if i < len { pat(left, i, tag) } else { u64::MAX }).count();
            ck.case(&format!("putmem {sname} {len} words"), bad == 0, || format!("{bad} words wrong"));
            // get back what the right neighbour has in src
            dst.fill(0).expect("local access to the symmetric heap");
            ctx.barrier_all().unwrap();
            launch(g, m, "get_scope", 1, 256, &[a(&dst), a(&src), A::U64(len as u64), A::I32(scope), A::I32(right as i32)]);
            let got = dst.to_vec().expect("local access to the symmetric heap");
            let bad = (0..len).filter(|&i| got[i] != pat(right, i, tag)).count();
            ck.case(&format!("getmem {sname} {len} words"), bad == 0, || format!("{bad} words wrong"));
            ctx.barrier_all().unwrap();
        }
    }
    // unaligned bytes
    let bs = ctx.alloc::<u8>(4099).unwrap();
    let bd = ctx.alloc::<u8>(4099).unwrap();
    bs.copy_from(0, &(0..4099).map(|i| (i as u8) ^ (me as u8 * 31)).collect::<Vec<_>>()).unwrap();
    bd.fill(0).expect("local access to the symmetric heap");
    ctx.barrier_all().unwrap();
    launch(g, m, "put_bytes", 1, 128, &[A::U64(bd.addr_of(3) as u64), A::U64(bs.addr_of(1) as u64), A::U64(4093), A::I32(right as i32)]);
    ctx.barrier_all().unwrap();
    let got = bd.to_vec().expect("local access to the symmetric heap");
    let bad = (0..4093).filter(|&i| got[3 + i] != ((i + 1) as u8) ^ (left as u8 * 31)).count() + usize::from(got[0] != 0 || got[4098] != 0);
    ck.case("char_put_block unaligned 4093 bytes", bad == 0, || format!("{bad} bytes wrong"));
}

/// Typed non-blocking puts completed by quiet.
fn typed_nbi(s: &mut GpuRun) {
    let GpuRun { ctx, g, m, me, right, left, .. } = *s;
    let ck = &mut s.ck;
    let (fs, ds, ss) = (ctx.alloc::<f32>(77).unwrap(), ctx.alloc::<f64>(77).unwrap(), ctx.alloc::<i16>(77).unwrap());
    let (fd, dd, sd) = (ctx.alloc::<f32>(77).unwrap(), ctx.alloc::<f64>(77).unwrap(), ctx.alloc::<i16>(77).unwrap());
    fs.copy_from(0, &(0..77).map(|i| i as f32 * 0.5 + me as f32).collect::<Vec<_>>()).unwrap();
    ds.copy_from(0, &(0..77).map(|i| i as f64 * 0.25 - me as f64).collect::<Vec<_>>()).unwrap();
    ss.copy_from(0, &(0..77).map(|i| i as i16 - 40 + me as i16).collect::<Vec<_>>()).unwrap();
    ctx.barrier_all().unwrap();
    launch(g, m, "put_typed", 1, 32, &[a(&fd), a(&dd), a(&sd), a(&fs), a(&ds), a(&ss), A::U64(77), A::I32(right as i32)]);
    ctx.barrier_all().unwrap();
    let ok = fd.to_vec().expect("local access to the symmetric heap").iter().enumerate().all(|(i, &v)| v == i as f32 * 0.5 + left as f32)
        && dd.to_vec().expect("local access to the symmetric heap").iter().enumerate().all(|(i, &v)| v == i as f64 * 0.25 - left as f64)
        && sd.to_vec().expect("local access to the symmetric heap").iter().enumerate().all(|(i, &v)| v == i as i16 - 40 + left as i16);
    ck.case("typed put_nbi float/double/short + quiet", ok, || "values differ".into());
}

/// p and g from many threads.
fn p_and_g(s: &mut GpuRun) {
    let GpuRun { ctx, g, m, me, right, left, .. } = *s;
    let ck = &mut s.ck;
    let pn = 70_000usize;
    let pi = ctx.alloc::<i32>(pn).unwrap();
    let po = ctx.alloc::<i32>(pn).unwrap();
    ctx.barrier_all().unwrap();
    launch(g, m, "p_many", (pn as u32).div_ceil(256), 256, &[a(&pi), A::I32(pn as i32), A::I32(1000 * me as i32), A::I32(right as i32)]);
    ctx.barrier_all().unwrap();
    let got = pi.to_vec().expect("local access to the symmetric heap");
    let bad = (0..pn).filter(|&i| got[i] != 1000 * left as i32 + i as i32).count();
    ck.case("int_p from 70000 threads", bad == 0, || format!("{bad} wrong"));
    launch(g, m, "g_many", (pn as u32).div_ceil(256), 256, &[a(&po), a(&pi), A::I32(pn as i32), A::I32(right as i32)]);
    let got = po.to_vec().expect("local access to the symmetric heap");
    let bad = (0..pn).filter(|&i| got[i] != 1000 * me as i32 + i as i32).count();
    ck.case("int_g from 70000 threads", bad == 0, || format!("{bad} wrong"));
}

/// Strided put and get.
fn strided(s: &mut GpuRun) {
    let GpuRun { ctx, g, m, me, right, left, .. } = *s;
    let ck = &mut s.ck;
    let sn = 50usize;
    let s_src = ctx.alloc_from(&(0..2 * sn).map(|i| i as i64 * 7 + me as i64).collect::<Vec<_>>()).unwrap();
    let s_dst = ctx.alloc::<i64>(3 * sn).unwrap();
    let s_back = ctx.alloc::<i64>(sn).unwrap();
    ctx.barrier_all().unwrap();
    launch(g, m, "iput_iget", 1, 1, &[a(&s_dst), a(&s_src), a(&s_back), A::I32(sn as i32), A::I32(right as i32)]);
    ctx.barrier_all().unwrap();
    let got = s_dst.to_vec().expect("local access to the symmetric heap");
    let ok_put = (0..3 * sn).all(|k| got[k] == if k % 3 == 0 { (k / 3 * 2) as i64 * 7 + left as i64 } else { 0 });
    let back = s_back.to_vec().expect("local access to the symmetric heap");
    let ok_get = (0..sn).all(|i| back[i] == (i * 2) as i64 * 7 + me as i64);
    ck.case("int64 iput (stride 3 <- 2)", ok_put, || format!("{:?}", &got[..9]));
    ck.case("int64 iget (stride 1 <- 3)", ok_get, || format!("{:?}", &back[..5]));
}

/// Atomics: tickets from every thread of every PE on PE 0's counter, then the rest of the set.
fn atomics(s: &mut GpuRun) {
    let GpuRun { ctx, g, m, me, n, .. } = *s;
    let ck = &mut s.ck;
    let threads = 32_768usize;
    let ctr = ctx.alloc::<u64>(1).unwrap();
    let tickets = ctx.alloc::<u64>(threads).unwrap();
    ctx.barrier_all().unwrap();
    launch(g, m, "amo_tickets", (threads / 256) as u32, 256, &[a(&ctr), a(&tickets), A::U64(threads as u64), A::I32(0)]);
    ctx.barrier_all().unwrap();
    let total = ctx.g(&ctr, 0, 0).unwrap();
    ck.case("fetch_add count exact", total == (threads * n) as u64, || format!("counter {total}, expected {}", threads * n));
    // gather every PE's tickets on PE 0 and check they form a permutation
    let all = ctx.alloc::<u64>(threads * n).unwrap();
    ctx.put(&all, me * threads, &tickets.to_vec().expect("local access to the symmetric heap"), 0).unwrap();
    ctx.barrier_all().unwrap();
    if me == 0 {
        let mut v = all.to_vec().expect("local access to the symmetric heap");
        v.sort_unstable();
        let perm = v.iter().enumerate().all(|(i, &t)| t == i as u64);
        ck.case("fetch_add tickets form a permutation", perm, || "duplicate or missing ticket".into());
    }
    // the rest of the set
    let words = ctx.alloc::<u64>(4).unwrap();
    words.copy_from(2, &[u64::MAX]).unwrap();
    let iw = ctx.alloc::<i32>(4).unwrap();
    let fw = ctx.alloc::<f32>(1).unwrap();
    let out = ctx.alloc::<u64>(8).unwrap();
    ctx.barrier_all().unwrap();
    let target = 1 % n;
    if me == 0 {
        launch(g, m, "amo_mix", 4, 256, &[a(&words), a(&iw), a(&fw), a(&out), A::I32(target as i32)]);
    }
    ctx.barrier_all().unwrap();
    if me == target {
        let w = words.to_vec().expect("local access to the symmetric heap");
        let i = iw.to_vec().expect("local access to the symmetric heap");
        let even: u64 = (0..64).filter(|b| b % 2 == 0).map(|b| 1u64 << b).sum();
        ck.case("atomic or/xor/and over 64 threads", w[0] == u64::MAX && w[1] == u64::MAX && w[2] == even, || format!("{w:x?}"));
        ck.case("atomic add/inc over 1000 threads", i[0] == 3000 && i[1] == 1000, || format!("{i:?}"));
        ck.case("compare_swap / swap results in memory", i[2] == 77 && i[3] == 5, || format!("{i:?}"));
    }
    if me == 0 {
        let o = out.to_vec().expect("local access to the symmetric heap");
        ck.case("compare_swap/swap/float set-fetch/fetch_inc returns", o[..6] == [0, 77, 0, 25, 0, 1], || format!("{:?}", &o[..6]));
    }
}

/// put_signal ordering at each scope (PE 0 sends to PE 1), signal_op ADD from many threads.
fn signals(s: &mut GpuRun) {
    let GpuRun { ctx, g, m, me, n, .. } = *s;
    let ck = &mut s.ck;
    if n >= 2 {
        let (len, rounds) = (257usize, 400usize);
        let data = ctx.alloc::<u64>(len * (rounds + 1)).unwrap();
        let ssrc = ctx.alloc::<u64>(len * (rounds + 1)).unwrap();
        let sig = ctx.alloc::<u64>(1).unwrap();
        let errs = ctx.alloc::<u64>(2).unwrap();
        for (scope, sname) in [(0i32, "thread"), (1, "warp"), (2, "block")] {
            sig.fill(0).expect("local access to the symmetric heap");
            data.fill(0).expect("local access to the symmetric heap");
            ctx.barrier_all().unwrap();
            if me == 0 {
                launch(
                    g,
                    m,
                    "signal_send",
                    1,
                    128,
                    &[a(&data), a(&sig), a(&ssrc), A::I32(len as i32), A::I32(rounds as i32), A::I32(scope), A::I32(1)],
                );
            } else if me == 1 {
                launch(g, m, "signal_recv", 1, 1, &[a(&data), a(&sig), A::I32(len as i32), A::I32(rounds as i32), a(&errs)]);
                let e = errs.to_vec().expect("local access to the symmetric heap");
                ck.case(&format!("put_signal {sname}: data before signal, {rounds} rounds"), e[0] == 0 && e[1] == rounds as u64, || {
                    format!("{} stale words, final signal {}", e[0], e[1])
                });
            }
            ctx.barrier_all().unwrap();
        }
        sig.fill(0).expect("local access to the symmetric heap");
        ctx.barrier_all().unwrap();
        launch(g, m, "signal_add", 64, 128, &[a(&sig), A::I32(0)]);
        ctx.barrier_all().unwrap();
        if me == 0 {
            let v = sig.load(0).unwrap();
            ck.case("signal_op ADD from 8192 threads per PE", v == (8192 * n) as u64, || format!("{v}"));
        }
    }
}

/// Every wait and test form on the device.
fn waits(s: &mut GpuRun) {
    let GpuRun { ctx, g, m, right, .. } = *s;
    let ck = &mut s.ck;
    let wn = 40usize;
    let ivars = ctx.alloc::<i64>(wn).unwrap();
    let vals = ctx.alloc::<i64>(wn).unwrap();
    let wout = ctx.alloc::<u64>(8).unwrap();
    ctx.barrier_all().unwrap();
    launch(g, m, "set_ivars", 1, 64, &[a(&ivars), A::I32(wn as i32), A::I32(right as i32)]);
    launch(g, m, "wait_forms", 1, 1, &[a(&ivars), A::I32(wn as i32), a(&vals), a(&wout)]);
    let o = wout.to_vec().expect("local access to the symmetric heap");
    ck.case("wait_until / all / any / some / test / vector forms", o[..6] == [wn as u64 - 1, 2, 0, 1, 2, 1], || format!("{:?}", &o[..6]));
    ctx.barrier_all().unwrap();
}

/// Device barriers, thread and block scope.
fn barriers(s: &mut GpuRun) {
    let GpuRun { ctx, g, m, .. } = *s;
    let ck = &mut s.ck;
    let bctr = ctx.alloc::<u64>(1).unwrap();
    let berr = ctx.alloc::<u64>(1).unwrap();
    ctx.barrier_all().unwrap();
    launch(g, m, "barrier_rounds", 1, 1, &[a(&bctr), A::I32(20), a(&berr)]);
    let e = berr.read(0).unwrap();
    ck.case("device barrier_all (thread), 20 rounds", e == 0, || format!("{e} rounds saw a short count"));
    ctx.barrier_all().unwrap();
    bctr.fill(0).expect("local access to the symmetric heap");
    ctx.barrier_all().unwrap();
    launch(g, m, "barrier_block", 1, 128, &[a(&bctr), A::I32(20), a(&berr)]);
    let e = berr.read(0).unwrap();
    ck.case("device barrier_all_block, 20 rounds", e == 0, || format!("{e} rounds saw a short count"));
    ctx.barrier_all().unwrap();
}

/// Team queries on the device.
fn device_teams(s: &mut GpuRun) {
    let GpuRun { ctx, g, m, me, n, .. } = *s;
    let ck = &mut s.ck;
    let evens = ctx.team_split_strided(Team::WORLD, 0, 2, n.div_ceil(2), TeamConfig::default()).unwrap();
    let tout = ctx.alloc::<i32>(8).unwrap();
    if !evens.is_invalid() {
        let dt = ctx.device_team(evens).unwrap();
        launch(g, m, "team_info", 1, 1, &[A::I32(dt), a(&tout)]);
        let t = tout.to_vec().expect("local access to the symmetric heap");
        ck.case(
            "device team queries on an even-PE team",
            t[..6] == [(me / 2) as i32, n.div_ceil(2) as i32, 0, me as i32, n as i32, 1],
            || format!("{:?}", &t[..6]),
        );
    }
    ctx.barrier_all().unwrap();
    if !evens.is_invalid() {
        ctx.team_destroy(evens).unwrap();
    }
}

/// The host API on the GPU heap.
fn host_api(s: &mut GpuRun) {
    let GpuRun { ctx, me, n, right, left, .. } = *s;
    let ck = &mut s.ck;
    let h = ctx.alloc::<u64>(1000).unwrap();
    let v: Vec<u64> = (0..1000).map(|i| pat(me, i, 9)).collect();
    ctx.put(&h, 0, &v, right).unwrap();
    ctx.barrier_all().unwrap();
    let mut back = vec![0u64; 1000];
    ctx.get(&mut back, &h, 0, left).unwrap();
    let mine = h.to_vec().expect("local access to the symmetric heap");
    let bad_mine: Vec<(usize, u64)> = mine.iter().copied().enumerate().filter(|&(i, x)| x != pat(left, i, 9)).take(3).collect();
    let lefts_left = (left + n - 1) % n;
    let bad_back: Vec<(usize, u64)> = back.iter().copied().enumerate().filter(|&(i, x)| x != pat(lefts_left, i, 9)).take(3).collect();
    ck.case("host put on GPU heap (from the left PE)", bad_mine.is_empty(), || {
        format!("first bad (index, value): {bad_mine:x?}, expected PE {left}'s pattern")
    });
    ck.case("host get from GPU heap (of the left PE)", bad_back.is_empty(), || {
        format!("first bad (index, value): {bad_back:x?}, expected PE {lefts_left}'s pattern")
    });
    // Every PE has read its copy before PE 0's is overwritten below.
    ctx.barrier_all().unwrap();
    ctx.p(&h, 5, 4242u64, 0).unwrap();
    ctx.barrier_all().unwrap();
    ck.case("host p/g on GPU heap", ctx.g(&h, 5, 0).unwrap() == 4242, || "g differs".into());
    ctx.barrier_all().unwrap();
}

/// The stream-ordered API, once directly and once replayed from a captured graph; waits and signals on streams.
fn stream_api(s: &mut GpuRun) {
    let GpuRun { ctx, g, me, right, left, .. } = *s;
    let ck = &mut s.ck;
    let st = g.new_stream().unwrap();
    let sflag = ctx.alloc::<u64>(1).unwrap();
    let sdata = ctx.alloc::<u64>(4096).unwrap();
    let ssrc2 = ctx.alloc_from(&(0..4096).map(|i| pat(me, i, 3)).collect::<Vec<_>>()).unwrap();
    ctx.barrier_all().unwrap();
    ctx.put_on_stream(&sdata, 0, &ssrc2, 0, 4096, right, &st).unwrap();
    ctx.quiet_on_stream(&st).unwrap();
    ctx.barrier_all_on_stream(&st).unwrap();
    st.synchronize().unwrap();
    ck.case(
        "put_on_stream + quiet + barrier_on_stream",
        sdata.to_vec().expect("local access to the symmetric heap").iter().enumerate().all(|(i, &x)| x == pat(left, i, 3)),
        || "data missing".into(),
    );
    ctx.barrier_all().unwrap();
    sdata.fill(0).expect("local access to the symmetric heap");
    ctx.barrier_all().unwrap();
    st.begin_capture().unwrap();
    ctx.put_on_stream(&sdata, 0, &ssrc2, 0, 4096, right, &st).unwrap();
    ctx.quiet_on_stream(&st).unwrap();
    ctx.barrier_all_on_stream(&st).unwrap();
    let graph = st.end_capture().unwrap();
    // Every PE has its graph before any replays it: instantiating one may wait for the
    // kernels running on the context, which thread PEs share (see Stream::end_capture).
    ctx.barrier_all().unwrap();
    graph.launch(&st).unwrap();
    st.synchronize().unwrap();
    ck.case(
        "captured graph replay (put, quiet, barrier on stream)",
        sdata.to_vec().expect("local access to the symmetric heap").iter().enumerate().all(|(i, &x)| x == pat(left, i, 3)),
        || "data missing".into(),
    );
    // wait on stream: the left PE sets our flag from the host; each path separately, and
    // each wait bounded so a broken path fails instead of hanging the suite
    let ten = std::time::Duration::from_secs(10);
    for (cmp, what) in [(Cmp::Gt, "GT (kernel)"), (Cmp::Ge, "GE (stream memop)"), (Cmp::Eq, "EQ (stream memop)")] {
        let f = ctx.alloc::<u64>(1).unwrap();
        let st2 = g.new_stream().unwrap();
        ctx.barrier_all().unwrap();
        let v = if cmp == Cmp::Gt { 6 } else { 7 };
        ctx.wait_until_on_stream(&f, 0, cmp, v, &st2).unwrap();
        ctx.p(&f, 0, 7u64, right).unwrap();
        let done = st2.synchronize_timeout(ten).unwrap();
        ck.case(&format!("wait_until_on_stream {what}"), done && f.load(0).unwrap() == 7, || {
            format!("completed {done}, flag {}", f.load(0).unwrap())
        });
        ctx.barrier_all().unwrap();
        if !done {
            // Release the stuck stream so the suite can go on.
            ctx.p(&f, 0, u64::MAX / 2, me).unwrap();
        }
    }
    // signal on stream: SET then ADD to the right neighbour, then wait for ours
    ctx.barrier_all().unwrap();
    ctx.signal_on_stream(&sflag, 0, 100, SignalOp::Set, right, &st).unwrap();
    ctx.barrier_all_on_stream(&st).unwrap();
    ctx.signal_on_stream(&sflag, 0, 5, SignalOp::Add, right, &st).unwrap();
    ctx.wait_until_on_stream(&sflag, 0, Cmp::Ge, 105, &st).unwrap();
    let done = st.synchronize_timeout(ten).unwrap();
    ck.case("signal_on_stream SET and ADD, waited on stream", done && sflag.load(0).unwrap() == 105, || {
        format!("completed {done}, flag {}", sflag.load(0).unwrap())
    });
    ctx.barrier_all().unwrap();
}
