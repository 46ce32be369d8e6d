//! Atomic memory operations (OpenSHMEM `shmem_atomic_*`), typed over the AMO type tables
//! of [`crate::types`]:
//!
//! | family | types | calls |
//! |---|---|---|
//! | extended | [`ExtendedAmo`]: standard types, `f32`, `f64` | fetch, set, swap |
//! | standard | [`StandardAmo`]: 32/64-bit integers, `isize`, `usize` | compare_swap, fetch_inc, inc, fetch_add, add |
//! | bitwise | [`BitwiseAmo`]: `u32`, `u64`, `i32`, `i64` | fetch_and/or/xor, and/or/xor |
//!
//! Every call has a form on a [`Sym`] element (`atomic_fetch_add(&counter, index, ..)`)
//! and an address form (`atomic_fetch_add_addr(addr, ..)`, a symmetric address of this
//! PE) that the C ABI calls. The target word must lie in one live symmetric allocation
//! (or the static data) and be aligned to its size: a misaligned word is
//! [`crate::Error::Misaligned`], a word that runs past its allocation (a wrongly sized
//! target) [`crate::Error::OutOfBounds`], an address off the heap
//! [`crate::Error::NotSymmetric`], a bad PE [`crate::Error::PeOutOfRange`].
//!
//! **Atomicity.** Every PE's atomics on a word, the target PE's own included, go through
//! the transport's `amo` (on the local transport: one CPU read-modify-write, sequentially
//! consistent), so they are atomic with respect to each other. Plain puts or local stores
//! to the same word are not atomic with respect to them (as in OpenSHMEM).
//!
//! **Integers** wrap (two's complement); an add of a negative value subtracts. Floats
//! travel as their bits.
//!
//! **Non-blocking fetching forms** (`*_nbi`, OpenSHMEM 1.5) write the old value into a
//! `&mut T`. Since that borrow ends when the call returns, the fetched value is in place
//! on return on every transport; on the local transport the whole operation is also
//! complete then (a remote transport still orders it by `quiet` like any update).

use crate::ctx::Ctx;
use crate::error::Result;
use crate::sym::Sym;
use crate::transport::AmoOp;
use crate::types::{BitwiseAmo, ExtendedAmo, StandardAmo, SymType, WordType};

/// `(dest, index, value, pe)` calls: a Sym form and its address form, fetching or not.
macro_rules! value_amo {
    (fetching $doc:literal, $name:ident, $addr_name:ident, $bound:ident, $op:expr) => {
        #[doc = $doc]
        #[doc = "Returns the word's previous value."]
        #[inline]
        pub fn $name<T: $bound>(&self, dest: &Sym<T>, index: usize, value: T, pe: usize) -> Result<T> {
            self.amo_at(stringify!($name), "dest", Word::Elem(dest, index), pe, $op, value, T::from_bits(0))
        }

        #[doc = concat!("Address form of [`Ctx::", stringify!($name), "`] (`dest`: a symmetric address of this PE).")]
        #[inline]
        pub fn $addr_name<T: $bound>(&self, dest: usize, value: T, pe: usize) -> Result<T> {
            self.amo_at(stringify!($name), "dest", Word::Addr(dest), pe, $op, value, T::from_bits(0))
        }
    };
    (update $doc:literal, $name:ident, $addr_name:ident, $bound:ident, $op:expr) => {
        #[doc = $doc]
        #[inline]
        pub fn $name<T: $bound>(&self, dest: &Sym<T>, index: usize, value: T, pe: usize) -> Result<()> {
            self.amo_update_at(stringify!($name), Word::Elem(dest, index), pe, $op, value)
        }

        #[doc = concat!("Address form of [`Ctx::", stringify!($name), "`] (`dest`: a symmetric address of this PE).")]
        #[inline]
        pub fn $addr_name<T: $bound>(&self, dest: usize, value: T, pe: usize) -> Result<()> {
            self.amo_update_at(stringify!($name), Word::Addr(dest), pe, $op, value)
        }
    };
    (nbi $blocking:ident, $name:ident, $addr_name:ident, $bound:ident, $op:expr) => {
        #[doc = concat!("Non-blocking [`Ctx::", stringify!($blocking), "`]: the old value lands in `fetch` (in place on return).")]
        #[inline]
        pub fn $name<T: $bound>(&self, fetch: &mut T, dest: &Sym<T>, index: usize, value: T, pe: usize) -> Result<()> {
            *fetch = self.amo_at(stringify!($name), "dest", Word::Elem(dest, index), pe, $op, value, T::from_bits(0))?;
            Ok(())
        }

        #[doc = concat!("Address form of [`Ctx::", stringify!($name), "`].")]
        #[inline]
        pub fn $addr_name<T: $bound>(&self, fetch: &mut T, dest: usize, value: T, pe: usize) -> Result<()> {
            *fetch = self.amo_at(stringify!($name), "dest", Word::Addr(dest), pe, $op, value, T::from_bits(0))?;
            Ok(())
        }
    };
}

/// Where an AMO's target word is named: a symmetric address of this PE (the address
/// forms, the C ABI), or an element of a handle.
enum Word<'a, T: SymType> {
    Addr(usize),
    Elem(&'a Sym<T>, usize),
}

impl Ctx {
    /// (world PE, heap offset) of an AMO's word, checked: an element of a handle goes
    /// through [`Ctx::sym_word_target`] (the handle's own checks while its allocation is
    /// live), an address through the heap's range and alignment checks.
    #[inline]
    fn word_at<T: WordType>(&self, call: &'static str, arg: &'static str, word: Word<'_, T>, pe: usize) -> Result<(usize, usize)> {
        match word {
            Word::Addr(addr) => self.target_word(call, arg, addr, T::WIDTH, T::NAME, pe),
            Word::Elem(sym, index) => self.sym_word_target(call, arg, sym, index, pe),
        }
    }

    /// The engine of every AMO: checks (store permission, PE, alignment, range), then
    /// one transport atomic on the target word; returns its previous value.
    #[inline]
    fn amo_at<T: WordType>(
        &self,
        call: &'static str,
        arg: &'static str,
        word: Word<'_, T>,
        pe: usize,
        op: AmoOp,
        operand: T,
        compare: T,
    ) -> Result<T> {
        if op != AmoOp::Fetch {
            self.check_store(call)?;
        }
        let (pe, off) = self.word_at(call, arg, word, pe)?;
        Ok(T::from_bits(self.to(pe).amo(pe, off, T::WIDTH, op, operand.to_bits(), compare.to_bits()).map_err(|e| e.during(call))?))
    }

    /// The engine of the non-fetching AMOs (add, inc, and, or, xor, set): the checks of
    /// [`Ctx::amo_at`], then [`Transport::amo_post`](crate::transport::Transport::amo_post)
    /// (complete at quiet, like a put).
    #[inline]
    fn amo_update_at<T: WordType>(&self, call: &'static str, word: Word<'_, T>, pe: usize, op: AmoOp, operand: T) -> Result<()> {
        self.check_store(call)?;
        let (pe, off) = self.word_at(call, "dest", word, pe)?;
        self.to(pe).amo_post(pe, off, T::WIDTH, op, operand.to_bits()).map_err(|e| e.during(call))
    }

    // ----- extended table: fetch, set, swap -----

    /// Atomically reads `source[index]` on `pe`.
    #[inline]
    pub fn atomic_fetch<T: ExtendedAmo>(&self, source: &Sym<T>, index: usize, pe: usize) -> Result<T> {
        self.amo_at("atomic_fetch", "source", Word::Elem(source, index), pe, AmoOp::Fetch, T::from_bits(0), T::from_bits(0))
    }

    /// Address form of [`Ctx::atomic_fetch`].
    #[inline]
    pub fn atomic_fetch_addr<T: ExtendedAmo>(&self, source: usize, pe: usize) -> Result<T> {
        self.amo_at("atomic_fetch", "source", Word::Addr(source), pe, AmoOp::Fetch, T::from_bits(0), T::from_bits(0))
    }

    /// Non-blocking [`Ctx::atomic_fetch`]: the value lands in `fetch` (in place on return).
    #[inline]
    pub fn atomic_fetch_nbi<T: ExtendedAmo>(&self, fetch: &mut T, source: &Sym<T>, index: usize, pe: usize) -> Result<()> {
        *fetch =
            self.amo_at("atomic_fetch_nbi", "source", Word::Elem(source, index), pe, AmoOp::Fetch, T::from_bits(0), T::from_bits(0))?;
        Ok(())
    }

    /// Address form of [`Ctx::atomic_fetch_nbi`].
    #[inline]
    pub fn atomic_fetch_nbi_addr<T: ExtendedAmo>(&self, fetch: &mut T, source: usize, pe: usize) -> Result<()> {
        *fetch = self.amo_at("atomic_fetch_nbi", "source", Word::Addr(source), pe, AmoOp::Fetch, T::from_bits(0), T::from_bits(0))?;
        Ok(())
    }

    value_amo!(update "Atomically writes `value` to `dest[index]` on `pe`.", atomic_set, atomic_set_addr, ExtendedAmo, AmoOp::Set);
    value_amo!(fetching "Atomically writes `value` to `dest[index]` on `pe`.", atomic_swap, atomic_swap_addr, ExtendedAmo, AmoOp::Swap);
    value_amo!(nbi atomic_swap, atomic_swap_nbi, atomic_swap_nbi_addr, ExtendedAmo, AmoOp::Swap);

    // ----- standard table: compare_swap, inc, add -----

    /// Atomically writes `value` to `dest[index]` on `pe` if it equals `cond`; returns
    /// the previous value (equal to `cond` exactly when the write happened).
    #[inline]
    pub fn atomic_compare_swap<T: StandardAmo>(&self, dest: &Sym<T>, index: usize, cond: T, value: T, pe: usize) -> Result<T> {
        self.amo_at("atomic_compare_swap", "dest", Word::Elem(dest, index), pe, AmoOp::CompareSwap, value, cond)
    }

    /// Address form of [`Ctx::atomic_compare_swap`].
    #[inline]
    pub fn atomic_compare_swap_addr<T: StandardAmo>(&self, dest: usize, cond: T, value: T, pe: usize) -> Result<T> {
        self.amo_at("atomic_compare_swap", "dest", Word::Addr(dest), pe, AmoOp::CompareSwap, value, cond)
    }

    /// Non-blocking [`Ctx::atomic_compare_swap`]: the old value lands in `fetch`.
    #[inline]
    pub fn atomic_compare_swap_nbi<T: StandardAmo>(
        &self,
        fetch: &mut T,
        dest: &Sym<T>,
        index: usize,
        cond: T,
        value: T,
        pe: usize,
    ) -> Result<()> {
        *fetch = self.amo_at("atomic_compare_swap_nbi", "dest", Word::Elem(dest, index), pe, AmoOp::CompareSwap, value, cond)?;
        Ok(())
    }

    /// Address form of [`Ctx::atomic_compare_swap_nbi`].
    #[inline]
    pub fn atomic_compare_swap_nbi_addr<T: StandardAmo>(&self, fetch: &mut T, dest: usize, cond: T, value: T, pe: usize) -> Result<()> {
        *fetch = self.amo_at("atomic_compare_swap_nbi", "dest", Word::Addr(dest), pe, AmoOp::CompareSwap, value, cond)?;
        Ok(())
    }

    /// Atomically adds 1 to `dest[index]` on `pe`; returns the previous value.
    #[inline]
    pub fn atomic_fetch_inc<T: StandardAmo>(&self, dest: &Sym<T>, index: usize, pe: usize) -> Result<T> {
        self.amo_at("atomic_fetch_inc", "dest", Word::Elem(dest, index), pe, AmoOp::FetchAdd, T::from_bits(1), T::from_bits(0))
    }

    /// Address form of [`Ctx::atomic_fetch_inc`].
    #[inline]
    pub fn atomic_fetch_inc_addr<T: StandardAmo>(&self, dest: usize, pe: usize) -> Result<T> {
        self.amo_at("atomic_fetch_inc", "dest", Word::Addr(dest), pe, AmoOp::FetchAdd, T::from_bits(1), T::from_bits(0))
    }

    /// Non-blocking [`Ctx::atomic_fetch_inc`]: the old value lands in `fetch`.
    #[inline]
    pub fn atomic_fetch_inc_nbi<T: StandardAmo>(&self, fetch: &mut T, dest: &Sym<T>, index: usize, pe: usize) -> Result<()> {
        *fetch =
            self.amo_at("atomic_fetch_inc_nbi", "dest", Word::Elem(dest, index), pe, AmoOp::FetchAdd, T::from_bits(1), T::from_bits(0))?;
        Ok(())
    }

    /// Address form of [`Ctx::atomic_fetch_inc_nbi`].
    #[inline]
    pub fn atomic_fetch_inc_nbi_addr<T: StandardAmo>(&self, fetch: &mut T, dest: usize, pe: usize) -> Result<()> {
        *fetch = self.amo_at("atomic_fetch_inc_nbi", "dest", Word::Addr(dest), pe, AmoOp::FetchAdd, T::from_bits(1), T::from_bits(0))?;
        Ok(())
    }

    /// Atomically adds 1 to `dest[index]` on `pe`.
    #[inline]
    pub fn atomic_inc<T: StandardAmo>(&self, dest: &Sym<T>, index: usize, pe: usize) -> Result<()> {
        self.amo_update_at("atomic_inc", Word::Elem(dest, index), pe, AmoOp::FetchAdd, T::from_bits(1))
    }

    /// Address form of [`Ctx::atomic_inc`].
    #[inline]
    pub fn atomic_inc_addr<T: StandardAmo>(&self, dest: usize, pe: usize) -> Result<()> {
        self.amo_update_at("atomic_inc", Word::Addr(dest), pe, AmoOp::FetchAdd, T::from_bits(1))
    }

    value_amo!(fetching "Atomically adds `value` to `dest[index]` on `pe`.", atomic_fetch_add, atomic_fetch_add_addr, StandardAmo, AmoOp::FetchAdd);
    value_amo!(nbi atomic_fetch_add, atomic_fetch_add_nbi, atomic_fetch_add_nbi_addr, StandardAmo, AmoOp::FetchAdd);
    value_amo!(update "Atomically adds `value` to `dest[index]` on `pe`.", atomic_add, atomic_add_addr, StandardAmo, AmoOp::FetchAdd);

    // ----- bitwise table -----

    value_amo!(fetching "Atomically ANDs `value` into `dest[index]` on `pe`.", atomic_fetch_and, atomic_fetch_and_addr, BitwiseAmo, AmoOp::FetchAnd);
    value_amo!(nbi atomic_fetch_and, atomic_fetch_and_nbi, atomic_fetch_and_nbi_addr, BitwiseAmo, AmoOp::FetchAnd);
    value_amo!(update "Atomically ANDs `value` into `dest[index]` on `pe`.", atomic_and, atomic_and_addr, BitwiseAmo, AmoOp::FetchAnd);
    value_amo!(fetching "Atomically ORs `value` into `dest[index]` on `pe`.", atomic_fetch_or, atomic_fetch_or_addr, BitwiseAmo, AmoOp::FetchOr);
    value_amo!(nbi atomic_fetch_or, atomic_fetch_or_nbi, atomic_fetch_or_nbi_addr, BitwiseAmo, AmoOp::FetchOr);
    value_amo!(update "Atomically ORs `value` into `dest[index]` on `pe`.", atomic_or, atomic_or_addr, BitwiseAmo, AmoOp::FetchOr);
    value_amo!(fetching "Atomically XORs `value` into `dest[index]` on `pe`.", atomic_fetch_xor, atomic_fetch_xor_addr, BitwiseAmo, AmoOp::FetchXor);
    value_amo!(nbi atomic_fetch_xor, atomic_fetch_xor_nbi, atomic_fetch_xor_nbi_addr, BitwiseAmo, AmoOp::FetchXor);
    value_amo!(update "Atomically XORs `value` into `dest[index]` on `pe`.", atomic_xor, atomic_xor_addr, BitwiseAmo, AmoOp::FetchXor);
}
