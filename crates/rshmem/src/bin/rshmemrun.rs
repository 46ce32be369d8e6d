//! `rshmemrun`: starts N PEs of a program on this host.

use clap::Parser;
use rshmem::bootstrap::binding::BindTo;
use rshmem::bootstrap::launcher::{run, LaunchOptions};
use std::ffi::OsString;
use std::time::Duration;

/// rshmemrun: the launcher of rshmem jobs on one host: starts N PEs of PROGRAM and ends
/// the job when one fails.
///
/// It starts N processing elements (PEs) of PROGRAM, one process each (or K per process
/// with --pes-per-process), meets them at a private rendezvous socket so that they can
/// find each other and share their symmetric heaps, forwards their output line by line,
/// and ends the whole job (with the first non-zero status) when a PE fails, dies, hangs
/// past RSHMEM_HANG_TIMEOUT or runs past --timeout. Under mpirun or `srun --mpi=pmix`
/// rshmem programs need no launcher of their own (PMIx).
#[derive(Parser, Debug)]
// The doc comment is the help's text: its first paragraph for -h, all of it for --help.
// (A bare `about` here would replace it with the crate's description.)
#[command(name = "rshmemrun", version)]
struct Args {
    /// Number of PEs.
    #[arg(short = 'n', long = "np", alias = "npes", default_value_t = 1)]
    n: usize,
    /// End the job (exit status 124) after this many seconds.
    #[arg(long)]
    timeout: Option<f64>,
    /// Prefix each output line with `[PE i]`.
    #[arg(short = 't', long = "tag-output")]
    tag_output: bool,
    /// Run K PEs in each process, as threads (the program calls `init` from K threads, or
    /// `rshmem::run_local_pes`): they share the process's memory and GPU context.
    #[arg(long = "pes-per-process", value_name = "K", default_value_t = 1)]
    pes_per_process: usize,
    /// Bind PEs to CPUs: core (each PE on a CPU of its own), numa (on its CPU's NUMA
    /// node), none, or auto: core when the PEs fit on the CPUs this launcher may use,
    /// else none.
    /// [default: RSHMEM_BIND_TO's, else auto]
    #[arg(long = "bind-to", value_name = "POLICY")]
    bind_to: Option<BindTo>,
    /// Set VAR=VALUE in the PEs' environment (repeatable).
    #[arg(short = 'x', long = "env", value_name = "VAR=VALUE")]
    env: Vec<String>,
    /// The program to run, then its arguments.
    #[arg(required = true, trailing_var_arg = true, allow_hyphen_values = true)]
    command: Vec<OsString>,
}

fn main() {
    let a = Args::parse();
    let mut env = Vec::new();
    for kv in &a.env {
        match kv.split_once('=') {
            Some((k, v)) => env.push((k.into(), v.into())),
            None => {
                eprintln!("rshmemrun: --env takes VAR=VALUE, got `{kv}`");
                std::process::exit(2);
            }
        }
    }
    let opts = LaunchOptions {
        n_pes: a.n,
        timeout: a.timeout.map(Duration::from_secs_f64),
        tag_output: a.tag_output,
        program: a.command[0].clone(),
        args: a.command[1..].to_vec(),
        env,
        name: "rshmemrun".into(),
        pes_per_process: a.pes_per_process,
        bind_to: a.bind_to,
    };
    match run(&opts) {
        Ok(code) => std::process::exit(code),
        Err(e) => {
            eprintln!("rshmemrun: {e}");
            std::process::exit(1);
        }
    }
}
