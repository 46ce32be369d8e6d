//! Shared by the `pe_*` test programs: a checker that records failures naming the PE,
//! deterministic test patterns, and an error-case helper. Included with
//! `#[path = "support/mod.rs"] mod support;` (a folder without `main.rs` is not an example).
#![allow(dead_code)]

use rshmem::{Error, SymType};
use std::fmt::{Debug, Display};

/// Collects failed checks of one PE; [`Check::finish`] exits non-zero if any failed.
pub struct Check {
    pe: usize,
    program: &'static str,
    passed: usize,
    failed: usize,
}

impl Check {
    /// A checker for PE `pe` of `program`.
    pub fn new(program: &'static str, pe: usize) -> Check {
        Check { pe, program, passed: 0, failed: 0 }
    }

    /// Records `cond`; on failure prints `what` naming this PE.
    pub fn ok(&mut self, cond: bool, what: impl Display) -> bool {
        if cond {
            self.passed += 1;
        } else {
            self.failed += 1;
            if self.failed <= 30 {
                line_to_stderr(format_args!("{}: PE {}: FAILED: {what}", self.program, self.pe));
            }
        }
        cond
    }

    /// Records `got == want`.
    pub fn eq<T: PartialEq + Debug>(&mut self, got: T, want: T, what: impl Display) -> bool {
        let same = got == want;
        if same {
            self.passed += 1;
        } else {
            self.ok(false, format_args!("{what}: got {got:?}, want {want:?}"));
        }
        same
    }

    /// Records that two slices of plain data are bitwise equal (floats included).
    pub fn same_bits<T: SymType>(&mut self, got: &[T], want: &[T], what: impl Display) -> bool {
        let (g, w): (&[u8], &[u8]) = (bytemuck::cast_slice(got), bytemuck::cast_slice(want));
        if g == w {
            self.passed += 1;
            return true;
        }
        let size = std::mem::size_of::<T>().max(1);
        let first = g.iter().zip(w).position(|(a, b)| a != b).map(|b| b / size);
        let detail = match first {
            Some(i) => format!("first difference at element {i}: got {:?}, want {:?}", got[i], want[i]),
            None => format!("lengths differ: {} vs {}", got.len(), want.len()),
        };
        self.ok(false, format_args!("{what}: {detail}"))
    }

    /// Records that `r` failed with an error that `matches` accepts and whose message
    /// contains every one of `needles`; returns the message (or what went wrong).
    pub fn err<T: Debug>(&mut self, r: rshmem::Result<T>, matches: impl Fn(&Error) -> bool, needles: &[&str], what: &str) -> String {
        match r {
            Ok(v) => {
                self.ok(false, format_args!("{what}: expected an error, got Ok({v:?})"));
                format!("(no error: Ok({v:?}))")
            }
            Err(e) => {
                let msg = e.to_string();
                self.ok(matches(&e), format_args!("{what}: wrong error variant: {e:?}"));
                for n in needles {
                    self.ok(msg.contains(n), format_args!("{what}: message `{msg}` does not contain `{n}`"));
                }
                msg
            }
        }
    }

    /// Number of checks that passed.
    pub fn passed(&self) -> usize {
        self.passed
    }

    /// Prints the verdict and exits with status 1 if any check failed.
    pub fn finish(self) {
        if self.failed > 0 {
            line_to_stderr(format_args!(
                "{}: PE {}: {} of {} checks FAILED",
                self.program,
                self.pe,
                self.failed,
                self.failed + self.passed
            ));
            std::process::exit(1);
        }
        println!("{}: PE {}: all {} checks passed", self.program, self.pe, self.passed);
    }
}

/// Prints one line to stderr with a single write, so that lines of several PEs do not
/// interleave.
pub fn line_to_stderr(what: impl Display) {
    let line = format!("{what}\n");
    let _ = std::io::Write::write_all(&mut std::io::stderr(), line.as_bytes());
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
