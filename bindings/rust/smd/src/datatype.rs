//! Element types ([`Datatype`]) and reduction operations ([`Op`]).

use smd_sys as sys;

use crate::half::{bf16, f16};

mod sealed {
    pub trait Sealed {}
}

/// An element type that smd can move and reduce: `i8`, `u8`, `i32`, `u32`,
/// `i64`, `u64`, [`f16`](struct@f16), [`bf16`], `f32` and `f64`.
///
/// Sealed: the library reads and writes `len × size` bytes behind a slice's
/// pointer, so only types whose size matches their `smd_datatype_t` and for
/// which every bit pattern is a valid value may implement it.
///
/// ```
/// use smd::Datatype;
/// fn name<T: Datatype>() -> smd::sys::smd_datatype_t { T::DATATYPE }
/// assert_eq!(name::<f32>(), smd::sys::smd_datatype_t::SMD_FLOAT32);
/// assert_eq!(name::<smd::bf16>(), smd::sys::smd_datatype_t::SMD_BFLOAT16);
/// ```
pub trait Datatype: sealed::Sealed + Copy + Send + Sync + 'static {
    /// The library's code for this type.
    ///
    /// ```
    /// use smd::Datatype;
    /// assert_eq!(<u8 as Datatype>::DATATYPE, smd::sys::smd_datatype_t::SMD_UINT8);
    /// ```
    const DATATYPE: sys::smd_datatype_t;
}

macro_rules! datatypes {
    ($($t:ty => $code:ident),* $(,)?) => {$(
        impl sealed::Sealed for $t {}
        impl Datatype for $t {
            const DATATYPE: sys::smd_datatype_t = sys::smd_datatype_t::$code;
        }
    )*};
}

datatypes! {
    i8 => SMD_INT8,
    u8 => SMD_UINT8,
    i32 => SMD_INT32,
    u32 => SMD_UINT32,
    i64 => SMD_INT64,
    u64 => SMD_UINT64,
    f16 => SMD_FLOAT16,
    bf16 => SMD_BFLOAT16,
    f32 => SMD_FLOAT32,
    f64 => SMD_FLOAT64,
}

/// A reduction operation, applied element-wise over the ranks.
///
/// `f16` and `bf16` are reduced in `f32` and rounded once per element.
/// [`Op::Avg`] is the sum divided by the number of ranks (truncating toward
/// zero for integers); integer `Sum` and `Prod` wrap around; `Min` and `Max`
/// with a NaN among the inputs give one of the inputs, unspecified which.
///
/// ```no_run
/// # fn main() -> smd::Result<()> {
/// let world = smd::Communicator::init()?;
/// let mut loss = [0.25f64];
/// world.all_reduce(&mut loss, smd::Op::Avg)?;
/// # Ok(())
/// # }
/// ```
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub enum Op {
    /// Sum.
    Sum,
    /// Product.
    Prod,
    /// Minimum.
    Min,
    /// Maximum.
    Max,
    /// Sum divided by the number of ranks.
    Avg,
}

impl Op {
    /// The library's code for this operation.
    ///
    /// ```
    /// assert_eq!(smd::Op::Max.raw(), smd::sys::smd_op_t::SMD_MAX);
    /// ```
    pub fn raw(self) -> sys::smd_op_t {
        match self {
            Op::Sum => sys::smd_op_t::SMD_SUM,
            Op::Prod => sys::smd_op_t::SMD_PROD,
            Op::Min => sys::smd_op_t::SMD_MIN,
            Op::Max => sys::smd_op_t::SMD_MAX,
            Op::Avg => sys::smd_op_t::SMD_AVG,
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::error::check;

    fn library_size<T: Datatype>() -> usize {
        let mut size = 0usize;
        // SAFETY: `size` is a valid out-pointer.
        check(unsafe { sys::smd_datatype_size(T::DATATYPE, &mut size) }).unwrap();
        size
    }

    #[test]
    fn sizes_agree_with_the_library() {
        fn same<T: Datatype>() {
            assert_eq!(library_size::<T>(), std::mem::size_of::<T>());
        }
        same::<i8>();
        same::<u8>();
        same::<i32>();
        same::<u32>();
        same::<i64>();
        same::<u64>();
        same::<f16>();
        same::<bf16>();
        same::<f32>();
        same::<f64>();
    }
}
