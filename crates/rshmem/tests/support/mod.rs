//! Shared by the multi-PE test programs (tests/pe, tests/gpu, and the moe example): the
//! checks of a PE reported as verdict lines that the harness reads ([`Check`],
//! [`verdict`]), the start and end of a program, deterministic test patterns. Included
//! with `#[path = "../support/mod.rs"] mod support;` (a folder without `main.rs` is no
//! test target of its own).
#![allow(dead_code)]

pub mod verdict;

use rshmem::{Ctx, Error, SymType};
use std::collections::HashMap;
use std::fmt::{Debug, Display};
use std::process::ExitCode;
use verdict::{Summary, Verdict};

/// The checks of one PE, reported as verdict lines ([`verdict`]). A check has a name and
/// may be evaluated many times (every element of a transfer, every round of a stress
/// test); [`Check::finish`] prints one line per name, with the number of evaluations and
/// the first failure's detail, or the last evaluation's detail when all held. A failure is
/// also said on stderr at once, naming the PE.
pub struct Check {
    program: &'static str,
    pe: usize,
    /// Every check in the order first made.
    entries: Vec<Entry>,
    index: HashMap<String, usize>,
    /// Print every evaluation as its own line when it is made (see [`Check::immediate`]).
    immediate: bool,
    /// Check lines printed so far, and how many of them failed.
    lines: usize,
    failed_lines: usize,
    /// Failed evaluations said on stderr so far.
    said: usize,
}

struct Entry {
    name: String,
    count: u64,
    failed: u64,
    detail: String,
}

impl Check {
    /// The checks of PE `pe` of `program`, one verdict line per name at the end.
    pub fn new(program: &'static str, pe: usize) -> Check {
        Check { program, pe, entries: Vec::new(), index: HashMap::new(), immediate: false, lines: 0, failed_lines: 0, said: 0 }
    }

    /// The checks of PE `pe` of `program`, each evaluation printed as its own verdict
    /// line when it is made: for programs where a hang (a GPU kernel that never ends)
    /// must not lose the verdicts so far. The harness merges the lines of one name.
    pub fn immediate(program: &'static str, pe: usize) -> Check {
        Check { immediate: true, ..Check::new(program, pe) }
    }

    /// This PE.
    pub fn pe(&self) -> usize {
        self.pe
    }

    /// Records one evaluation of check `name`: it holds when `cond`; `detail` says what was
    /// checked (and, for a failure, what was seen). Returns `cond`.
    pub fn ok(&mut self, name: &str, cond: bool, detail: impl Display) -> bool {
        self.record(name, cond, detail.to_string())
    }

    /// [`Check::ok`] with a detail made only for a failure (a passing evaluation carries none).
    pub fn ok_with(&mut self, name: &str, cond: bool, detail: impl FnOnce() -> String) -> bool {
        self.record(name, cond, if cond { String::new() } else { detail() })
    }

    /// Records a check described by `what` (named [`slug`]`(what)`, the description its
    /// detail); `failure` says what was wrong when `ok` is false.
    pub fn case(&mut self, what: &str, ok: bool, failure: impl FnOnce() -> String) -> bool {
        let detail = if ok { what.to_string() } else { format!("{what}: {}", failure()) };
        self.record(&slug(what), ok, detail)
    }

    /// Records `got == want` as check `name`.
    pub fn eq<T: PartialEq + Debug>(&mut self, name: &str, got: T, want: T, what: impl Display) -> bool {
        if got == want {
            self.record(name, true, what.to_string())
        } else {
            self.record(name, false, format!("{what}: got {got:?}, want {want:?}"))
        }
    }

    /// Records as check `name` that two slices of plain data are bitwise equal (floats
    /// included).
    pub fn same_bits<T: SymType>(&mut self, name: &str, got: &[T], want: &[T], what: impl Display) -> bool {
        let (g, w): (&[u8], &[u8]) = (bytemuck::cast_slice(got), bytemuck::cast_slice(want));
        if g == w {
            return self.record(name, true, what.to_string());
        }
        let size = std::mem::size_of::<T>().max(1);
        let first = g.iter().zip(w).position(|(a, b)| a != b).map(|b| b / size);
        let detail = match first {
            Some(i) => format!("first difference at element {i}: got {:?}, want {:?}", got[i], want[i]),
            None => format!("lengths differ: {} vs {}", got.len(), want.len()),
        };
        self.record(name, false, format!("{what}: {detail}"))
    }

    /// Records as check `name` that `r` failed with an error that `matches` accepts and
    /// whose message contains every one of `needles`; the detail is the message. Returns
    /// the message (or what went wrong).
    pub fn err<T: Debug>(&mut self, name: &str, r: rshmem::Result<T>, matches: impl Fn(&Error) -> bool, needles: &[&str]) -> String {
        match r {
            Ok(v) => {
                let msg = format!("expected an error, got Ok({v:?})");
                self.record(name, false, msg.clone());
                msg
            }
            Err(e) => {
                let msg = e.to_string();
                let missing: Vec<&&str> = needles.iter().filter(|n| !msg.contains(**n)).collect();
                if !matches(&e) {
                    self.record(name, false, format!("wrong error variant {e:?}: {msg}"));
                } else if !missing.is_empty() {
                    self.record(name, false, format!("message `{msg}` does not contain {missing:?}"));
                } else {
                    self.record(name, true, msg.clone());
                }
                msg
            }
        }
    }

    /// Whether every evaluation so far held.
    pub fn all_passed(&self) -> bool {
        self.entries.iter().all(|e| e.failed == 0)
    }

    /// Takes over the checks `other` recorded (another thread's), as if made here.
    pub fn absorb(&mut self, other: Check) {
        for e in other.entries {
            let i = self.slot(&e.name);
            let mine = &mut self.entries[i];
            mine.count += e.count;
            // The first failure's detail, or else the latest.
            if mine.failed == 0 {
                mine.detail = e.detail;
            }
            mine.failed += e.failed;
        }
    }

    fn slot(&mut self, name: &str) -> usize {
        assert!(verdict::valid_name(name), "{}: `{name}` cannot name a check (spaces, quotes or `=`)", self.program);
        if let Some(&i) = self.index.get(name) {
            return i;
        }
        self.entries.push(Entry { name: name.to_string(), count: 0, failed: 0, detail: String::new() });
        self.index.insert(name.to_string(), self.entries.len() - 1);
        self.entries.len() - 1
    }

    fn record(&mut self, name: &str, cond: bool, detail: String) -> bool {
        let i = self.slot(name);
        if !cond && self.said < 30 {
            self.said += 1;
            line_to_stderr(format_args!("{}: PE {}: FAILED {name}: {detail}", self.program, self.pe));
        }
        if self.immediate {
            self.print(name, cond, 1, &detail);
        }
        let e = &mut self.entries[i];
        e.count += 1;
        if !cond {
            e.failed += 1;
        }
        // Keep the first failure's detail, or else the latest.
        if cond && e.failed == 0 || !cond && e.failed == 1 {
            e.detail = detail;
        }
        cond
    }

    fn print(&mut self, name: &str, passed: bool, count: u64, detail: &str) {
        let v =
            Verdict { pe: self.pe, program: self.program.to_string(), name: name.to_string(), passed, count, detail: detail.to_string() };
        self.lines += 1;
        self.failed_lines += usize::from(!passed);
        line_to_stdout(v);
    }

    /// Prints the verdict lines (one per check, unless [`Check::immediate`]) and the
    /// summary; returns whether every check passed.
    pub fn finish(mut self) -> bool {
        let entries = std::mem::take(&mut self.entries);
        if !self.immediate {
            for e in &entries {
                let detail =
                    if e.failed > 1 { format!("{} of {} failed; first: {}", e.failed, e.count, e.detail) } else { e.detail.clone() };
                self.print(&e.name, e.failed == 0, e.count, &detail);
            }
        }
        let summary = Summary { pe: self.pe, program: self.program.to_string(), checks: self.lines, failed: self.failed_lines };
        line_to_stdout(summary);
        entries.iter().all(|e| e.failed == 0)
    }
}

/// A check name made of a description: lower case, every run of other characters than
/// letters and digits one `_` ("putmem thread 31 words" is `putmem_thread_31_words`).
pub fn slug(what: &str) -> String {
    let mut out = String::new();
    for c in what.chars() {
        if c.is_ascii_alphanumeric() {
            out.push(c.to_ascii_lowercase());
        } else if !out.ends_with('_') {
            out.push('_');
        }
    }
    out.trim_matches('_').to_string()
}

/// Runs a test program's body on every PE this process hosts (one, or several as
/// threads under `rshmemrun --pes-per-process`), each with its own runtime and checks,
/// then concludes each ([`conclude`]); the status says whether every PE passed. A job of
/// fewer than `min_pes` PEs exits with status 2, saying so.
pub fn run_program<F>(program: &'static str, min_pes: usize, body: F) -> ExitCode
where
    F: Fn(&Ctx, &mut Check) -> rshmem::Result<()> + Sync,
{
    rshmem::log::install();
    let outcome = rshmem::run_local_pes(|ctx| {
        if ctx.n_pes() < min_pes {
            line_to_stderr(format_args!("{program} needs at least {min_pes} PEs, it has {}", ctx.n_pes()));
            std::process::exit(2);
        }
        let mut ck = Check::new(program, ctx.my_pe());
        let r = body(&ctx, &mut ck);
        conclude_pe(ctx, ck, r)
    });
    match outcome {
        Ok(passed) if passed.iter().all(|&p| p) => ExitCode::SUCCESS,
        Ok(_) => ExitCode::FAILURE,
        Err(e) => {
            line_to_stderr(format_args!("{program}: {e}"));
            ExitCode::FAILURE
        }
    }
}

/// Starts a test program: initializes the runtime (exiting with a message if that
/// fails) and returns it with the checks of this PE.
pub fn start(program: &'static str) -> (Ctx, Check) {
    rshmem::log::install();
    match rshmem::init() {
        Ok(ctx) => {
            let ck = Check::new(program, ctx.my_pe());
            (ctx, ck)
        }
        Err(e) => {
            line_to_stderr(format_args!("{program}: init failed: {e}"));
            std::process::exit(1)
        }
    }
}

/// [`start`] for a program that needs at least `min_pes` PEs: with fewer it exits with
/// status 2, saying so.
pub fn start_with_pes(program: &'static str, min_pes: usize) -> (Ctx, Check) {
    let (ctx, ck) = start(program);
    if ctx.n_pes() < min_pes {
        line_to_stderr(format_args!("{program} needs at least {min_pes} PEs, it has {}", ctx.n_pes()));
        std::process::exit(2);
    }
    (ctx, ck)
}

/// The error of a mode (first argument) that `program` does not have.
pub fn unknown_mode(ctx: &Ctx, program: &'static str, mode: &str) -> Error {
    Error::InvalidArgument { call: program, arg: "mode", detail: format!("unknown mode `{mode}`"), pe: ctx.my_pe() }
}

/// Ends a test program: an error of `result` becomes a failed check `unexpected_error`;
/// prints the verdicts; finalizes (unless `result` failed: peers may wait in a call this
/// PE left, and the launcher ends them when it exits); the exit status says whether every
/// check passed.
pub fn conclude(ctx: Ctx, ck: Check, result: rshmem::Result<()>) -> ExitCode {
    if conclude_pe(ctx, ck, result) {
        ExitCode::SUCCESS
    } else {
        ExitCode::FAILURE
    }
}

/// [`conclude`] for one PE of a process: whether it passed.
fn conclude_pe(ctx: Ctx, mut ck: Check, result: rshmem::Result<()>) -> bool {
    if let Err(e) = result {
        ck.ok("unexpected_error", false, e);
        ck.finish();
        return false;
    }
    let passed = ck.finish();
    if let Err(e) = ctx.finalize() {
        line_to_stderr(format_args!("finalize failed: {e}"));
        return false;
    }
    passed
}

/// Prints one line to stderr with a single write, so that lines of several PEs do not
/// interleave.
pub fn line_to_stderr(what: impl Display) {
    let line = format!("{what}\n");
    let _ = std::io::Write::write_all(&mut std::io::stderr(), line.as_bytes());
}

/// Prints one line to stdout with a single write and flushes it (a reader that went away
/// is no reason to stop).
pub fn line_to_stdout(what: impl Display) {
    let line = format!("{what}\n");
    let mut out = std::io::stdout().lock();
    let _ = std::io::Write::write_all(&mut out, line.as_bytes());
    let _ = std::io::Write::flush(&mut out);
}

/// A 64-bit mix (splitmix64 finalizer): deterministic, well spread.
pub fn mix(mut x: u64) -> u64 {
    x = x.wrapping_add(0x9e37_79b9_7f4a_7c15);
    x = (x ^ (x >> 30)).wrapping_mul(0xbf58_476d_1ce4_e5b9);
    x = (x ^ (x >> 27)).wrapping_mul(0x94d0_49bb_1331_11eb);
    x ^ (x >> 31)
}

/// `len` values of `T` whose bytes are a pattern of (`pe`, `tag`): different for every
/// PE, tag and element, the same every time it is asked for.
pub fn pattern<T: SymType>(pe: usize, tag: u64, len: usize) -> Vec<T> {
    let mut v = vec![T::zeroed(); len];
    let bytes: &mut [u8] = bytemuck::cast_slice_mut(&mut v);
    for (i, chunk) in bytes.chunks_mut(8).enumerate() {
        let word = mix((pe as u64) << 48 ^ tag << 24 ^ i as u64).to_le_bytes();
        chunk.copy_from_slice(&word[..chunk.len()]);
    }
    v
}

/// A small seeded generator (xorshift64*), deterministic per seed.
pub struct Rng(u64);

impl Rng {
    /// A generator seeded with `seed`.
    pub fn new(seed: u64) -> Rng {
        Rng(mix(seed) | 1)
    }

    /// The next 64 random bits.
    pub fn next_u64(&mut self) -> u64 {
        self.0 ^= self.0 >> 12;
        self.0 ^= self.0 << 25;
        self.0 ^= self.0 >> 27;
        self.0.wrapping_mul(0x2545_f491_4f6c_dd1d)
    }

    /// A number in `0..n` (n > 0).
    pub fn below(&mut self, n: usize) -> usize {
        (self.next_u64() % n as u64) as usize
    }
}
