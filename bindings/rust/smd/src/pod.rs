//! Sending your own plain-old-data types ([`Pod`]) as bytes.
//!
//! smd moves and reduces only its [`Datatype`](crate::Datatype)s. A `#[repr(C)]` struct
//! of them (a header, a record, a small fixed array) can still be sent,
//! received, broadcast and gathered whole, as bytes, once it promises to be
//! plain old data by implementing the `unsafe` trait [`Pod`]. Reductions
//! need element types, so there are none for `Pod` types.

use std::mem::size_of;

use crate::comm::Communicator;
use crate::error::{Error, Result};
use crate::half::{bf16, f16};

/// A type whose values are nothing but their bytes, so that smd may send a
/// slice of them as `len × size_of::<T>()` bytes and write received bytes
/// into one.
///
/// # Safety
///
/// Implement it only for a type that
/// - is `#[repr(C)]` (or `#[repr(transparent)]`) and whose fields are all
///   `Pod` (every [`Datatype`](crate::Datatype) is, `i16`, `u16`, and arrays
///   of `Pod`);
/// - has **no padding bytes** (order the fields so that none is needed, or
///   add explicit fields for it): padding is uninitialised memory, which
///   may not be read as bytes;
/// - is valid for **every bit pattern** (no `bool`, `char`, enums,
///   references, pointers or `NonZero*`): a receive writes whatever bytes
///   the sender sent;
/// - is the same type with the same layout on every rank (the same
///   program built for the same target).
///
/// ```
/// /// A training record: 16 bytes, no padding, any bits are valid.
/// #[repr(C)]
/// #[derive(Clone, Copy, Debug, PartialEq)]
/// struct Sample {
///     step: u64,
///     loss: f32,
///     rank: u32,
/// }
/// // SAFETY: repr(C), fields are Pod, 8 + 4 + 4 bytes leave no padding,
/// // and every bit pattern is a valid Sample.
/// unsafe impl smd::Pod for Sample {}
///
/// let bytes = smd::pod_bytes(&[Sample { step: 1, loss: 0.5, rank: 0 }]);
/// assert_eq!(bytes.len(), 16);
/// ```
pub unsafe trait Pod: Copy + Send + Sync + 'static {}

macro_rules! pod {
    ($($t:ty),*) => {$(
        // SAFETY: primitive integers and floats (f16/bf16: a u16 inside)
        // are valid for every bit pattern and have no padding.
        unsafe impl Pod for $t {}
    )*};
}
pod!(i8, u8, i32, u32, i64, u64, f16, bf16, f32, f64, i16, u16);

// SAFETY: an array of Pod has no padding between its elements.
unsafe impl<T: Pod, const N: usize> Pod for [T; N] {}

/// The bytes of a slice of a [`Pod`] type.
pub fn pod_bytes<T: Pod>(values: &[T]) -> &[u8] {
    // SAFETY: T is Pod: every byte is initialised (no padding), and the
    // byte slice borrows the values for its whole life.
    unsafe { std::slice::from_raw_parts(values.as_ptr().cast(), std::mem::size_of_val(values)) }
}

/// The bytes of a mutable slice of a [`Pod`] type; whatever is written
/// to them leaves valid values (every bit pattern is one).
pub fn pod_bytes_mut<T: Pod>(values: &mut [T]) -> &mut [u8] {
    // SAFETY: as in pod_bytes, and T is valid for every bit pattern.
    unsafe {
        std::slice::from_raw_parts_mut(values.as_mut_ptr().cast(), std::mem::size_of_val(values))
    }
}

impl Communicator {
    /// Sends `values` (any [`Pod`] type) to rank `peer` with `tag`, as bytes.
    ///
    /// ```no_run
    /// #[repr(C)]
    /// #[derive(Clone, Copy)]
    /// struct Header { step: u64, len: u32, flags: u32 }
    /// unsafe impl smd::Pod for Header {}
    /// # fn main() -> smd::Result<()> {
    /// let world = smd::Communicator::init()?;
    /// if world.rank() == 0 {
    ///     world.send_pod(&[Header { step: 7, len: 3, flags: 0 }], 1, 0)?;
    /// } else if world.rank() == 1 {
    ///     let mut h = [Header { step: 0, len: 0, flags: 0 }];
    ///     assert_eq!(world.recv_pod(&mut h, 0, 0)?, 1);
    ///     assert_eq!(h[0].step, 7);
    /// }
    /// # Ok(())
    /// # }
    /// ```
    pub fn send_pod<T: Pod>(&self, values: &[T], peer: usize, tag: u32) -> Result<()> {
        self.send(pod_bytes(values), peer, tag)
    }

    /// Receives into `values` from rank `peer` with `tag` and returns how
    /// many values arrived. A message that is not a whole number of values
    /// fails with [`ErrorCode::InvalidArgument`](crate::ErrorCode); one
    /// longer than `values` with [`ErrorCode::Truncated`](crate::ErrorCode).
    pub fn recv_pod<T: Pod>(&self, values: &mut [T], peer: usize, tag: u32) -> Result<usize> {
        let n = self.recv(pod_bytes_mut(values), peer, tag)?;
        let size = size_of::<T>().max(1);
        if n % size != 0 {
            return Err(Error::invalid(format!(
                "recv_pod: the message from rank {peer} (tag {tag}) has {n} bytes, \
                 not a whole number of {size}-byte values"
            )));
        }
        Ok(n / size)
    }

    /// Broadcasts `values` from `root` to every rank's `values` (the same
    /// length everywhere), as bytes.
    pub fn broadcast_pod<T: Pod>(&self, values: &mut [T], root: usize) -> Result<()> {
        self.broadcast(pod_bytes_mut(values), root)
    }

    /// Gathers every rank's `send` into `recv` in rank order on every rank,
    /// as bytes: `recv.len()` must be `size() × send.len()`.
    pub fn all_gather_pod<T: Pod>(&self, send: &[T], recv: &mut [T]) -> Result<()> {
        self.all_gather(pod_bytes(send), pod_bytes_mut(recv))
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn slices_view_as_their_bytes() {
        let values = [1u32, 0x0102_0304];
        assert_eq!(pod_bytes(&values).len(), 8);
        assert_eq!(pod_bytes(&values)[4..], 0x0102_0304u32.to_ne_bytes());
        let mut pairs = [[0u16; 2]; 2];
        let bytes: Vec<u8> = [1u16, 2, 3, 4]
            .iter()
            .flat_map(|v| v.to_ne_bytes())
            .collect();
        pod_bytes_mut(&mut pairs).copy_from_slice(&bytes);
        assert_eq!(pairs, [[1, 2], [3, 4]]);
    }
}
