//! Buffers in memory from `smd_mem_alloc`, which the ranks of a node can
//! map: a collective whose input lies in one (all-gather, a broadcast
//! root's, all-reduce, reduce, reduce-scatter) has it read by peers where it
//! lies, with no copy through staging buffers.

use std::ops::{Deref, DerefMut};
use std::os::raw::c_void;

use smd_sys as sys;

use crate::comm::Communicator;
use crate::datatype::Datatype;
use crate::error::{Error, Result, check};

/// `len` elements of `T` in shared memory, zero-filled; derefs to a slice
/// and is freed when dropped. Everything that takes a slice takes it.
pub struct SharedSlice<T: Datatype> {
    ptr: *mut T,
    len: usize,
}

// SAFETY: the block is owned memory like a Vec's; smd_mem_free may be
// called from any thread.
unsafe impl<T: Datatype> Send for SharedSlice<T> {}
// SAFETY: shared access only reads through &[T].
unsafe impl<T: Datatype> Sync for SharedSlice<T> {}

impl Communicator {
    /// A zero-filled slice of `len` elements in memory from `smd_mem_alloc`,
    /// usable with every communicator of this one's world. Local: no
    /// communication.
    ///
    /// ```no_run
    /// # fn main() -> smd::Result<()> {
    /// let world = smd::Communicator::init()?;
    /// let mut mine = world.shared_slice::<f32>(1 << 20)?;
    /// mine.fill(world.rank() as f32);
    /// let mut all = vec![0f32; (1 << 20) * world.size()];
    /// world.all_gather(&mine, &mut all)?; // peers read `mine` where it lies
    /// # Ok(())
    /// # }
    /// ```
    pub fn shared_slice<T: Datatype>(&self, len: usize) -> Result<SharedSlice<T>> {
        let bytes = len
            .checked_mul(std::mem::size_of::<T>())
            .ok_or_else(|| Error::invalid(format!("shared_slice: {len} elements overflow")))?;
        let mut ptr: *mut c_void = std::ptr::null_mut();
        // SAFETY: live communicator; `ptr` is a valid out pointer. At least
        // one byte, so that an empty slice still owns a block to free.
        check(unsafe { sys::smd_mem_alloc(self.as_raw(), bytes.max(1), &mut ptr) })?;
        Ok(SharedSlice { ptr: ptr.cast(), len })
    }
}

impl<T: Datatype> Deref for SharedSlice<T> {
    type Target = [T];
    fn deref(&self) -> &[T] {
        // SAFETY: `len` elements, zero-filled at allocation (a valid value of
        // every Datatype), suitably aligned (page-aligned block), owned.
        unsafe { std::slice::from_raw_parts(self.ptr, self.len) }
    }
}

impl<T: Datatype> DerefMut for SharedSlice<T> {
    fn deref_mut(&mut self) -> &mut [T] {
        // SAFETY: as in deref, and `&mut self` makes the access unique.
        unsafe { std::slice::from_raw_parts_mut(self.ptr, self.len) }
    }
}

impl<T: Datatype> Drop for SharedSlice<T> {
    fn drop(&mut self) {
        // SAFETY: the block came from smd_mem_alloc and is freed once.
        unsafe { sys::smd_mem_free(self.ptr.cast()) };
    }
}
