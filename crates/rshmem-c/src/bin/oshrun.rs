//! `oshrun`: starts N PEs of an OpenSHMEM program on this host (the `rshmemrun`
//! launcher under the name OpenSHMEM programs expect).
//!
//! `oshrun [-np N | -n N] [--timeout S] [--tag-output] [--bind-to POLICY] [-x VAR=VALUE] PROGRAM [ARGS...]`;
//! `--allow-run-as-root` and `--oversubscribe` are accepted and ignored, for scripts
//! written for Open MPI's launcher.

use rshmem::bootstrap::binding::BindTo;
use rshmem::bootstrap::launcher::{run, LaunchOptions};
use std::ffi::OsString;
use std::time::Duration;

const USAGE: &str = "usage: oshrun [-np N] [--timeout SECONDS] [--tag-output] [--bind-to POLICY] [-x VAR=VALUE] PROGRAM [ARGS...]";

/// What `--help` prints first: what the launcher is.
const ABOUT: &str = "\
oshrun: the launcher of OpenSHMEM programs on one host (rshmem's `rshmemrun` under the
name OpenSHMEM programs expect). It starts N PEs of PROGRAM, one process each, lets them
find each other and share their symmetric heaps, forwards their output line by line, and
ends the whole job (with the first non-zero status) when a PE fails, dies, hangs past
RSHMEM_HANG_TIMEOUT or runs past --timeout.";

/// What `--help` prints after the usage line.
const OPTIONS: &str = "\
options:
  -np N, -n N, --np N, -N N   number of PEs (default 1)
  --timeout SECONDS           end the job (exit status 124) after this many seconds
  --tag-output, -t            prefix each output line with `[PE i]`
  --bind-to POLICY            bind PEs to CPUs: core (a CPU each), numa, none, or auto
                              (the default: RSHMEM_BIND_TO's, else auto: core when the
                              PEs fit on the CPUs, else none)
  -x VAR=VALUE, -x VAR        set VAR in the PEs' environment (VAR alone: its value here)
  --allow-run-as-root, --oversubscribe
                              accepted and ignored (for scripts written for Open MPI)
  -h, --help                  print this help";

fn fail(msg: &str) -> ! {
    eprintln!("oshrun: {msg}\n{USAGE}");
    std::process::exit(2)
}

fn main() {
    let mut args = std::env::args_os().skip(1);
    let mut opts = LaunchOptions {
        n_pes: 1,
        timeout: None,
        tag_output: false,
        program: OsString::new(),
        args: Vec::new(),
        env: Vec::new(),
        name: "oshrun".into(),
        // OpenSHMEM C programs keep their state in globals: one PE per process.
        pes_per_process: 1,
        bind_to: None,
    };
    let value = |args: &mut dyn Iterator<Item = OsString>, flag: &str| -> String {
        args.next().and_then(|v| v.into_string().ok()).unwrap_or_else(|| fail(&format!("{flag} needs a value")))
    };
    while let Some(a) = args.next() {
        let s = a.to_string_lossy().into_owned();
        match s.as_str() {
            "-np" | "-n" | "--np" | "-N" => {
                let v = value(&mut args, &s);
                opts.n_pes = v.parse().ok().filter(|&n| n > 0).unwrap_or_else(|| fail(&format!("{s} `{v}` is not a positive number")));
            }
            "--timeout" => {
                let v = value(&mut args, &s);
                let t: f64 =
                    v.parse().ok().filter(|t: &f64| *t > 0.0).unwrap_or_else(|| fail(&format!("--timeout `{v}` is not a positive number")));
                opts.timeout = Some(Duration::from_secs_f64(t));
            }
            "--tag-output" | "-t" => opts.tag_output = true,
            "--bind-to" => {
                let v = value(&mut args, &s);
                opts.bind_to = Some(v.parse::<BindTo>().unwrap_or_else(|e| fail(&format!("--bind-to: {e}"))));
            }
            "-x" => {
                let kv = value(&mut args, &s);
                match kv.split_once('=') {
                    Some((k, v)) => opts.env.push((k.into(), v.into())),
                    None => match std::env::var_os(&kv) {
                        Some(v) => opts.env.push((kv.into(), v)),
                        None => fail(&format!("-x {kv}: not VAR=VALUE and not set here")),
                    },
                }
            }
            "--allow-run-as-root" | "--oversubscribe" => {}
            "-h" | "--help" => {
                println!("{ABOUT}\n\n{USAGE}\n\n{OPTIONS}");
                return;
            }
            _ if s.starts_with('-') && opts.program.is_empty() => fail(&format!("unknown option `{s}`")),
            _ => {
                opts.program = a;
                opts.args = args.collect();
                break;
            }
        }
    }
    if opts.program.is_empty() {
        fail("no program given");
    }
    match run(&opts) {
        Ok(code) => std::process::exit(code),
        Err(e) => {
            eprintln!("oshrun: {e}");
            std::process::exit(1)
        }
    }
}
