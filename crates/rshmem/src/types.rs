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
    fn bits_round_trip() {
        assert_eq!(i32::from_bits((-5i32).to_bits()), -5);
        assert_eq!((-1i16).to_bits(), 0xffff);
        assert_eq!(f64::from_bits(WordType::to_bits(2.5f64)), 2.5);
        assert_eq!(Cmp::from_raw(3), Some(Cmp::Ge));
        assert!(Cmp::Le.holds(3, 3) && !Cmp::Lt.holds(3, 3));
    }
}
