//! The GPU proxy check: device-initiated put/get (thread, nbi, block; inline and staged
//! sizes), p/g, strided, every atomic kind, fetch_inc tickets, put_signal + signal_wait
//! and device barriers, all to peers reached through each PE's host proxy and the staged
//! UCX transport, checked against a model; then a short latency/bandwidth print.
//!
//! Run as `RSHMEM_TRANSPORT=ucx UCX_TLS=tcp rshmemrun -n 2 gpu_proxy` (several PEs may
//! share one GPU). Prints a verdict line per check as it is made (tests/support:
//! `RSHMEM-CHECK ...`) and a summary per PE; exits non-zero if any check failed.

#[path = "../support/mod.rs"]
mod support;

#[path = "../support/gpu.rs"]
mod gpu_support;
use gpu_support::{a, launch, run_gpu_program, GpuRun};
use rshmem::gpu::KernelArg as A;
use rshmem::Sym;

const SRC: &str = include_str!("proxy.cu");

/// Bytes of the bulk buffers: more than the proxy's staging buffer.
const NMAX: usize = 3 * (1 << 20) + 17;

fn byte_pat(pe: usize, i: usize, tag: usize) -> u8 {
    (i.wrapping_mul(31) ^ (pe * 77) ^ (tag * 13)) as u8
}

/// The bulk source and destination buffers, `NMAX` bytes each.
struct Bulk {
    src: Sym<u8>,
    dst: Sym<u8>,
}

fn main() {
    run_gpu_program("gpu_proxy", |ctx, g| proxy(&ctx, &g))
}

/// The checks on one PE; whether every one passed.
fn proxy(ctx: &rshmem::Ctx, g: &rshmem::gpu::Gpu) -> bool {
    let (me, n) = (ctx.my_pe(), ctx.n_pes());
    if n < 2 {
        eprintln!("gpu_proxy: needs at least 2 PEs");
        std::process::exit(2);
    }
    if std::env::var("RSHMEM_TRANSPORT").ok().as_deref() != Some("ucx") {
        eprintln!("gpu_proxy: set RSHMEM_TRANSPORT=ucx so that every peer goes through the proxy");
        std::process::exit(2);
    }
    if me == 0 {
        println!("gpu_proxy: {n} PEs on {} ({}), every peer through the host proxy and staged UCX", g.device_name(), g.arch());
    }
    let m = g.compile("proxy", SRC, &[]).expect("compile proxy kernels");
    let mut s = GpuRun::new("gpu_proxy", ctx, g, &m);
    let t0 = std::time::Instant::now();
    let b = Bulk { src: ctx.alloc::<u8>(NMAX).unwrap(), dst: ctx.alloc::<u8>(NMAX).unwrap() };
    bulk(&mut s, &b);
    let sections: [fn(&mut GpuRun); 6] = [p_and_g, strided, atomics, tickets, signal_ring, barriers];
    for section in sections {
        section(&mut s);
    }
    println!("gpu_proxy: PE {me}: checks took {:.1} s", t0.elapsed().as_secs_f64());
    numbers(&mut s, &b);
    s.conclude()
}

/// Bulk put/get: inline (<= 64 B), just over, a page, more than the staging buffer.
fn bulk(s: &mut GpuRun, b: &Bulk) {
    let GpuRun { ctx, g, m, me, right, left, .. } = *s;
    let ck = &mut s.ck;
    for (mode, mname) in [(0i32, "putmem"), (1, "putmem_nbi"), (2, "putmem_block")] {
        for len in [8usize, 64, 65, 4099, NMAX] {
            let tag = mode as usize * 10 + len % 7;
            b.src.copy_from(0, &(0..NMAX).map(|i| byte_pat(me, i, tag)).collect::<Vec<_>>()).unwrap();
            b.dst.fill(0xee).expect("local access to the symmetric heap");
            ctx.barrier_all().unwrap();
            launch(g, m, "px_put", 1, 256, &[a(&b.dst), a(&b.src), A::U64(len as u64), A::I32(mode), A::I32(right as i32)]);
            ctx.barrier_all().unwrap();
            let got = b.dst.to_vec().expect("local access to the symmetric heap");
            let bad = (0..NMAX).filter(|&i| got[i] != if i < len { byte_pat(left, i, tag) } else { 0xee }).count();
            ck.case(&format!("{mname} {len} bytes"), bad == 0, || format!("{bad} bytes wrong"));
            ctx.barrier_all().unwrap();
        }
    }
    for (mode, mname) in [(0i32, "getmem"), (1, "getmem_nbi"), (2, "getmem_block")] {
        for len in [8usize, 65, 4099, NMAX] {
            let tag = 40 + mode as usize * 10 + len % 7;
            b.src.copy_from(0, &(0..NMAX).map(|i| byte_pat(me, i, tag)).collect::<Vec<_>>()).unwrap();
            b.dst.fill(0xee).expect("local access to the symmetric heap");
            ctx.barrier_all().unwrap();
            launch(g, m, "px_get", 1, 256, &[a(&b.dst), a(&b.src), A::U64(len as u64), A::I32(mode), A::I32(right as i32)]);
            let got = b.dst.to_vec().expect("local access to the symmetric heap");
            let bad = (0..NMAX).filter(|&i| got[i] != if i < len { byte_pat(right, i, tag) } else { 0xee }).count();
            ck.case(&format!("{mname} {len} bytes"), bad == 0, || format!("{bad} bytes wrong"));
            ctx.barrier_all().unwrap();
        }
    }
}

/// p from 300 threads, g back.
fn p_and_g(s: &mut GpuRun) {
    let GpuRun { ctx, g, m, me, right, left, .. } = *s;
    let ck = &mut s.ck;
    let pi = ctx.alloc::<i32>(300).unwrap();
    let gi = ctx.alloc::<i32>(300).unwrap();
    pi.fill(-1).expect("local access to the symmetric heap");
    ctx.barrier_all().unwrap();
    launch(g, m, "px_p", 3, 100, &[a(&pi), A::I32(300), A::I32(1000 * (me as i32 + 1)), A::I32(right as i32)]);
    ctx.barrier_all().unwrap();
    let got = pi.to_vec().expect("local access to the symmetric heap");
    let bad = (0..300).filter(|&i| got[i] != 1000 * (left as i32 + 1) + i as i32).count();
    ck.case("int_p from 300 threads", bad == 0, || format!("{bad} wrong"));
    launch(g, m, "px_g", 3, 100, &[a(&gi), a(&pi), A::I32(300), A::I32(right as i32)]);
    let got = gi.to_vec().expect("local access to the symmetric heap");
    // right's pi holds what right's left (this PE) put
    let bad = (0..300).filter(|&i| got[i] != 1000 * (me as i32 + 1) + i as i32).count();
    ck.case("int_g from 300 threads", bad == 0, || format!("{bad} wrong"));
    ctx.barrier_all().unwrap();
    // The host API's p and g of 1- and 2-byte words into a GPU heap through the staged
    // protocol (the GPU's atomics are 4 and 8 bytes wide: these go as copies), and a
    // strided host put, which goes as one gathered message.
    let (b8, h16, st) = (ctx.alloc::<u8>(4).unwrap(), ctx.alloc::<u16>(4).unwrap(), ctx.alloc::<i32>(64).unwrap());
    h16.copy_from(0, &[100 + me as u16, 200 + me as u16, 300 + me as u16, 400 + me as u16]).unwrap();
    st.fill(-1).expect("local access to the symmetric heap");
    ctx.barrier_all().unwrap();
    for i in 0..4 {
        ctx.p(&b8, i, (me * 16 + i) as u8, right).unwrap();
    }
    let src: Vec<i32> = (0..32).map(|i| (me as i32) * 1000 + i).collect();
    ctx.iput(&st, 0, &src, 2, 1, 32, right).unwrap();
    let g16: Vec<u16> = (0..4).map(|i| ctx.g(&h16, i, left).unwrap()).collect();
    ctx.barrier_all().unwrap();
    let got8 = b8.to_vec().expect("local access to the symmetric heap");
    let want8: Vec<u8> = (0..4).map(|i| (left * 16 + i) as u8).collect();
    ck.case("host p of u8 into the GPU heap through the proxy's transport", got8 == want8, || format!("{got8:?}, want {want8:?}"));
    let want16: Vec<u16> = (1..=4).map(|k| 100 * k + left as u16).collect();
    ck.case("host g of u16 from a GPU heap through the proxy's transport", g16 == want16, || format!("{g16:?}, want {want16:?}"));
    let gotst = st.to_vec().expect("local access to the symmetric heap");
    let bad = (0..64).filter(|&i| gotst[i] != if i % 2 == 0 { left as i32 * 1000 + (i / 2) as i32 } else { -1 }).count();
    ck.case("host iput (one gathered message) into a GPU heap", bad == 0, || format!("{bad} of 64 words wrong"));
    ctx.barrier_all().unwrap();
}

/// Strided put and get.
fn strided(s: &mut GpuRun) {
    let GpuRun { ctx, g, m, me, right, left, .. } = *s;
    let ck = &mut s.ck;
    let sd = ctx.alloc::<i64>(3 * 50).unwrap();
    let ss = ctx.alloc::<i64>(2 * 50).unwrap();
    let sb = ctx.alloc::<i64>(50).unwrap();
    ss.copy_from(0, &(0..100).map(|i| (me as i64) * 10_000 + i).collect::<Vec<_>>()).unwrap();
    sd.fill(-7).expect("local access to the symmetric heap");
    ctx.barrier_all().unwrap();
    launch(g, m, "px_strided", 1, 1, &[a(&sd), a(&ss), a(&sb), A::I32(50), A::I32(right as i32)]);
    ctx.barrier_all().unwrap();
    let got = sd.to_vec().expect("local access to the symmetric heap");
    let bad = (0..150).filter(|&j| got[j] != if j % 3 == 0 { left as i64 * 10_000 + (j / 3 * 2) as i64 } else { -7 }).count();
    let back = sb.to_vec().expect("local access to the symmetric heap");
    let bad_back = (0..50).filter(|&i| back[i] != me as i64 * 10_000 + 2 * i as i64).count();
    ck.case("int64_iput / iget", bad == 0 && bad_back == 0, || format!("{bad} put, {bad_back} got back wrong"));
    ctx.barrier_all().unwrap();
}

/// Atomics: one sequence against the model.
fn atomics(s: &mut GpuRun) {
    let GpuRun { ctx, g, m, me, right, .. } = *s;
    let ck = &mut s.ck;
    let w = ctx.alloc::<u64>(1).unwrap();
    let w32 = ctx.alloc::<u32>(1).unwrap();
    let wd = ctx.alloc::<f64>(1).unwrap();
    let out = ctx.alloc::<u64>(32).unwrap();
    w.fill(0x1000 + me as u64).expect("local access to the symmetric heap");
    w32.fill(0xffff_fffe).expect("local access to the symmetric heap");
    wd.fill(1.25).expect("local access to the symmetric heap");
    ctx.barrier_all().unwrap();
    launch(g, m, "px_amo_sequence", 1, 1, &[a(&w), a(&w32), a(&wd), a(&out), A::I32(right as i32)]);
    ctx.barrier_all().unwrap();
    let x0 = 0x1000 + right as u64;
    let model: Vec<u64> = vec![x0, x0, x0 + 5, 77, 99, 99, 0x163, 0x160, 0x5556, 0xffff_fffe, 1, 7, 0xffff_fffd, 1250, 2500];
    let got = out.to_vec().expect("local access to the symmetric heap");
    ck.case(
        "atomics (fetch, add, swap, cswap, or, and, xor, set, inc; u32, i32; double) match the model",
        got[..model.len()] == model[..],
        || format!("got {:x?}, model {:x?}", &got[..model.len()], model),
    );
    let (fw, fw32, fwd) = (w.read(0).unwrap(), w32.read(0).unwrap(), wd.read(0).unwrap());
    ck.case("atomics left the model's final words", fw == 0x5556 && fw32 == 0xffff_fffd && fwd == 2.5, || {
        format!("{fw:#x} {fw32:#x} {fwd}")
    });
    ctx.barrier_all().unwrap();
}

/// fetch_inc tickets from 128 threads x 8 on the right PE: a permutation.
fn tickets(s: &mut GpuRun) {
    let GpuRun { ctx, g, m, right, .. } = *s;
    let ck = &mut s.ck;
    let ctr = ctx.alloc::<u64>(1).unwrap();
    let tickets = ctx.alloc::<u64>(1024).unwrap();
    ctr.fill(0).expect("local access to the symmetric heap");
    ctx.barrier_all().unwrap();
    launch(g, m, "px_tickets", 2, 64, &[a(&ctr), a(&tickets), A::I32(8), A::I32(right as i32)]);
    ctx.barrier_all().unwrap();
    let mut tk = tickets.to_vec().expect("local access to the symmetric heap");
    tk.sort_unstable();
    let perm = tk.iter().enumerate().all(|(i, &t)| t == i as u64);
    let total = ctr.read(0).unwrap();
    ck.case("1024 fetch_inc tickets form a permutation, counter exact", perm && total == 1024, || {
        format!("counter {total}, permutation {perm}")
    });
    ctx.barrier_all().unwrap();
}

/// put_signal ring with acknowledgements (every PE's kernel runs at once).
fn signal_ring(s: &mut GpuRun) {
    let GpuRun { ctx, g, m, right, left, .. } = *s;
    let ck = &mut s.ck;
    let words = 512u64;
    let rounds = 20;
    let data = ctx.alloc::<u64>(words as usize).unwrap();
    let stage = ctx.alloc::<u64>(words as usize).unwrap();
    let sig = ctx.alloc::<u64>(1).unwrap();
    let ack = ctx.alloc::<u64>(1).unwrap();
    let errs = ctx.alloc::<u64>(1).unwrap();
    for s in [&sig, &ack, &errs] {
        s.fill(0).expect("local access to the symmetric heap");
    }
    ctx.barrier_all().unwrap();
    launch(
        g,
        m,
        "px_signal_ring",
        1,
        1,
        &[
            a(&data),
            a(&stage),
            a(&sig),
            a(&ack),
            a(&stage),
            A::U64(words),
            A::I32(rounds),
            A::I32(right as i32),
            A::I32(left as i32),
            a(&errs),
        ],
    );
    ctx.barrier_all().unwrap();
    let (e, sv, av) = (errs.read(0).unwrap(), sig.read(0).unwrap(), ack.read(0).unwrap());
    ck.case(
        &format!("putmem_signal_nbi + signal_wait_until: {rounds} rounds, every signal came with its data"),
        e == 0 && sv == rounds as u64 && av == rounds as u64,
        || format!("{e} bad words, signal {sv}, acks {av}"),
    );
}

/// Device barriers through the proxy.
fn barriers(s: &mut GpuRun) {
    let GpuRun { ctx, g, m, .. } = *s;
    let ck = &mut s.ck;
    launch(g, m, "px_barrier", 1, 1, &[A::I32(3)]);
    ck.case("3 device barrier_all through the proxy", true, String::new);
    ctx.barrier_all().unwrap();
}

/// Latency and bandwidth, PE 0 to PE 1 only (the others idle on the host).
fn numbers(s: &mut GpuRun, b: &Bulk) {
    let GpuRun { ctx, g, m, me, .. } = *s;
    let tout = ctx.alloc::<u64>(2).unwrap();
    // Buffers of the largest bulk size, and its host-side source.
    const BIG: usize = 16 << 20;
    let (big_src, big_dst) = (ctx.alloc::<u8>(BIG).unwrap(), ctx.alloc::<u8>(BIG).unwrap());
    let host_src: Vec<u8> = (0..BIG).map(|i| byte_pat(me, i, 99)).collect();
    let word = ctx.alloc::<u64>(1).unwrap();
    ctx.barrier_all().unwrap();
    if me == 0 {
        let time = |dst: &rshmem::Sym<u8>, src: &rshmem::Sym<u8>, bytes: usize, iters: i32, mode: i32| -> f64 {
            launch(g, m, "px_time", 1, 1, &[a(dst), a(src), A::U64(bytes as u64), A::I32(iters), A::I32(mode), A::I32(1), a(&tout)]);
            tout.read(0).unwrap() as f64
        };
        // The same traffic from the host thread: PE 0's host put (and get) of a host buffer
        // to PE 1's GPU heap, through the same staged UCX transport, timed on the host.
        let host = |bytes: usize, iters: usize, mode: i32| -> f64 {
            let t0 = std::time::Instant::now();
            let mut acc = 0u64;
            for _ in 0..iters {
                match mode {
                    0 => {
                        ctx.put_nbi(&big_dst, 0, &host_src[..bytes], 1).unwrap();
                        ctx.quiet().unwrap();
                    }
                    1 => ctx.put_nbi(&big_dst, 0, &host_src[..bytes], 1).unwrap(),
                    _ => acc = acc.wrapping_add(ctx.g(&word, 0, 1).unwrap()),
                }
            }
            ctx.quiet().unwrap();
            std::hint::black_box(acc);
            t0.elapsed().as_nanos() as f64
        };
        time(&b.dst, &b.src, 8, 10, 0);
        host(8, 10, 0);
        println!(
            "numbers: GPU-initiated, through the host proxy and staged UCX to PE 1 ({}), beside the same traffic from PE 0's host thread (a host buffer put to PE 1's GPU heap through the same transport)",
            std::env::var("UCX_TLS").unwrap_or_default()
        );
        println!("  {:<34} {:>12} {:>12} {:>8}", "case", "GPU (proxy)", "host", "GPU/host");
        let row = |what: String, gpu: f64, host: f64, unit: &str| {
            println!("  {what:<34} {gpu:>9.2} {unit} {host:>9.2} {unit} {:>8.2}", gpu / host);
        };
        for bytes in [8usize, 4096, 65536] {
            let (gn, hn) = (time(&b.dst, &b.src, bytes, 200, 0), host(bytes, 200, 0));
            row(format!("put {bytes} B + quiet (latency)"), gn / 200.0 / 1e3, hn / 200.0 / 1e3, "us");
        }
        let (gn, hn) = (time(&b.dst, &b.src, 8, 200, 2), host(8, 200, 2));
        row("g 8 B (latency)".into(), gn / 200.0 / 1e3, hn / 200.0 / 1e3, "us");
        for bytes in [8usize, 64] {
            let iters = 2000;
            let (gn, hn) = (time(&big_dst, &big_src, bytes, iters, 1), host(bytes, iters as usize, 1));
            row(format!("put_nbi {bytes} B x {iters} + quiet (rate)"), iters as f64 / gn * 1e3, iters as f64 / hn * 1e3, "M/s");
        }
        for bytes in [4096usize, 65536, 1 << 20, BIG] {
            let iters = (64usize << 20).div_ceil(bytes).clamp(4, 256);
            let (gn, hn) = (time(&big_dst, &big_src, bytes, iters as i32, 1), host(bytes, iters, 1));
            let total = (bytes * iters) as f64;
            row(format!("put_nbi {bytes} B x {iters} + quiet (bw)"), total / gn, total / hn, "GB/s");
        }
    }
    ctx.barrier_all().unwrap();
}
