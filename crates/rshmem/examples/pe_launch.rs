//! Test program for the launcher's failure handling (see tests/launcher.rs).
//! `die`: PE 2 kills itself while the others wait in a barrier.
//! `exit3`: PE 1 exits with status 3 after init. `hang`: every PE sleeps.
//! `wrong-key`: presents a wrong job key. `linger`: every PE finalizes, then all but
//! PE 0 stay alive a while (PE 0's exit races its own Finalize frame at the launcher).
//! `global-exit`: PE 1 calls `global_exit(7)` while the others wait in a barrier that
//! only the job's end can leave.

use std::time::Duration;

fn main() {
    let mode = std::env::args().nth(1).unwrap_or_default();
    if mode == "wrong-key" {
        std::env::set_var("RSHMEM_JOB_KEY", "0123456789abcdef0123456789abcdef");
        match rshmem::init() {
            Ok(_) => std::process::exit(0),
            Err(e) => {
                eprintln!("{e}");
                std::process::exit(5);
            }
        }
    }
    let ctx = rshmem::init().expect("init");
    match mode.as_str() {
        "die" => {
            if ctx.my_pe() == 2 {
                std::thread::sleep(Duration::from_millis(200));
                let _ = rustix::process::kill_process(rustix::process::getpid(), rustix::process::Signal::KILL);
            }
            ctx.barrier_all().expect("barrier");
            std::thread::sleep(Duration::from_secs(60));
        }
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
