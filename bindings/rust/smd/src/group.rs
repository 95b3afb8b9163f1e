//! Group calls: [`Group`], a guard around `smd_group_start`/`smd_group_end`.
//!
//! Operations issued through a `Group` are queued by the library and run
//! together when the group ends (its [`end`](Group::end) or its drop):
//! allreduces of one communicator with the same datatype and op are fused
//! into balanced buffers (`SMD_FUSION_BYTES`), the rest run back to back,
//! and point-to-point pairs inside one group cannot block each other.
//!
//! # Why the buffers are borrowed for `'a`
//!
//! A queued operation reads and writes its buffers when the group ends, not
//! when it is issued. Every method borrows its buffers (and communicator)
//! for `'a`, a lifetime the guard carries and that must last until the
//! guard is gone, so nothing else can touch or free them before the group
//! has run. While a group is open on a thread, the crate's other blocking
//! and nonblocking calls on that thread fail with
//! [`ErrorCode::InvalidUsage`]: they would be queued in the group with
//! buffers borrowed only for the call. For the same reason a `Group` is
//! neither `Send` nor nestable (C and Python groups nest), and a second
//! `Group` on a thread whose first was leaked with `std::mem::forget` is
//! refused rather than silently queued into a group that never ends.
//!
//! ```no_run
//! # fn main() -> smd::Result<()> {
//! let world = smd::Communicator::init()?;
//! let mut grads: Vec<Vec<f32>> = vec![vec![1.0; 1000]; 100];
//! let mut group = smd::Group::start()?;
//! for g in grads.iter_mut() {
//!     group.all_reduce(&world, g, smd::Op::Sum)?;
//! }
//! group.end()?; // runs the 100 allreduces as one fused operation
//! assert_eq!(grads[99][0], world.size() as f32);
//! # Ok(())
//! # }
//! ```
//!
//! The buffers stay borrowed until the group has ended:
//!
//! ```compile_fail,E0502
//! # fn main() -> smd::Result<()> {
//! # let world = smd::Communicator::init()?;
//! let mut grads = vec![1.0f32; 16];
//! let mut group = smd::Group::start()?;
//! group.all_reduce(&world, &mut grads, smd::Op::Sum)?;
//! println!("{}", grads[0]); // error[E0502]: still borrowed by the queued allreduce
//! group.end()
//! # }
//! ```

use std::cell::Cell;
use std::fmt;
use std::marker::PhantomData;

use smd_sys as sys;

use crate::call::{self, Call};
use crate::comm::Communicator;
use crate::datatype::{Datatype, Op};
use crate::error::{Error, ErrorCode, Result, check};

thread_local! {
    static OPEN: Cell<bool> = Cell::new(false);
}

/// Fails while a [`Group`] is open on this thread (see the module docs).
pub(crate) fn check_no_open_group(what: &str) -> Result<()> {
    if OPEN.with(Cell::get) {
        return Err(Error::new(
            ErrorCode::InvalidUsage,
            format!("{what}: a smd::Group is open on this thread: issue the call through it"),
        ));
    }
    Ok(())
}

/// Writes each method that queues a call from its arguments after the
/// communicator (`$comm`) and the [`Call`] they make; the communicator and
/// the buffers are borrowed for the guard's `'a`.
macro_rules! queue_calls {
    ($(
        $(#[$attr:meta])*
        fn $name:ident($comm:ident $(, $arg:ident: $ty:ty)*) => $call:expr;
    )*) => {$(
        $(#[$attr])*
        pub fn $name<T: Datatype>(
            &mut self,
            $comm: &'a Communicator,
            $($arg: $ty),*
        ) -> Result<()> {
            self.queue($comm, $call)
        }
    )*};
}

/// An open group on this thread; see the [module docs](self).
pub struct Group<'a> {
    ended: bool,
    /// Buffers and communicators lent to queued operations live for `'a`
    /// (invariant); the raw pointer keeps the guard on its thread.
    _borrows: PhantomData<(fn(&'a ()) -> &'a (), *const ())>,
}

impl<'a> Group<'a> {
    /// Opens a group on this thread (`smd_group_start`). Fails with
    /// [`ErrorCode::InvalidUsage`] if one is open already.
    pub fn start() -> Result<Group<'a>> {
        check_no_open_group("Group::start")?;
        // SAFETY: no arguments.
        check(unsafe { sys::smd_group_start() })?;
        OPEN.with(|o| o.set(true));
        Ok(Group {
            ended: false,
            _borrows: PhantomData,
        })
    }

    fn queue(&mut self, comm: &'a Communicator, call: Call) -> Result<()> {
        // SAFETY: `comm` and the call's buffers are borrowed for 'a, which
        // lasts until this guard is gone, and the guard ends the group
        // (running the call) at the latest when it drops.
        check(unsafe { call.issue(comm.as_raw(), None) })
    }

    queue_calls! {
        /// Queues an in-place allreduce of `buf`.
        fn all_reduce(comm, buf: &'a mut [T], op: Op) => call::all_reduce_in_place(buf, op);

        /// Queues an allreduce of `send` into `recv` (same length).
        fn all_reduce_into(comm, send: &'a [T], recv: &'a mut [T], op: Op)
            => call::all_reduce(send, recv, op)?;

        /// Queues an allgather (`recv.len()` = `size() × send.len()`).
        fn all_gather(comm, send: &'a [T], recv: &'a mut [T])
            => call::all_gather(comm, send, recv)?;

        /// Queues a reduce-scatter (`send.len()` = `size() × recv.len()`).
        fn reduce_scatter(comm, send: &'a [T], recv: &'a mut [T], op: Op)
            => call::reduce_scatter(comm, send, recv, op)?;

        /// Queues a broadcast of `root`'s `buf`.
        fn broadcast(comm, buf: &'a mut [T], root: usize) => call::broadcast(comm, buf, root)?;

        /// Queues a send of `buf` to `peer`.
        fn send(comm, buf: &'a [T], peer: usize, tag: u32) => call::send(comm, buf, peer, tag)?;

        /// Queues a receive into `buf` from `peer`.
        fn recv(comm, buf: &'a mut [T], peer: usize, tag: u32) => call::recv(comm, buf, peer, tag)?;
    }

    /// Ends the group, running every queued operation, and returns their
    /// outcome: the error of the first that was refused or failed, its
    /// message naming the call ("call 3 (smd_allreduce) ...").
    pub fn end(mut self) -> Result<()> {
        self.finish()
    }

    fn finish(&mut self) -> Result<()> {
        if self.ended {
            return Ok(());
        }
        self.ended = true;
        OPEN.with(|o| o.set(false));
        // SAFETY: no arguments; this thread's group, opened by this guard.
        check(unsafe { sys::smd_group_end() })
    }
}

impl Drop for Group<'_> {
    /// Ends the group (running its operations); an error is dropped with
    /// it: call [`Group::end`] to see it.
    fn drop(&mut self) {
        let _ = self.finish();
    }
}

impl fmt::Debug for Group<'_> {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.debug_struct("Group").field("ended", &self.ended).finish()
    }
}
