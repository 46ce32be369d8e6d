//! rshmem-perf: the benchmark suite (work in progress: see the perf-suite issue).

fn main() {
    eprintln!("rshmem-perf: not built yet");
}
