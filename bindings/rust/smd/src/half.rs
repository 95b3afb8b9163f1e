//! 16-bit floating-point element types: [`f16`](struct@f16) (IEEE 754 binary16) and
//! [`bf16`] (bfloat16).
//!
//! Rust has no stable 16-bit float, so these are storage types: a
//! `#[repr(transparent)]` `u16` with conversions to and from `f32` that round
//! to nearest, ties to even — the rounding libsmd applies after reducing
//! them in `f32`. Comparisons compare the `f32` values (so `-0 == +0` and
//! NaN is unequal to everything).

use std::cmp::Ordering;
use std::fmt;

/// IEEE 754 binary16: 1 sign bit, 5 exponent bits, 10 mantissa bits.
///
/// ```
/// use smd::f16;
/// let x = f16::from_f32(1.5);
/// assert_eq!(x.to_f32(), 1.5);
/// assert_eq!(x.to_bits(), 0x3e00);
/// assert_eq!(f16::from_f32(65520.0), f16::INFINITY); // past the largest finite, 65504
/// ```
#[allow(non_camel_case_types)]
#[repr(transparent)]
#[derive(Clone, Copy, Default)]
pub struct f16(u16);

/// bfloat16: the upper 16 bits of an `f32` (8 exponent bits, 7 mantissa bits).
///
/// ```
/// use smd::bf16;
/// let x = bf16::from_f32(3.0);
/// assert_eq!(x.to_f32(), 3.0);
/// assert_eq!(x.to_bits(), 0x4040);
/// assert_eq!(bf16::from_f32(1.0 + 1.0 / 256.0).to_f32(), 1.0); // a tie, to even
/// ```
#[allow(non_camel_case_types)]
#[repr(transparent)]
#[derive(Clone, Copy, Default)]
pub struct bf16(u16);

/// A doc example asserting `smd::$t::` followed by `$args` as the arguments
/// of `assert_eq!`.
macro_rules! example {
    ($t:ident, $($args:expr),*) => {
        concat!("```\nassert_eq!(smd::", stringify!($t), "::", $($args,)* ");\n```")
    };
}

/// The constants and bit conversions of a storage type whose one and
/// positive infinity have the bit patterns `$one` and `$infinity`; the
/// `from_bits` example reads `$v` from the pattern `$bits`.
macro_rules! bit_patterns {
    (
        $t:ident {
            one: $one:literal,
            infinity: $infinity:literal,
            example: $bits:literal => $v:literal
        }
    ) => {
        impl $t {
            /// Positive zero.
            ///
            #[doc = example!($t, "ZERO.to_f32(), 0.0")]
            pub const ZERO: $t = $t(0);
            /// One.
            ///
            #[doc = example!($t, "ONE.to_f32(), 1.0")]
            pub const ONE: $t = $t($one);
            /// Positive infinity.
            ///
            #[doc = example!($t, "INFINITY.to_f32(), f32::INFINITY")]
            pub const INFINITY: $t = $t($infinity);

            /// The value whose bit pattern is `bits`.
            ///
            #[doc = example!($t, "from_bits(", stringify!($bits), ").to_f32(), ", stringify!($v))]
            pub const fn from_bits(bits: u16) -> $t {
                $t(bits)
            }

            /// The bit pattern.
            ///
            #[doc = example!($t, "ONE.to_bits(), ", stringify!($one))]
            pub const fn to_bits(self) -> u16 {
                self.0
            }
        }
    };
}

bit_patterns!(f16 { one: 0x3c00, infinity: 0x7c00, example: 0xc000 => -2.0 });
bit_patterns!(bf16 { one: 0x3f80, infinity: 0x7f80, example: 0xbf80 => -1.0 });

impl f16 {
    /// The largest finite value, 65504.
    ///
    /// ```
    /// assert_eq!(smd::f16::MAX.to_f32(), 65504.0);
    /// ```
    pub const MAX: f16 = f16(0x7bff);

    /// `x` rounded to the nearest binary16, ties to even; too large a
    /// magnitude becomes infinity, too small a zero (subnormals included),
    /// NaN stays NaN.
    ///
    /// ```
    /// use smd::f16;
    /// assert_eq!(f16::from_f32(0.1).to_f32(), 0.099975586);
    /// assert_eq!(f16::from_f32(1e-8).to_f32(), 0.0);
    /// assert!(f16::from_f32(f32::NAN).is_nan());
    /// ```
    pub fn from_f32(x: f32) -> f16 {
        let bits = x.to_bits();
        let sign = ((bits >> 16) & 0x8000) as u16;
        let exp = ((bits >> 23) & 0xff) as i32;
        let man = bits & 0x007f_ffff;
        if exp == 0xff {
            // Infinity, or NaN kept quiet with the top of its payload.
            let nan = if man != 0 {
                0x0200 | (man >> 13) as u16
            } else {
                0
            };
            return f16(sign | 0x7c00 | nan);
        }
        let e = exp - 127;
        if e > 15 {
            return f16(sign | 0x7c00);
        }
        if e >= -14 {
            // Normal: rebias the exponent, keep 10 of the 23 mantissa bits.
            // A carry out of the mantissa moves into the exponent, which is
            // exactly the next binade (or infinity after the largest).
            let h = (((e + 15) as u32) << 10) | (man >> 13);
            return f16(sign | round_shifted(h, man & 0x1fff, 13) as u16);
        }
        if e < -25 {
            return f16(sign);
        }
        // Subnormal: the value in units of 2^-24 is (1.man) * 2^(e + 24).
        let m = man | 0x0080_0000;
        let shift = (-e - 1) as u32; // 14..=24
        let h = m >> shift;
        f16(sign | round_shifted(h, m & ((1 << shift) - 1), shift) as u16)
    }

    /// The exact `f32` value.
    ///
    /// ```
    /// assert_eq!(smd::f16::MAX.to_f32(), 65504.0);
    /// ```
    pub fn to_f32(self) -> f32 {
        let h = u32::from(self.0);
        let sign = (h & 0x8000) << 16;
        let exp = (h >> 10) & 0x1f;
        let man = h & 0x3ff;
        let bits = match exp {
            0 if man == 0 => sign,
            0 => {
                // Subnormal: man * 2^-24, exact in f32.
                let v = man as f32 * (1.0 / 16_777_216.0);
                return if sign != 0 { -v } else { v };
            }
            0x1f => sign | 0x7f80_0000 | (man << 13),
            _ => sign | ((exp + 112) << 23) | (man << 13),
        };
        f32::from_bits(bits)
    }

    /// Whether this is a NaN.
    ///
    /// ```
    /// assert!(!smd::f16::ONE.is_nan());
    /// ```
    pub fn is_nan(self) -> bool {
        self.0 & 0x7c00 == 0x7c00 && self.0 & 0x03ff != 0
    }
}

impl bf16 {
    /// `x` rounded to the nearest bfloat16, ties to even; NaN stays NaN.
    ///
    /// ```
    /// use smd::bf16;
    /// assert_eq!(bf16::from_f32(1.0 + 3.0 / 256.0).to_f32(), 1.015625);
    /// assert!(bf16::from_f32(f32::NAN).is_nan());
    /// ```
    pub fn from_f32(x: f32) -> bf16 {
        let bits = x.to_bits();
        if x.is_nan() {
            // Truncating could clear every payload bit left: keep it quiet.
            return bf16((bits >> 16) as u16 | 0x0040);
        }
        bf16(round_shifted(bits >> 16, bits & 0xffff, 16) as u16)
    }

    /// The exact `f32` value.
    ///
    /// ```
    /// assert_eq!(smd::bf16::from_f32(-0.5).to_f32(), -0.5);
    /// ```
    pub fn to_f32(self) -> f32 {
        f32::from_bits(u32::from(self.0) << 16)
    }

    /// Whether this is a NaN.
    ///
    /// ```
    /// assert!(!smd::bf16::INFINITY.is_nan());
    /// ```
    pub fn is_nan(self) -> bool {
        self.0 & 0x7f80 == 0x7f80 && self.0 & 0x007f != 0
    }
}

/// `kept` (the bits above a right shift by `shift`) rounded by the bits
/// `dropped` that the shift removed: to nearest, ties to even.
fn round_shifted(kept: u32, dropped: u32, shift: u32) -> u32 {
    let half = 1 << (shift - 1);
    if dropped > half || (dropped == half && kept & 1 == 1) {
        kept + 1
    } else {
        kept
    }
}

macro_rules! float_traits {
    ($($t:ident),*) => {$(
        impl From<$t> for f32 {
            fn from(x: $t) -> f32 {
                x.to_f32()
            }
        }

        impl From<$t> for f64 {
            fn from(x: $t) -> f64 {
                f64::from(x.to_f32())
            }
        }

        impl PartialEq for $t {
            fn eq(&self, other: &$t) -> bool {
                self.to_f32() == other.to_f32()
            }
        }

        impl PartialOrd for $t {
            fn partial_cmp(&self, other: &$t) -> Option<Ordering> {
                self.to_f32().partial_cmp(&other.to_f32())
            }
        }

        impl fmt::Debug for $t {
            fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
                fmt::Debug::fmt(&self.to_f32(), f)
            }
        }

        impl fmt::Display for $t {
            fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
                fmt::Display::fmt(&self.to_f32(), f)
            }
        }
    )*};
}

float_traits!(f16, bf16);

#[cfg(test)]
mod tests {
    use super::*;

    fn all<T>(from_bits: fn(u16) -> T) -> impl Iterator<Item = T> {
        (0..=u16::MAX).map(from_bits)
    }

    #[test]
    fn f16_every_value_round_trips() {
        for h in all(f16::from_bits).filter(|h| !h.is_nan()) {
            assert_eq!(
                f16::from_f32(h.to_f32()).to_bits(),
                h.to_bits(),
                "{:#06x}",
                h.to_bits()
            );
        }
    }

    #[test]
    fn bf16_every_value_round_trips() {
        for b in all(bf16::from_bits).filter(|b| !b.is_nan()) {
            assert_eq!(bf16::from_f32(b.to_f32()).to_bits(), b.to_bits());
        }
    }

    /// Between two neighbours (same sign, both finite) the midpoint, exact in
    /// f32, rounds to the one with an even mantissa; just above or below it
    /// rounds to the nearer one.
    fn check_midpoints<T: Copy>(
        from_bits: fn(u16) -> T,
        to_f32: fn(T) -> f32,
        from_f32: fn(f32) -> T,
        bits: fn(T) -> u16,
        last_finite: u16,
    ) {
        for sign in [0u16, 0x8000] {
            for lo in 0..last_finite {
                let (a, b) = (from_bits(sign | lo), from_bits(sign | (lo + 1)));
                let (fa, fb) = (f64::from(to_f32(a)), f64::from(to_f32(b)));
                // In f64 so that the sum cannot overflow; the midpoint needs
                // one bit more than the type has, so it is exact in f32.
                let mid = ((fa + fb) / 2.0) as f32;
                assert!(
                    f64::from(mid) == (fa + fb) / 2.0,
                    "midpoint of {lo:#x} not exact"
                );
                let even = if lo % 2 == 0 {
                    sign | lo
                } else {
                    sign | (lo + 1)
                };
                assert_eq!(bits(from_f32(mid)), even, "tie at {lo:#x}");
                // Magnitudes grow with the bit pattern, whatever the sign.
                let near_a = f32::from_bits(mid.to_bits() - 1);
                let near_b = f32::from_bits(mid.to_bits() + 1);
                assert_eq!(bits(from_f32(near_a)), sign | lo);
                assert_eq!(bits(from_f32(near_b)), sign | (lo + 1));
            }
        }
    }

    #[test]
    fn f16_rounds_to_nearest_even() {
        check_midpoints(
            f16::from_bits,
            f16::to_f32,
            f16::from_f32,
            f16::to_bits,
            0x7bff,
        );
    }

    #[test]
    fn bf16_rounds_to_nearest_even() {
        check_midpoints(
            bf16::from_bits,
            bf16::to_f32,
            bf16::from_f32,
            bf16::to_bits,
            0x7f7f,
        );
    }

    #[test]
    fn f16_edges() {
        assert_eq!(f16::from_f32(65504.0), f16::MAX);
        assert_eq!(f16::from_f32(65519.99), f16::MAX);
        assert_eq!(f16::from_f32(65520.0), f16::INFINITY);
        assert_eq!(f16::from_f32(-1e9).to_f32(), f32::NEG_INFINITY);
        assert_eq!(f16::from_f32(2f32.powi(-24)).to_bits(), 1); // smallest subnormal
        assert_eq!(f16::from_f32(2f32.powi(-25)).to_bits(), 0); // tie to even: zero
        assert_eq!(f16::from_f32(1.5 * 2f32.powi(-25)).to_bits(), 1);
        assert_eq!(f16::from_f32(2f32.powi(-14)).to_bits(), 0x0400); // smallest normal
        assert_eq!(f16::from_f32(-0.0).to_bits(), 0x8000);
        assert_eq!(f16::from_f32(f32::from_bits(1)).to_bits(), 0); // f32 subnormal
        assert!(f16::from_f32(f32::NAN).is_nan());
        assert!(f16::from_f32(f32::from_bits(0x7f80_0001)).is_nan()); // low payload only
        assert_eq!(f16::from_f32(0.0), f16::from_f32(-0.0));
    }

    #[test]
    fn bf16_edges() {
        assert_eq!(bf16::from_f32(f32::MAX), bf16::INFINITY);
        assert_eq!(bf16::from_f32(f32::INFINITY), bf16::INFINITY);
        assert!(bf16::from_f32(f32::from_bits(0x7f80_0001)).is_nan());
        assert_eq!(bf16::from_f32(f32::from_bits(1)).to_bits(), 0);
        assert_eq!(
            format!("{:?} {}", bf16::ONE, f16::from_f32(-2.5)),
            "1.0 -2.5"
        );
    }
}
