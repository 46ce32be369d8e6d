//! # rshmem-perf
//!
//! rshmem's benchmark suite, modelled on the usual SHMEM perftests, run side by side
//! with anchor implementations in the same invocation.
//!
//! The `rshmem-perf` binary is the driver: it turns its flags into a [`plan`] (cases of
//! operation, size, iterations, warm-up and repetitions) of one suite ([`ops::Suite`]:
//! CPU PEs or GPU PEs), writes it to a file and hands it to each [`backend::Backend`]:
//! rshmem's PEs (the binary re-executed as its own PEs through rshmem's launcher; [`pe`]
//! on CPUs, [`gpu::pe`] on GPUs) and the anchors ([`anchor`]: our C program on Open MPI's
//! OpenSHMEM and on rshmem's own C ABI; [`gpu::anchors`]: our NVSHMEM and NCCL programs).
//! Every backend prints [`protocol`] lines that the driver reads as they come, advancing a
//! [`progress`] bar; with `--rounds N` the sides' jobs take turns N times and [`rounds`]
//! combines them; the [`report`] puts the sides next to each other (terminal table, CSV,
//! JSON, `--cmp` summary) and [`plot`] draws latency and bandwidth against size (SVG, with
//! `plotters`).
#![warn(missing_docs)]

pub mod anchor;
pub mod backend;
pub mod gpu;
pub mod ops;
pub mod pe;
pub mod plan;
pub mod plot;
pub mod progress;
pub mod protocol;
pub mod report;
pub mod rounds;
pub mod sizes;
pub mod stats;
