//! The type tables: which Rust types the RMA, atomic and wait families accept.
//!
//! One macro per OpenSHMEM table lists `(C name, Rust type)` pairs; the Rust traits below
//! and the C ABI's per-type functions are both generated from these lists, so the type
//! matrix has one source of truth.

/// Calls `$m!` with the OpenSHMEM standard RMA types as `(name, type)` pairs
/// (`long double` has no Rust counterpart and is left out).
#[macro_export]
macro_rules! rma_types {
    ($m:ident) => {
        $m! {
            (float, f32), (double, f64), (char, i8), (schar, i8), (short, i16), (int, i32),
            (long, i64), (longlong, i64), (uchar, u8), (ushort, u16), (uint, u32), (ulong, u64),
            (ulonglong, u64), (int8, i8), (int16, i16), (int32, i32), (int64, i64), (uint8, u8),
            (uint16, u16), (uint32, u32), (uint64, u64), (size, usize), (ptrdiff, isize)
        }
    };
}

/// Calls `$m!` with the standard AMO types (fetch, set, swap, compare_swap, inc, add).
#[macro_export]
macro_rules! amo_standard_types {
    ($m:ident) => {
        $m! {
            (int, i32), (long, i64), (longlong, i64), (uint, u32), (ulong, u64), (ulonglong, u64),
            (int32, i32), (int64, i64), (uint32, u32), (uint64, u64), (size, usize), (ptrdiff, isize)
        }
    };
}

/// Calls `$m!` with the extended AMO types (fetch, set, swap only).
#[macro_export]
macro_rules! amo_extended_types {
    ($m:ident) => {
        $m! { (float, f32), (double, f64) }
    };
}

/// Calls `$m!` with the bitwise AMO types (and, or, xor).
#[macro_export]
macro_rules! amo_bitwise_types {
    ($m:ident) => {
        $m! {
            (uint, u32), (ulong, u64), (ulonglong, u64), (int32, i32), (int64, i64), (uint32, u32), (uint64, u64)
        }
    };
}

/// Calls `$m!` with the point-to-point synchronization types (wait, test).
#[macro_export]
macro_rules! sync_types {
    ($m:ident) => {
        $m! {
            (short, i16), (int, i32), (long, i64), (longlong, i64), (ushort, u16), (uint, u32),
            (ulong, u64), (ulonglong, u64), (int32, i32), (int64, i64), (uint32, u32), (uint64, u64),
            (size, usize), (ptrdiff, isize)
        }
    };
}

/// Calls `$m!` with the reduction types that AND, OR and XOR accept (OpenSHMEM's
/// team-based reduction table: unsigned and fixed-width integer types).
#[macro_export]
macro_rules! reduce_bitwise_types {
    ($m:ident) => {
        $m! {
            (uchar, u8), (ushort, u16), (uint, u32), (ulong, u64), (ulonglong, u64), (int8, i8), (int16, i16),
            (int32, i32), (int64, i64), (uint8, u8), (uint16, u16), (uint32, u32), (uint64, u64), (size, usize)
        }
    };
}

/// Calls `$m!` with the reduction types that MAX and MIN accept (integer and real
/// types; `long double` has no Rust counterpart and is left out).
#[macro_export]
macro_rules! reduce_minmax_types {
    ($m:ident) => {
        $m! {
            (char, i8), (schar, i8), (short, i16), (int, i32), (long, i64), (longlong, i64), (ptrdiff, isize),
            (uchar, u8), (ushort, u16), (uint, u32), (ulong, u64), (ulonglong, u64), (int8, i8), (int16, i16),
            (int32, i32), (int64, i64), (uint8, u8), (uint16, u16), (uint32, u32), (uint64, u64), (size, usize),
            (float, f32), (double, f64)
        }
    };
}

/// Calls `$m!` with the reduction types that SUM and PROD (and the sum scans) accept:
/// the MAX/MIN list. The complex types (`complexd`, `complexf`) and `long double` are
/// left out.
#[macro_export]
macro_rules! reduce_arith_types {
    ($m:ident) => {
        $crate::reduce_minmax_types!($m)
    };
}

/// Plain data that may live in the symmetric heap and travel by RMA.
pub trait SymType: bytemuck::Pod + Send + Sync + std::fmt::Debug + 'static {
    /// The type's name in messages.
    const NAME: &'static str;
}

/// Types of at most 8 bytes that the hardware reads and writes as one word.
pub trait WordType: SymType + PartialEq {
    /// Size in bytes (1, 2, 4 or 8).
    const WIDTH: usize = std::mem::size_of::<Self>();
    /// The value's bits, zero-extended.
    fn to_bits(self) -> u64;
    /// The value whose bits are the low `WIDTH` bytes of `bits`.
    fn from_bits(bits: u64) -> Self;
}

/// Integer types of the standard AMO table (fetch, set, swap, compare_swap, inc, add).
pub trait StandardAmo: WordType {}
/// Types of the bitwise AMO table (and, or, xor).
pub trait BitwiseAmo: WordType {}
/// Types of the extended AMO table (fetch, set, swap): standard types plus f32 and f64.
pub trait ExtendedAmo: WordType {}
/// Types that wait and test accept.
pub trait SyncWord: WordType + PartialOrd {}

macro_rules! sym_type {
    ($($t:ty),*) => { $(impl SymType for $t { const NAME: &'static str = stringify!($t); })* };
}
sym_type!(i8, i16, i32, i64, i128, u8, u16, u32, u64, u128, isize, usize, f32, f64, half::f16, half::bf16);

macro_rules! word_int {
    ($($t:ty => $u:ty),*) => { $(impl WordType for $t {
        #[inline] fn to_bits(self) -> u64 { self as $u as u64 }
        #[inline] fn from_bits(bits: u64) -> Self { bits as $u as $t }
    })* };
}
word_int!(i8 => u8, i16 => u16, i32 => u32, i64 => u64, isize => usize, u8 => u8, u16 => u16, u32 => u32, u64 => u64, usize => usize);

impl WordType for f32 {
    fn to_bits(self) -> u64 {
        f32::to_bits(self) as u64
    }
    fn from_bits(bits: u64) -> Self {
        f32::from_bits(bits as u32)
    }
}
impl WordType for f64 {
    fn to_bits(self) -> u64 {
        f64::to_bits(self)
    }
    fn from_bits(bits: u64) -> Self {
        f64::from_bits(bits)
    }
}

macro_rules! mark {
    ($tr:ident: $($t:ty),*) => { $(impl $tr for $t {})* };
}
mark!(StandardAmo: i32, i64, u32, u64, isize, usize);
mark!(ExtendedAmo: i32, i64, u32, u64, isize, usize, f32, f64);
mark!(BitwiseAmo: i32, i64, u32, u64);
mark!(SyncWord: i16, i32, i64, u16, u32, u64, isize, usize);

/// Reduction operators (values as in the C ABI).
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
#[repr(i32)]
pub enum ReduceOp {
    /// Bitwise and (integer types).
    And = 0,
    /// Bitwise or (integer types).
    Or = 1,
    /// Bitwise exclusive or (integer types).
    Xor = 2,
    /// Maximum. For floats, IEEE maxNum (`f64::max`): a NaN loses to a number.
    Max = 3,
    /// Minimum. For floats, IEEE minNum (`f64::min`).
    Min = 4,
    /// Sum (wrapping for integers).
    Sum = 5,
    /// Product (wrapping for integers).
    Prod = 6,
}

impl ReduceOp {
    /// Every operator.
    pub const ALL: [ReduceOp; 7] =
        [ReduceOp::And, ReduceOp::Or, ReduceOp::Xor, ReduceOp::Max, ReduceOp::Min, ReduceOp::Sum, ReduceOp::Prod];

    /// The operator with C value `v`.
    pub fn from_raw(v: i32) -> Option<ReduceOp> {
        ReduceOp::ALL.into_iter().find(|o| *o as i32 == v)
    }

    /// Whether it is AND, OR or XOR.
    pub fn is_bitwise(self) -> bool {
        matches!(self, ReduceOp::And | ReduceOp::Or | ReduceOp::Xor)
    }

    /// Lower-case name (as in `shmem_int_sum_reduce`).
    pub fn name(self) -> &'static str {
        match self {
            ReduceOp::And => "and",
            ReduceOp::Or => "or",
            ReduceOp::Xor => "xor",
            ReduceOp::Max => "max",
            ReduceOp::Min => "min",
            ReduceOp::Sum => "sum",
            ReduceOp::Prod => "prod",
        }
    }
}

/// The element type of a reduction given by tag (the address forms and the C ABI).
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
#[repr(i32)]
pub enum ReduceDtype {
    /// `i8` (C `char`, `signed char`, `int8_t`).
    I8 = 0,
    /// `i16` (`short`, `int16_t`).
    I16 = 1,
    /// `i32` (`int`, `int32_t`).
    I32 = 2,
    /// `i64` (`long`, `long long`, `int64_t`).
    I64 = 3,
    /// `isize` (`ptrdiff_t`).
    Isize = 4,
    /// `u8` (`unsigned char`, `uint8_t`).
    U8 = 5,
    /// `u16` (`unsigned short`, `uint16_t`).
    U16 = 6,
    /// `u32` (`unsigned int`, `uint32_t`).
    U32 = 7,
    /// `u64` (`unsigned long`, `unsigned long long`, `uint64_t`).
    U64 = 8,
    /// `usize` (`size_t`).
    Usize = 9,
    /// `f32` (`float`).
    F32 = 10,
    /// `f64` (`double`).
    F64 = 11,
}

impl ReduceDtype {
    /// Every tag.
    pub const ALL: [ReduceDtype; 12] = [
        ReduceDtype::I8,
        ReduceDtype::I16,
        ReduceDtype::I32,
        ReduceDtype::I64,
        ReduceDtype::Isize,
        ReduceDtype::U8,
        ReduceDtype::U16,
        ReduceDtype::U32,
        ReduceDtype::U64,
        ReduceDtype::Usize,
        ReduceDtype::F32,
        ReduceDtype::F64,
    ];

    /// Size of one element in bytes.
    pub fn size(self) -> usize {
        match self {
            ReduceDtype::I8 | ReduceDtype::U8 => 1,
            ReduceDtype::I16 | ReduceDtype::U16 => 2,
            ReduceDtype::I32 | ReduceDtype::U32 | ReduceDtype::F32 => 4,
            ReduceDtype::I64 | ReduceDtype::U64 | ReduceDtype::F64 => 8,
            ReduceDtype::Isize | ReduceDtype::Usize => std::mem::size_of::<usize>(),
        }
    }

    /// Whether it is a floating-point type.
    pub fn is_float(self) -> bool {
        matches!(self, ReduceDtype::F32 | ReduceDtype::F64)
    }

    /// Whether `op` is defined on it (bitwise operators only on integers).
    pub fn supports(self, op: ReduceOp) -> bool {
        !(op.is_bitwise() && self.is_float())
    }

    /// The Rust type's name.
    pub fn name(self) -> &'static str {
        match self {
            ReduceDtype::I8 => "i8",
            ReduceDtype::I16 => "i16",
            ReduceDtype::I32 => "i32",
            ReduceDtype::I64 => "i64",
            ReduceDtype::Isize => "isize",
            ReduceDtype::U8 => "u8",
            ReduceDtype::U16 => "u16",
            ReduceDtype::U32 => "u32",
            ReduceDtype::U64 => "u64",
            ReduceDtype::Usize => "usize",
            ReduceDtype::F32 => "f32",
            ReduceDtype::F64 => "f64",
        }
    }

    /// The tag with C value `v`.
    pub fn from_raw(v: i32) -> Option<ReduceDtype> {
        ReduceDtype::ALL.into_iter().find(|d| *d as i32 == v)
    }
}

/// Element types of reductions and scans: the Rust types behind the reduction tables.
pub trait ReduceType: SymType + PartialOrd {
    /// The type's tag.
    const DTYPE: ReduceDtype;
    /// The additive identity (what an exclusive scan gives the first PE).
    const ZERO: Self;
    /// `acc[i] = acc[i] <op> x[i]` for every `i` (operands in that order). Bitwise
    /// operators leave a float `acc` unchanged; callers check [`ReduceDtype::supports`].
    fn combine(op: ReduceOp, acc: &mut [Self], x: &[Self]);
}

macro_rules! reduce_int {
    ($($t:ty => $d:ident),*) => { $(impl ReduceType for $t {
        const DTYPE: ReduceDtype = ReduceDtype::$d;
        const ZERO: Self = 0;
        fn combine(op: ReduceOp, acc: &mut [Self], x: &[Self]) {
            let pairs = acc.iter_mut().zip(x);
            match op {
                ReduceOp::And => pairs.for_each(|(a, b)| *a &= *b),
                ReduceOp::Or => pairs.for_each(|(a, b)| *a |= *b),
                ReduceOp::Xor => pairs.for_each(|(a, b)| *a ^= *b),
                ReduceOp::Max => pairs.for_each(|(a, b)| *a = (*a).max(*b)),
                ReduceOp::Min => pairs.for_each(|(a, b)| *a = (*a).min(*b)),
                ReduceOp::Sum => pairs.for_each(|(a, b)| *a = a.wrapping_add(*b)),
                ReduceOp::Prod => pairs.for_each(|(a, b)| *a = a.wrapping_mul(*b)),
            }
        }
    })* };
}
reduce_int!(i8 => I8, i16 => I16, i32 => I32, i64 => I64, isize => Isize, u8 => U8, u16 => U16, u32 => U32, u64 => U64, usize => Usize);

macro_rules! reduce_float {
    ($($t:ty => $d:ident),*) => { $(impl ReduceType for $t {
        const DTYPE: ReduceDtype = ReduceDtype::$d;
        const ZERO: Self = 0.0;
        fn combine(op: ReduceOp, acc: &mut [Self], x: &[Self]) {
            let pairs = acc.iter_mut().zip(x);
            match op {
                ReduceOp::Max => pairs.for_each(|(a, b)| *a = a.max(*b)),
                ReduceOp::Min => pairs.for_each(|(a, b)| *a = a.min(*b)),
                ReduceOp::Sum => pairs.for_each(|(a, b)| *a += *b),
                ReduceOp::Prod => pairs.for_each(|(a, b)| *a *= *b),
                ReduceOp::And | ReduceOp::Or | ReduceOp::Xor => {}
            }
        }
    })* };
}
reduce_float!(f32 => F32, f64 => F64);

/// Evaluates `$body` with `$t` bound to the Rust type of the [`ReduceDtype`] `$dtype`
/// (how the address forms reach the generic code).
#[macro_export]
macro_rules! with_reduce_type {
    ($dtype:expr, $t:ident => $body:expr) => {
        match $dtype {
            $crate::types::ReduceDtype::I8 => {
                type $t = i8;
                $body
            }
            $crate::types::ReduceDtype::I16 => {
                type $t = i16;
                $body
            }
            $crate::types::ReduceDtype::I32 => {
                type $t = i32;
                $body
            }
            $crate::types::ReduceDtype::I64 => {
                type $t = i64;
                $body
            }
            $crate::types::ReduceDtype::Isize => {
                type $t = isize;
                $body
            }
            $crate::types::ReduceDtype::U8 => {
                type $t = u8;
                $body
            }
            $crate::types::ReduceDtype::U16 => {
                type $t = u16;
                $body
            }
            $crate::types::ReduceDtype::U32 => {
                type $t = u32;
                $body
            }
            $crate::types::ReduceDtype::U64 => {
                type $t = u64;
                $body
            }
            $crate::types::ReduceDtype::Usize => {
                type $t = usize;
                $body
            }
            $crate::types::ReduceDtype::F32 => {
                type $t = f32;
                $body
            }
            $crate::types::ReduceDtype::F64 => {
                type $t = f64;
                $body
            }
        }
    };
}

/// Comparison operators of wait and test (values as in the C header).
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
#[repr(i32)]
pub enum Cmp {
    /// Equal.
    Eq = 0,
    /// Not equal.
    Ne = 1,
    /// Greater than.
    Gt = 2,
    /// Greater than or equal.
    Ge = 3,
    /// Less than.
    Lt = 4,
    /// Less than or equal.
    Le = 5,
}

impl Cmp {
    /// Every operator.
    pub const ALL: [Cmp; 6] = [Cmp::Eq, Cmp::Ne, Cmp::Gt, Cmp::Ge, Cmp::Lt, Cmp::Le];

    /// Whether `a <op> b` holds.
    #[inline]
    pub fn holds<T: PartialOrd>(self, a: T, b: T) -> bool {
        match self {
            Cmp::Eq => a == b,
            Cmp::Ne => a != b,
            Cmp::Gt => a > b,
            Cmp::Ge => a >= b,
            Cmp::Lt => a < b,
            Cmp::Le => a <= b,
        }
    }

    /// The operator with C value `v`.
    pub fn from_raw(v: i32) -> Option<Cmp> {
        Cmp::ALL.into_iter().find(|c| *c as i32 == v)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn reduce_kernels() {
        let mut a = [1i32, -4, 7];
        i32::combine(ReduceOp::Max, &mut a, &[2, -5, 7]);
        assert_eq!(a, [2, -4, 7]);
        let mut u = [250u8, 3];
        u8::combine(ReduceOp::Sum, &mut u, &[10, 4]);
        assert_eq!(u, [4, 7], "integer sums wrap");
        let mut f = [1.5f64, f64::NAN];
        f64::combine(ReduceOp::Min, &mut f, &[f64::NAN, 2.0]);
        assert_eq!(f, [1.5, 2.0], "min ignores NaN");
        assert!(!ReduceDtype::F32.supports(ReduceOp::Xor) && ReduceDtype::I8.supports(ReduceOp::Xor));
        assert_eq!(ReduceOp::from_raw(5), Some(ReduceOp::Sum));
        for d in ReduceDtype::ALL {
            assert_eq!(ReduceDtype::from_raw(d as i32), Some(d));
            assert_eq!(with_reduce_type!(d, T => std::mem::size_of::<T>()), d.size());
            assert_eq!(with_reduce_type!(d, T => <T as ReduceType>::DTYPE), d);
        }
    }

    #[test]
    fn bits_round_trip() {
        assert_eq!(i32::from_bits((-5i32).to_bits()), -5);
        assert_eq!((-1i16).to_bits(), 0xffff);
        assert_eq!(f64::from_bits(WordType::to_bits(2.5f64)), 2.5);
        assert_eq!(Cmp::from_raw(3), Some(Cmp::Ge));
        assert!(Cmp::Le.holds(3, 3) && !Cmp::Lt.holds(3, 3));
    }
}
