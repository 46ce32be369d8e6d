//! Test program for the launcher's failure handling (see tests/launcher.rs).
//! `die`: PE 2 kills itself while the others wait in a barrier.
//! `exit3`: PE 1 exits with status 3 after init. `hang`: every PE sleeps.
//! `wrong-key`: presents a wrong job key. `linger`: every PE finalizes, then all but
//! PE 0 stay alive a while (PE 0's exit races its own Finalize frame at the launcher).
//! `global-exit`: PE 1 calls `global_exit(7)` while the others wait in a barrier that
//! only the job's end can leave.
//! `stop`: the last PE stops itself (SIGSTOP) while the others wait in a barrier.
//! `spin`: the last PE loops forever outside rshmem while the others wait in a barrier.
//! `lines N`: every PE prints N numbered lines on stderr, each in three writes.
//! `partial`: PE 1 prints half a line and kills itself.
//! `no-finalize`: every PE prints a line, one after the other, and exits without finalize.
//! `leave`: PE 0 exits (status 0) without finalize; the others enter a barrier.
//! `pids`: every PE writes its pid into `$RSHMEM_TEST_PID_DIR/pe<N>`; even PEs then join
//! the job (and wait in init for the others), odd PEs sleep without ever calling init.
//! `timed-init`: sleeps `$RSHMEM_TEST_INIT_DELAY_MS`, then prints how long init took.
//! `transfer`: every PE writes its pid into `$RSHMEM_TEST_PID_DIR/pe<N>` (when set), then
//! puts `$RSHMEM_TEST_TRANSFER_MB` MiB (default 64) to its right neighbour, barrier,
//! again and again, printing a line per round: the load for fault tests.
//! `cores`: every PE of the process (threads under `--pes-per-process`) prints the CPUs
//! its own thread may run on, as `PE <n> cpus <list>`.

use std::io::Write;
use std::time::{Duration, Instant};

fn kill_self(sig: rustix::process::Signal) {
    let _ = rustix::process::kill_process(rustix::process::getpid(), sig);
}

/// PE `culprit` runs `fault`; then every PE enters a barrier that only the job's end
/// leaves (the fault keeps the culprit out of it), and sleeps.
fn fault_in_barrier(ctx: &rshmem::Ctx, culprit: usize, fault: impl FnOnce()) {
    if ctx.my_pe() == culprit {
        fault();
    }
    ctx.barrier_all().expect("barrier");
    std::thread::sleep(Duration::from_secs(60));
}

fn main() {
    let mode = std::env::args().nth(1).unwrap_or_default();
    let pe_env: usize = std::env::var("RSHMEM_PE").ok().and_then(|v| v.parse().ok()).unwrap_or(0);
    match mode.as_str() {
        "pids" => {
            let dir = std::path::PathBuf::from(std::env::var("RSHMEM_TEST_PID_DIR").expect("RSHMEM_TEST_PID_DIR"));
            std::fs::write(dir.join(format!("pe{pe_env}.tmp")), std::process::id().to_string()).expect("write pid");
            std::fs::rename(dir.join(format!("pe{pe_env}.tmp")), dir.join(format!("pe{pe_env}"))).expect("publish pid");
            if pe_env % 2 == 1 {
                std::thread::sleep(Duration::from_secs(600));
                return;
            }
            rshmem::log::install();
            let ctx = rshmem::init().expect("init");
            ctx.barrier_all().expect("barrier");
            std::thread::sleep(Duration::from_secs(600));
            return;
        }
        "timed-init" => {
            let delay = std::env::var("RSHMEM_TEST_INIT_DELAY_MS").ok().and_then(|v| v.parse().ok()).unwrap_or(0);
            std::thread::sleep(Duration::from_millis(delay));
            let t = Instant::now();
            rshmem::log::install();
            let ctx = rshmem::init().expect("init");
            println!("PE {} init took {} ms", ctx.my_pe(), t.elapsed().as_millis());
            return;
        }
        "cores" => {
            rshmem::log::install();
            rshmem::run_local_pes(|ctx| {
                let cpus = rshmem::bootstrap::binding::format_cpu_list(&rshmem::bootstrap::binding::allowed_cpus());
                println!("PE {} cpus {cpus}", ctx.my_pe());
                ctx.barrier_all().expect("barrier");
            })
            .expect("run_local_pes");
            return;
        }
        "no-finalize" => {
            rshmem::log::install();
            let ctx = rshmem::init().expect("init");
            ctx.barrier_all().expect("barrier");
            std::thread::sleep(Duration::from_millis(150 * ctx.my_pe() as u64));
            println!("PE {} done without finalize", ctx.my_pe());
            std::process::exit(0);
        }
        _ => {}
    }
    if mode == "wrong-key" {
        std::env::set_var("RSHMEM_JOB_KEY", "0123456789abcdef0123456789abcdef");
        rshmem::log::install();
        match rshmem::init() {
            Ok(_) => std::process::exit(0),
            Err(e) => {
                eprintln!("{e}");
                std::process::exit(5);
            }
        }
    }
    rshmem::log::install();
    let ctx = rshmem::init().expect("init");
    match mode.as_str() {
        "die" => fault_in_barrier(&ctx, 2, || {
            std::thread::sleep(Duration::from_millis(200));
            kill_self(rustix::process::Signal::KILL);
        }),
        "exit3" => {
            if ctx.my_pe() == 1 {
                std::process::exit(3);
            }
            ctx.barrier_all().expect("barrier");
        }
        "global-exit" => {
            if ctx.my_pe() == 1 {
                ctx.global_exit(7);
            }
            let _ = ctx.barrier_all();
            std::thread::sleep(Duration::from_secs(60));
            eprintln!("PE {}: still running 60 s after PE 1's global_exit", ctx.my_pe());
            std::process::exit(0);
        }
        "hang" => std::thread::sleep(Duration::from_secs(600)),
        "transfer" => {
            let (me, n) = (ctx.my_pe(), ctx.n_pes());
            if let Ok(dir) = std::env::var("RSHMEM_TEST_PID_DIR") {
                std::fs::write(std::path::Path::new(&dir).join(format!("pe{me}")), std::process::id().to_string()).expect("write pid");
            }
            let mib: usize = std::env::var("RSHMEM_TEST_TRANSFER_MB").ok().and_then(|v| v.parse().ok()).unwrap_or(64);
            let dst = ctx.alloc::<u8>(mib << 20).expect("alloc");
            let src = vec![me as u8; mib << 20];
            for round in 0.. {
                ctx.put(&dst, 0, &src, (me + 1) % n).expect("put");
                ctx.barrier_all().expect("barrier");
                println!("PE {me}: round {round} moved {mib} MiB");
            }
        }
        "stop" => fault_in_barrier(&ctx, ctx.n_pes() - 1, || {
            std::thread::sleep(Duration::from_millis(100));
            kill_self(rustix::process::Signal::STOP);
        }),
        "spin" => fault_in_barrier(&ctx, ctx.n_pes() - 1, || {
            let mut x = 0u64;
            loop {
                x = std::hint::black_box(x.wrapping_add(1));
            }
        }),
        "lines" => {
            let n: usize = std::env::args().nth(2).and_then(|v| v.parse().ok()).expect("lines N");
            let me = ctx.my_pe();
            let mut err = std::io::stderr();
            for i in 0..n {
                // Three writes per line, as unbuffered stderr and C stdio make them.
                let _ = err.write_all(format!("PE {me} line {i} ").as_bytes());
                let _ = err.write_all("x".repeat(i % 97).as_bytes());
                let _ = err.write_all(b" end\n");
            }
            ctx.barrier_all().expect("barrier");
        }
        "partial" => fault_in_barrier(&ctx, 1, || {
            print!("unfinished line");
            std::io::stdout().flush().expect("flush");
            kill_self(rustix::process::Signal::KILL);
        }),
        "leave" => fault_in_barrier(&ctx, 0, || std::process::exit(0)),
        "linger" => {
            let me = ctx.my_pe();
            ctx.finalize().expect("finalize");
            if me != 0 {
                std::thread::sleep(Duration::from_millis(300));
            }
        }
        other => panic!("unknown mode `{other}`"),
    }
}
