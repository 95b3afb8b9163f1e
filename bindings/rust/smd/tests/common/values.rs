//! Test values for every datatype: small integers, exact in every type
//! (bfloat16 included) and in every reduction the tests make of them.

use std::fmt::Debug;

use smd::{Datatype, Op, bf16, f16};

/// A datatype the tests can fill and check.
pub trait Value: Datatype + PartialEq + Debug {
    /// `v` in this type (`v` small enough to be exact).
    fn of(v: i64) -> Self;
    /// `num / den` as `Op::Avg` computes it: truncated for integers, exact
    /// for floats (`den` a power of two).
    fn ratio(num: i64, den: i64) -> Self;
}

macro_rules! ints {
    ($($t:ty),*) => {$(
        impl Value for $t {
            fn of(v: i64) -> $t {
                <$t>::try_from(v).expect("test value fits")
            }
            fn ratio(num: i64, den: i64) -> $t {
                <$t>::of(num / den)
            }
        }
    )*};
}
ints!(i8, u8, i32, u32, i64, u64);

impl Value for f32 {
    fn of(v: i64) -> f32 {
        v as f32
    }
    fn ratio(num: i64, den: i64) -> f32 {
        (num as f64 / den as f64) as f32
    }
}

impl Value for f64 {
    fn of(v: i64) -> f64 {
        v as f64
    }
    fn ratio(num: i64, den: i64) -> f64 {
        num as f64 / den as f64
    }
}

impl Value for f16 {
    fn of(v: i64) -> f16 {
        f16::from_f32(v as f32)
    }
    fn ratio(num: i64, den: i64) -> f16 {
        f16::from_f32((num as f64 / den as f64) as f32)
    }
}

impl Value for bf16 {
    fn of(v: i64) -> bf16 {
        bf16::from_f32(v as f32)
    }
    fn ratio(num: i64, den: i64) -> bf16 {
        bf16::from_f32((num as f64 / den as f64) as f32)
    }
}

/// Element `i` of rank `rank`'s input: 1, 2 or 3.
pub fn input(rank: usize, i: usize) -> i64 {
    ((rank + 2 * i) % 3 + 1) as i64
}

/// Rank `rank`'s input of `n` elements.
pub fn inputs<T: Value>(rank: usize, n: usize) -> Vec<T> {
    let period: Vec<T> = (0..3).map(|i| T::of(input(rank, i))).collect();
    period.iter().copied().cycle().take(n).collect()
}

/// `op` over the inputs of `ranks` ranks at element `i` (at most 3^4 = 81
/// for a product over 4 ranks: exact everywhere, no wrap-around). The
/// average is exact for floats because the tests use 1, 2 or 4 ranks.
pub fn reduced<T: Value>(op: Op, ranks: usize, i: usize) -> T {
    let all = (0..ranks).map(|r| input(r, i));
    match op {
        Op::Sum => T::of(all.sum()),
        Op::Prod => T::of(all.product()),
        Op::Min => T::of(all.min().unwrap()),
        Op::Max => T::of(all.max().unwrap()),
        Op::Avg => T::ratio(all.sum(), ranks as i64),
    }
}

/// The reduction of `n` elements over `ranks` ranks. Inputs repeat every
/// 3 elements, so 3 are computed and repeated.
pub fn expected<T: Value>(op: Op, ranks: usize, n: usize) -> Vec<T> {
    let period: Vec<T> = (0..3).map(|i| reduced(op, ranks, i)).collect();
    period.iter().copied().cycle().take(n).collect()
}

pub const OPS: [Op; 5] = [Op::Sum, Op::Prod, Op::Min, Op::Max, Op::Avg];

/// Calls `$f::<T>($args)` for every datatype.
#[allow(unused_macros)] // not every test binary uses it
macro_rules! for_each_datatype {
    ($f:ident($($arg:expr),*)) => {{
        $f::<i8>($($arg),*);
        $f::<u8>($($arg),*);
        $f::<i32>($($arg),*);
        $f::<u32>($($arg),*);
        $f::<i64>($($arg),*);
        $f::<u64>($($arg),*);
        $f::<smd::f16>($($arg),*);
        $f::<smd::bf16>($($arg),*);
        $f::<f32>($($arg),*);
        $f::<f64>($($arg),*);
    }};
}
