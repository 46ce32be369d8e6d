//! The type table of the C ABI.
//!
//! Which types each family accepts comes from rshmem's tables (`rshmem::rma_types!`,
//! `rshmem::amo_standard_types!`, ... in `rshmem::types`), as `(TYPENAME, Rust type)`
//! pairs. This module adds the one thing those tables cannot say: how C spells each
//! TYPENAME. The Rust `extern "C"` functions (by macro) and `shmem.h` (by
//! [`crate::header`]) are both generated from these lists.

/// The C type of each TYPENAME; the only place C types are named.
pub const C_TYPES: &[(&str, &str)] = &[
    ("float", "float"),
    ("double", "double"),
    ("longdouble", "long double"),
    ("char", "char"),
    ("schar", "signed char"),
    ("short", "short"),
    ("int", "int"),
    ("long", "long"),
    ("longlong", "long long"),
    ("uchar", "unsigned char"),
    ("ushort", "unsigned short"),
    ("uint", "unsigned int"),
    ("ulong", "unsigned long"),
    ("ulonglong", "unsigned long long"),
    ("int8", "int8_t"),
    ("int16", "int16_t"),
    ("int32", "int32_t"),
    ("int64", "int64_t"),
    ("uint8", "uint8_t"),
    ("uint16", "uint16_t"),
    ("uint32", "uint32_t"),
    ("uint64", "uint64_t"),
    ("size", "size_t"),
    ("ptrdiff", "ptrdiff_t"),
];

/// The C spelling of `typename`.
pub fn c_type(typename: &str) -> &'static str {
    C_TYPES.iter().find(|(n, _)| *n == typename).map(|(_, c)| *c).unwrap_or_else(|| panic!("no C type for TYPENAME {typename}"))
}

/// Whether `typename` names a distinct C type (not a typedef such as `int64_t` or
/// `size_t`, which would repeat a base type in a `_Generic` selection or a C++ overload).
pub fn is_base_type(typename: &str) -> bool {
    !c_type(typename).ends_with("_t")
}

/// Expands to the TYPENAMEs of a type-table macro, as `&[&str]`.
macro_rules! typenames {
    ($(($n:ident, $t:ty)),* $(,)?) => { &[$(stringify!($n)),*] };
}

/// Calls `$m!` with the RMA types that C has and Rust does not: moved as bytes only
/// (no `p`/`g`, which pass the value itself; the header defines those inline).
#[macro_export]
#[doc(hidden)]
macro_rules! c_only_rma_types {
    ($m:ident) => {
        $m! { (longdouble, $crate::table::LongDouble) }
    };
}

/// Calls `$m!` with the sized RMA forms: (module, bits, element type).
#[macro_export]
#[doc(hidden)]
macro_rules! sized_types {
    ($m:ident) => {
        $m! { (s8, 8, u8), (s16, 16, u16), (s32, 32, u32), (s64, 64, u64), (s128, 128, u128) }
    };
}

/// A C `long double`'s storage (16 bytes on x86-64 and aarch64 Linux), moved as bytes.
pub type LongDouble = u128;

/// TYPENAMEs of the standard RMA types that Rust has (every RMA routine).
pub const RMA: &[&str] = rshmem::rma_types!(typenames);
/// TYPENAMEs moved as bytes only (bulk RMA routines; `p`/`g` are header-inline).
pub const RMA_C_ONLY: &[&str] = c_only_rma_types!(typenames);
/// Expands to the bit sizes of `sized_types!`, as `&[u32]`.
macro_rules! bit_sizes {
    ($(($m:ident, $b:literal, $t:ty)),* $(,)?) => { &[$($b),*] };
}
/// Bit sizes of the sized RMA routines (`shmem_put32`, ...).
pub const SIZES: &[u32] = sized_types!(bit_sizes);
/// TYPENAMEs of the standard AMO types (every atomic).
pub const AMO_STANDARD: &[&str] = rshmem::amo_standard_types!(typenames);
/// TYPENAMEs the extended AMO table adds (fetch, set, swap).
pub const AMO_EXTENDED: &[&str] = rshmem::amo_extended_types!(typenames);
/// TYPENAMEs of the bitwise AMO types.
pub const AMO_BITWISE: &[&str] = rshmem::amo_bitwise_types!(typenames);
/// TYPENAMEs of the deprecated `shmem_TYPENAME_cswap/finc/inc/fadd/add` (the
/// `if_deprecated_standard!` filter in `amo.rs`).
pub const AMO_DEPRECATED_STANDARD: &[&str] = &["int", "long", "longlong"];
/// TYPENAMEs of the deprecated `shmem_TYPENAME_fetch/set/swap` (the
/// `if_deprecated_extended!` filter in `amo.rs`).
pub const AMO_DEPRECATED_EXTENDED: &[&str] = &["int", "long", "longlong", "float", "double"];
/// TYPENAMEs of the AND/OR/XOR reductions.
pub const REDUCE_BITWISE_TYPES: &[&str] = rshmem::reduce_bitwise_types!(typenames);
/// TYPENAMEs of the MAX/MIN reductions.
pub const REDUCE_MINMAX_TYPES: &[&str] = rshmem::reduce_minmax_types!(typenames);
/// TYPENAMEs of the SUM/PROD reductions and the sum scans.
pub const REDUCE_ARITH_TYPES: &[&str] = rshmem::reduce_arith_types!(typenames);
/// TYPENAMEs of the deprecated `and/or/xor_to_all` (the `if_to_all_bitwise!` filter in
/// `coll.rs`).
pub const TO_ALL_BITWISE_TYPES: &[&str] = &["short", "int", "long", "longlong"];
/// TYPENAMEs of the deprecated `max/min/sum/prod_to_all` that Rust can compute (the
/// `if_to_all_arith!` filter in `coll.rs`).
pub const TO_ALL_ARITH_TYPES: &[&str] = &["short", "int", "long", "longlong", "float", "double"];
/// TYPENAMEs of the point-to-point synchronization types.
pub const SYNC: &[&str] = rshmem::sync_types!(typenames);

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn every_listed_type_has_a_c_spelling() {
        for n in RMA.iter().chain(RMA_C_ONLY).chain(SYNC) {
            let _ = c_type(n);
        }
    }

    #[test]
    fn sized_types_have_their_sizes() {
        macro_rules! widths { ($(($m:ident, $b:literal, $t:ty)),*) => { [$((std::mem::size_of::<$t>() * 8, $b)),*] }; }
        for (w, b) in sized_types!(widths) {
            assert_eq!(w, b);
        }
    }
}
