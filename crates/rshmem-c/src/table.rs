//! The type table of the C ABI.
//!
//! Which types each family accepts comes from rshmem's tables (`rshmem::rma_types!`,
//! `rshmem::amo_standard_types!`, ... in `rshmem::types`), as `(TYPENAME, Rust type)`
//! pairs. This module adds what those tables cannot say: how C spells each TYPENAME,
//! the types only C has (`long double`, the complex types) with the storage that moves
//! them, and which C types a fixed-width typedef may stand for. The exported functions
//! are generated from these lists by macro, and the header from the functions'
//! descriptions; this module is the bottom of the crate and imports none of it.

/// The C type of each TYPENAME; the only place C types are named.
pub const C_TYPES: &[(&str, &str)] = &[
    ("float", "float"),
    ("double", "double"),
    ("longdouble", "long double"),
    // Typedefs of the header: `float _Complex`/`double _Complex` in C,
    // `std::complex<float>`/`std::complex<double>` in C++ (same layout).
    ("complexf", "rshmem_complexf"),
    ("complexd", "rshmem_complexd"),
    // Typedefs of rshmemx_cuda.h: CUDA's `__half` and `__nv_bfloat16` bits (16-bit
    // structs, passed as those are).
    ("half", "rshmemx_half"),
    ("bfloat16", "rshmemx_bfloat16"),
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

/// The base TYPENAMEs each fixed-width or size typedef may be on an LP64 or ILP32 Linux
/// ABI. A type-generic interface whose base types include all of a typedef's candidates
/// reaches it through them; otherwise it needs the typedef itself (`int32_t` for the
/// bitwise atomics, whose base types are only unsigned).
pub const TYPEDEF_CANDIDATES: &[(&str, &[&str])] = &[
    ("int8", &["schar"]),
    ("int16", &["short"]),
    ("int32", &["int", "long"]),
    ("int64", &["long", "longlong"]),
    ("uint8", &["uchar"]),
    ("uint16", &["ushort"]),
    ("uint32", &["uint", "ulong"]),
    ("uint64", &["ulong", "ulonglong"]),
    ("size", &["uint", "ulong", "ulonglong"]),
    ("ptrdiff", &["int", "long", "longlong"]),
];

/// Whether a generic over `types` must name the typedef `typename` itself: some base type
/// it may stand for is not among `types`.
pub fn typedef_needs_own_entry(typename: &str, types: &[&str]) -> bool {
    let candidates = TYPEDEF_CANDIDATES.iter().find(|(n, _)| *n == typename).map(|(_, c)| *c).unwrap_or(&[]);
    !is_base_type(typename) && candidates.iter().any(|c| !types.contains(c))
}

/// Expands to the TYPENAMEs of a type-table macro, as `&[&str]`.
macro_rules! typenames {
    ($(($n:ident, $t:ty)),* $(,)?) => { &[$(stringify!($n)),*] };
}

/// Calls `$m!` with the RMA types that C has and Rust does not: moved as bytes (their
/// `p`/`g`, which pass the value itself, are C code).
#[macro_export]
#[doc(hidden)]
macro_rules! c_only_rma_types {
    ($m:ident) => {
        $m! { (longdouble, $crate::table::LongDouble) }
    };
}

/// Calls `$m!` with the MAX/MIN reduction types that only C can compute.
#[macro_export]
#[doc(hidden)]
macro_rules! c_only_reduce_minmax_types {
    ($m:ident) => {
        $m! { (longdouble, $crate::table::LongDouble) }
    };
}

/// Calls `$m!` with the SUM/PROD reduction and scan types that only C can compute.
#[macro_export]
#[doc(hidden)]
macro_rules! c_only_reduce_arith_types {
    ($m:ident) => {
        $m! { (longdouble, $crate::table::LongDouble), (complexd, $crate::table::ComplexD), (complexf, $crate::table::ComplexF) }
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

/// A C `long double`'s storage: 16 bytes, 16-aligned, on x86-64 (80-bit extended, padded)
/// and aarch64 (binary128) Linux. Rust only moves it; C computes with it.
#[repr(transparent)]
#[derive(Debug, Clone, Copy, PartialEq, bytemuck::Pod, bytemuck::Zeroable)]
pub struct LongDouble(pub u128);

/// A C `float _Complex`: real and imaginary parts.
#[repr(C)]
#[derive(Debug, Clone, Copy, PartialEq, bytemuck::Pod, bytemuck::Zeroable)]
pub struct ComplexF {
    /// Real part.
    pub re: f32,
    /// Imaginary part.
    pub im: f32,
}

/// A C `double _Complex`: real and imaginary parts.
#[repr(C)]
#[derive(Debug, Clone, Copy, PartialEq, bytemuck::Pod, bytemuck::Zeroable)]
pub struct ComplexD {
    /// Real part.
    pub re: f64,
    /// Imaginary part.
    pub im: f64,
}

/// TYPENAMEs of the standard RMA types that Rust has (every RMA routine).
pub const RMA: &[&str] = rshmem::rma_types!(typenames);
/// TYPENAMEs moved as bytes only.
pub const RMA_C_ONLY: &[&str] = c_only_rma_types!(typenames);
/// TYPENAMEs of the reductions only C computes.
pub const REDUCE_C_ONLY: &[&str] = c_only_reduce_arith_types!(typenames);
/// TYPENAMEs of the point-to-point synchronization types.
pub const SYNC: &[&str] = rshmem::sync_types!(typenames);

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn every_listed_type_has_a_c_spelling() {
        for n in RMA.iter().chain(RMA_C_ONLY).chain(REDUCE_C_ONLY).chain(SYNC) {
            let _ = c_type(n);
        }
        for (n, candidates) in TYPEDEF_CANDIDATES {
            assert!(!is_base_type(n), "{n} is a typedef");
            assert!(candidates.iter().all(|c| is_base_type(c)), "{n}'s candidates are base types");
        }
    }

    #[test]
    fn typedefs_need_their_own_entry_only_where_a_candidate_is_missing() {
        let bitwise_amo = ["uint", "ulong", "ulonglong", "int32", "int64", "uint32", "uint64"];
        let own: Vec<&str> = bitwise_amo.iter().copied().filter(|t| typedef_needs_own_entry(t, &bitwise_amo)).collect();
        assert_eq!(own, ["int32", "int64"]);
        assert!(!typedef_needs_own_entry("int", &["int"]), "base types never");
    }

    #[test]
    fn c_only_storage_matches_c() {
        // x86-64 and aarch64 Linux: long double is 16 bytes, 16-aligned.
        assert_eq!((std::mem::size_of::<LongDouble>(), std::mem::align_of::<LongDouble>()), (16, 16));
        assert_eq!(std::mem::size_of::<ComplexF>(), 8);
        assert_eq!(std::mem::size_of::<ComplexD>(), 16);
    }

    #[test]
    fn sized_types_have_their_sizes() {
        macro_rules! widths { ($(($m:ident, $b:literal, $t:ty)),*) => { [$((std::mem::size_of::<$t>() * 8, $b)),*] }; }
        for (w, b) in sized_types!(widths) {
            assert_eq!(w, b);
        }
    }
}
