//! Arithmetic on the types only C has (`long double`, `float _Complex`,
//! `double _Complex`), done by the C compiler in `csrc/c_types.c`: Rust has no 80-bit
//! float, and C's complex product has its own rules for infinities and NaNs (C11 Annex
//! G), so the exact results come from C itself.

use crate::table::{ComplexD, ComplexF, LongDouble};
use rshmem::ReduceOp;
use std::ffi::c_int;

extern "C" {
    fn rshmem_c_longdouble_combine(op: c_int, acc: *mut LongDouble, x: *const LongDouble, n: usize) -> c_int;
    fn rshmem_c_complexf_combine(op: c_int, acc: *mut ComplexF, x: *const ComplexF, n: usize) -> c_int;
    fn rshmem_c_complexd_combine(op: c_int, acc: *mut ComplexD, x: *const ComplexD, n: usize) -> c_int;
}

/// An element type whose arithmetic is C's.
pub(crate) trait CArith: bytemuck::Pod {
    /// `acc[i] = acc[i] <op> x[i]` for every `i`; false for an operator the type lacks
    /// (bitwise ones, and MAX/MIN of complex numbers).
    fn combine(op: ReduceOp, acc: &mut [Self], x: &[Self]) -> bool;
}

macro_rules! c_arith {
    ($($t:ty => $f:ident),*) => { $(
        impl CArith for $t {
            fn combine(op: ReduceOp, acc: &mut [Self], x: &[Self]) -> bool {
                let n = acc.len().min(x.len());
                // SAFETY: both slices hold at least `n` elements of the C type's layout
                // (`table` checks sizes and alignment); the C routine touches only those.
                unsafe { $f(op as c_int, acc.as_mut_ptr(), x.as_ptr(), n) == 0 }
            }
        }
    )* };
}
c_arith!(LongDouble => rshmem_c_longdouble_combine, ComplexF => rshmem_c_complexf_combine, ComplexD => rshmem_c_complexd_combine);

#[cfg(test)]
mod tests {
    use super::*;

    /// The `long double` of the same value as a normal `f64`, from its bits (x86-64: the
    /// 80-bit format, its padding bytes zero; aarch64: binary128).
    fn ld(v: f64) -> LongDouble {
        #[cfg(target_arch = "x86_64")]
        {
            if v == 0.0 {
                return LongDouble(0);
            }
            let bits = v.to_bits();
            let sign = (bits >> 63) as u128;
            let exp = ((bits >> 52) & 0x7ff) as i64 - 1023 + 16383;
            let mant = ((bits & ((1 << 52) - 1)) | (1 << 52)) as u128;
            LongDouble((sign << 79) | ((exp as u128) << 64) | (mant << 11))
        }
        #[cfg(not(target_arch = "x86_64"))]
        {
            if v == 0.0 {
                return LongDouble(0);
            }
            let bits = v.to_bits();
            let sign = (bits >> 63) as u128;
            let exp = ((bits >> 52) & 0x7ff) as i64 - 1023 + 16383;
            let mant = (bits & ((1 << 52) - 1)) as u128;
            LongDouble((sign << 127) | ((exp as u128) << 112) | (mant << 60))
        }
    }

    #[test]
    fn operator_numbers_agree_with_c() {
        let mut acc = [ld(1.5), ld(-2.0), ld(4.0)];
        let x = [ld(2.5), ld(3.0), ld(0.25)];
        let mut a = acc;
        assert!(LongDouble::combine(ReduceOp::Sum, &mut a, &x));
        assert_eq!(a, [ld(4.0), ld(1.0), ld(4.25)]);
        a = acc;
        assert!(LongDouble::combine(ReduceOp::Prod, &mut a, &x));
        assert_eq!(a, [ld(3.75), ld(-6.0), ld(1.0)]);
        a = acc;
        assert!(LongDouble::combine(ReduceOp::Max, &mut a, &x));
        assert_eq!(a, [ld(2.5), ld(3.0), ld(4.0)]);
        assert!(LongDouble::combine(ReduceOp::Min, &mut acc, &x));
        assert_eq!(acc, [ld(1.5), ld(-2.0), ld(0.25)]);
        assert!(!LongDouble::combine(ReduceOp::Xor, &mut acc, &x), "no bitwise operators");
    }

    #[test]
    fn complex_products_are_c_products() {
        let mut f = [ComplexF { re: 1.0, im: 2.0 }];
        assert!(ComplexF::combine(ReduceOp::Prod, &mut f, &[ComplexF { re: 3.0, im: -1.0 }]));
        assert_eq!(f, [ComplexF { re: 5.0, im: 5.0 }]);
        let mut d = [ComplexD { re: 0.5, im: 0.0 }];
        assert!(ComplexD::combine(ReduceOp::Sum, &mut d, &[ComplexD { re: 1.0, im: -4.0 }]));
        assert_eq!(d, [ComplexD { re: 1.5, im: -4.0 }]);
        assert!(!ComplexD::combine(ReduceOp::Max, &mut d, &[ComplexD { re: 0.0, im: 0.0 }]), "complex numbers have no order");
    }
}
