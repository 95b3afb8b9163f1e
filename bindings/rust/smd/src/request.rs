//! Nonblocking operations: [`scope`], [`Scope`] and [`Request`].
//!
//! # Why a scope
//!
//! A started operation reads and writes its buffers until it finishes, so
//! Rust must not touch (or free) them before then. A `Request` that merely
//! borrowed its buffers would not be enough: `std::mem::forget(request)`
//! ends the borrow without waiting, and the buffers could be freed while
//! the library still writes into them. So, as with `std::thread::scope`,
//! operations are started inside [`scope`], which does not return before
//! every operation started in it has finished — including forgotten ones.
//! Buffers are borrowed for the whole scope; read them after it.

use std::fmt;
use std::marker::PhantomData;
use std::os::raw::c_int;
use std::ptr::{self, NonNull};
use std::sync::{Mutex, MutexGuard};
use std::time::Duration;

use smd_sys as sys;

use crate::call::{self, Call};
use crate::comm::Communicator;
use crate::datatype::{Datatype, Op};
use crate::error::{Error, ErrorCode, Result, check};

/// A request handle; ownership is kept by `Request` or `Scope`.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
struct Handle(NonNull<sys::smd_request_t>);

// SAFETY: smd.h: every function may be called from any thread, so a
// request may be tested, waited for and freed on another thread than the
// one that started it.
unsafe impl Send for Handle {}

impl Handle {
    fn test(self) -> Result<bool> {
        let mut done: c_int = 0;
        // SAFETY: a live request (the library would also detect a stale one).
        check(unsafe { sys::smd_request_test(self.0.as_ptr(), &mut done) })?;
        Ok(done != 0)
    }

    fn wait(self) -> Result<()> {
        // SAFETY: a live request.
        check(unsafe { sys::smd_request_wait(self.0.as_ptr()) })
    }

    fn wait_timeout(self, timeout: Duration) -> Result<bool> {
        let ms = i64::try_from(timeout.as_millis()).unwrap_or(i64::MAX);
        // SAFETY: a live request.
        let rc = unsafe { sys::smd_request_wait_timeout(self.0.as_ptr(), ms) };
        if rc == sys::smd_result_t::SMD_IN_PROGRESS {
            return Ok(false);
        }
        check(rc).map(|()| true)
    }

    fn count(self) -> Result<usize> {
        let mut count = 0usize;
        // SAFETY: a live request, valid out-pointer.
        check(unsafe { sys::smd_request_get_count(self.0.as_ptr(), &mut count) })?;
        Ok(count)
    }

    /// Waits for the operation and releases the request. Its result has
    /// been or cannot be reported by then.
    fn free(self) {
        // SAFETY: a live request, freed exactly once (by whoever removed it
        // from the scope's list).
        unsafe { sys::smd_request_free(self.0.as_ptr()) };
    }
}

/// Runs `f` with a [`Scope`] in which nonblocking operations can be
/// started, and returns once `f` has returned and every operation started in
/// the scope has finished.
///
/// Buffers (and communicators) given to an operation are borrowed until the
/// scope ends: the borrow checker rejects any use of them inside the scope
/// after the operation was started, and they are ready to read once `scope`
/// returns. Errors of operations that were never waited for are not
/// reported: wait for a [`Request`] to see its result.
///
/// ```no_run
/// use smd::{Communicator, Op};
/// # fn compute_next_layer() {}
/// # fn main() -> smd::Result<()> {
/// let world = Communicator::init()?;
/// let mut grads = vec![1.0f32; 1 << 20];
/// let mut loss = [0.5f64];
/// smd::scope(|s| {
///     let grads_done = world.iall_reduce(s, &mut grads, Op::Sum)?;
///     let loss_done = world.iall_reduce(s, &mut loss, Op::Avg)?;
///     compute_next_layer(); // overlaps with the reductions
///     grads_done.wait()?;
///     loss_done.wait()?;
///     Ok::<_, smd::Error>(())
/// })?;
/// println!("{} {}", grads[0], loss[0]); // the buffers are free again here
/// # Ok(())
/// # }
/// ```
///
/// The buffers cannot be touched while the scope holds them:
///
/// ```compile_fail,E0499
/// # fn main() -> smd::Result<()> {
/// # let world = smd::Communicator::init()?;
/// let mut grads = vec![1.0f32; 16];
/// smd::scope(|s| {
///     let done = world.iall_reduce(s, &mut grads, smd::Op::Sum)?;
///     grads[0] = 2.0; // error[E0499]: `grads` is still borrowed by the operation
///     done.wait()
/// })?;
/// # Ok(())
/// # }
/// ```
pub fn scope<'a, R>(f: impl FnOnce(&Scope<'a>) -> R) -> R {
    let scope = Scope {
        live: Live::default(),
        _borrows: PhantomData,
    };
    f(&scope)
    // `scope` drops here, waiting for whatever is still running.
}

/// Where nonblocking operations run; see [`scope`]. Operations started in it
/// borrow their buffers and communicator for `'a`, which outlasts the scope.
///
/// ```no_run
/// # fn main() -> smd::Result<()> {
/// let world = smd::Communicator::init()?;
/// smd::scope(|s: &smd::Scope<'_>| world.ibarrier(s)?.wait())?;
/// # Ok(())
/// # }
/// ```
pub struct Scope<'a> {
    live: Live,
    /// Invariant in `'a`: a `&Scope<'long>` must not pass for a
    /// `&Scope<'short>`, or buffers living shorter than the scope could be
    /// lent to it. (A function pointer type keeps `Scope` `Send` and `Sync`.)
    _borrows: PhantomData<fn(&'a ()) -> &'a ()>,
}

impl<'a> Scope<'a> {
    fn start(&self, comm: &'a Communicator, call: Call) -> Result<Request<'_>> {
        crate::group::check_no_open_group("smd")?;
        let mut raw = ptr::null_mut();
        // SAFETY: `comm` and the call's buffers are borrowed for 'a, which
        // outlives this scope; the scope frees (waits for) the request
        // before it ends, even if the `Request` is forgotten.
        check(unsafe { call.issue(comm.as_raw(), Some(&mut raw)) })?;
        let handle = NonNull::new(raw)
            .map(Handle)
            .ok_or_else(|| Error::new(ErrorCode::Internal, "libsmd returned a NULL request"))?;
        self.live.lock().push(handle);
        Ok(Request {
            handle,
            live: &self.live,
        })
    }
}

impl Drop for Scope<'_> {
    fn drop(&mut self) {
        // Only forgotten requests are left: a live `Request` borrows the
        // scope, so it cannot outlast it.
        let forgotten = std::mem::take(&mut *self.live.lock());
        for handle in forgotten {
            handle.free();
        }
    }
}

impl fmt::Debug for Scope<'_> {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.debug_struct("Scope")
            .field("pending", &self.live.lock().len())
            .finish()
    }
}

/// The requests of a scope that no `Request` has freed yet.
#[derive(Default)]
struct Live(Mutex<Vec<Handle>>);

impl Live {
    fn lock(&self) -> MutexGuard<'_, Vec<Handle>> {
        // Nothing panics while holding the lock; a poisoned one is still valid.
        self.0.lock().unwrap_or_else(|e| e.into_inner())
    }

    /// Takes `handle` off the list; true if it was there.
    fn remove(&self, handle: Handle) -> bool {
        let mut live = self.lock();
        match live.iter().position(|&h| h == handle) {
            Some(i) => {
                live.swap_remove(i);
                true
            }
            None => false,
        }
    }
}

/// A nonblocking operation in flight (`smd_request_t`), started in a
/// [`Scope`] by one of the `i*` methods of [`Communicator`].
///
/// [`wait`](Request::wait) for it to get its result; dropping it unfinished
/// waits for the operation (its buffers are in use until then) and drops
/// the result. `Request` is `Send`: it may be waited for on another thread.
///
/// ```no_run
/// # fn main() -> smd::Result<()> {
/// let world = smd::Communicator::init()?;
/// let mut buf = [0u8; 64];
/// let n = smd::scope(|s| {
///     let mut recv = world.irecv(s, &mut buf, 0, 1)?;
///     while !recv.test()? {
///         std::thread::yield_now(); // or do useful work
///     }
///     recv.wait()
/// })?;
/// # Ok(())
/// # }
/// ```
#[must_use = "dropping a request waits for it and discards its result"]
pub struct Request<'s> {
    handle: Handle,
    live: &'s Live,
}

impl Request<'_> {
    /// Whether the operation has finished (driving its progress); an
    /// operation that finished with an error returns that error.
    ///
    /// ```no_run
    /// # fn main() -> smd::Result<()> {
    /// # let world = smd::Communicator::init()?;
    /// smd::scope(|s| {
    ///     let mut barrier = world.ibarrier(s)?;
    ///     let finished = barrier.test()?;
    ///     barrier.wait()
    /// })?;
    /// # Ok(())
    /// # }
    /// ```
    pub fn test(&mut self) -> Result<bool> {
        self.handle.test()
    }

    /// Waits at most `timeout` (whole milliseconds; zero only tests):
    /// `Ok(true)` if the operation finished, `Ok(false)` if it is still
    /// running (wait again, or drop it to wait for it).
    ///
    /// ```no_run
    /// # use std::time::Duration;
    /// # fn main() -> smd::Result<()> {
    /// # let world = smd::Communicator::init()?;
    /// smd::scope(|s| {
    ///     let mut barrier = world.ibarrier(s)?;
    ///     while !barrier.wait_timeout(Duration::from_secs(1))? {
    ///         eprintln!("still waiting for the other ranks");
    ///     }
    ///     Ok(())
    /// })
    /// # }
    /// ```
    pub fn wait_timeout(&mut self, timeout: Duration) -> Result<bool> {
        self.handle.wait_timeout(timeout)
    }

    /// Waits for the operation and returns how many elements it moved: for
    /// a receive, how many arrived; otherwise its element count (for
    /// all-gather and all-to-all, the whole output).
    ///
    /// ```no_run
    /// # fn main() -> smd::Result<()> {
    /// # let world = smd::Communicator::init()?;
    /// let mut buf = [0.0f32; 8];
    /// smd::scope(|s| world.iall_reduce(s, &mut buf, smd::Op::Sum)?.wait())?;
    /// # Ok(())
    /// # }
    /// ```
    pub fn wait(self) -> Result<usize> {
        self.handle.wait()?;
        self.handle.count()
        // Dropping `self` frees the finished request.
    }
}

impl Drop for Request<'_> {
    fn drop(&mut self) {
        if self.live.remove(self.handle) {
            self.handle.free();
        }
    }
}

impl fmt::Debug for Request<'_> {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.debug_struct("Request")
            .field("handle", &self.handle.0)
            .finish()
    }
}

/// Writes each nonblocking method from its arguments after the scope and
/// the [`Call`] they make: the method borrows the communicator (`$comm`,
/// written `&self`) and the buffers for the scope's `'a` and starts the call
/// in the scope.
macro_rules! start_in_scope {
    ($(
        $(#[$attr:meta])*
        fn $name:ident$(<$T:ident>)?(&$comm:ident $(, $arg:ident: $ty:ty)*) => $call:expr;
    )*) => {$(
        $(#[$attr])*
        pub fn $name<'a, 's $(, $T: Datatype)?>(
            &'a $comm,
            scope: &'s Scope<'a>,
            $($arg: $ty),*
        ) -> Result<Request<'s>> {
            scope.start($comm, $call)
        }
    )*};
}

/// The nonblocking forms of the collectives and of send and receive. Each
/// starts the operation in `scope` and returns its [`Request`] at once; the
/// arguments are those of the blocking method of the same name (without the
/// `i`), checked the same way. Operations on one communicator run in the
/// order they were issued.
impl Communicator {
    start_in_scope! {
        /// Starts [`all_reduce`](Communicator::all_reduce).
        ///
        /// ```no_run
        /// # fn main() -> smd::Result<()> {
        /// # let world = smd::Communicator::init()?;
        /// let mut grads = vec![1.0f32; 1024];
        /// smd::scope(|s| world.iall_reduce(s, &mut grads, smd::Op::Sum)?.wait())?;
        /// # Ok(())
        /// # }
        /// ```
        fn iall_reduce<T>(&self, buf: &'a mut [T], op: Op) => call::all_reduce_in_place(buf, op);

        /// Starts [`all_reduce_into`](Communicator::all_reduce_into).
        ///
        /// ```no_run
        /// # fn main() -> smd::Result<()> {
        /// # let world = smd::Communicator::init()?;
        /// let (send, mut recv) = ([1u64; 4], [0u64; 4]);
        /// smd::scope(|s| world.iall_reduce_into(s, &send, &mut recv, smd::Op::Max)?.wait())?;
        /// # Ok(())
        /// # }
        /// ```
        fn iall_reduce_into<T>(&self, send: &'a [T], recv: &'a mut [T], op: Op)
            => call::all_reduce(send, recv, op)?;

        /// Starts [`all_gather`](Communicator::all_gather).
        ///
        /// ```no_run
        /// # fn main() -> smd::Result<()> {
        /// # let world = smd::Communicator::init()?;
        /// let mine = [world.rank() as i32];
        /// let mut all = vec![0i32; world.size()];
        /// smd::scope(|s| world.iall_gather(s, &mine, &mut all)?.wait())?;
        /// # Ok(())
        /// # }
        /// ```
        fn iall_gather<T>(&self, send: &'a [T], recv: &'a mut [T])
            => call::all_gather(self, send, recv)?;

        /// Starts [`all_gather_in_place`](Communicator::all_gather_in_place).
        ///
        /// ```no_run
        /// # fn main() -> smd::Result<()> {
        /// # let world = smd::Communicator::init()?;
        /// let mut params = vec![0.0f32; 8 * world.size()];
        /// smd::scope(|s| world.iall_gather_in_place(s, &mut params)?.wait())?;
        /// # Ok(())
        /// # }
        /// ```
        fn iall_gather_in_place<T>(&self, buf: &'a mut [T])
            => call::all_gather_in_place(self, buf)?;

        /// Starts [`reduce_scatter`](Communicator::reduce_scatter).
        ///
        /// ```no_run
        /// # fn main() -> smd::Result<()> {
        /// # let world = smd::Communicator::init()?;
        /// let grads = vec![1.0f32; 4 * world.size()];
        /// let mut shard = [0.0f32; 4];
        /// smd::scope(|s| world.ireduce_scatter(s, &grads, &mut shard, smd::Op::Sum)?.wait())?;
        /// # Ok(())
        /// # }
        /// ```
        fn ireduce_scatter<T>(&self, send: &'a [T], recv: &'a mut [T], op: Op)
            => call::reduce_scatter(self, send, recv, op)?;

        /// Starts [`reduce_scatter_in_place`](Communicator::reduce_scatter_in_place).
        ///
        /// ```no_run
        /// # fn main() -> smd::Result<()> {
        /// # let world = smd::Communicator::init()?;
        /// let mut grads = vec![1.0f32; 4 * world.size()];
        /// smd::scope(|s| world.ireduce_scatter_in_place(s, &mut grads, smd::Op::Sum)?.wait())?;
        /// # Ok(())
        /// # }
        /// ```
        fn ireduce_scatter_in_place<T>(&self, buf: &'a mut [T], op: Op)
            => call::reduce_scatter_in_place(self, buf, op)?;

        /// Starts [`broadcast`](Communicator::broadcast).
        ///
        /// ```no_run
        /// # fn main() -> smd::Result<()> {
        /// # let world = smd::Communicator::init()?;
        /// let mut params = [0.0f32; 16];
        /// smd::scope(|s| world.ibroadcast(s, &mut params, 0)?.wait())?;
        /// # Ok(())
        /// # }
        /// ```
        fn ibroadcast<T>(&self, buf: &'a mut [T], root: usize) => call::broadcast(self, buf, root)?;

        /// Starts [`reduce`](Communicator::reduce).
        ///
        /// ```no_run
        /// # fn main() -> smd::Result<()> {
        /// # let world = smd::Communicator::init()?;
        /// let mut total = [1u32];
        /// smd::scope(|s| world.ireduce(s, &mut total, smd::Op::Sum, 0)?.wait())?;
        /// # Ok(())
        /// # }
        /// ```
        fn ireduce<T>(&self, buf: &'a mut [T], op: Op, root: usize)
            => call::reduce_in_place(self, buf, op, root)?;

        /// Starts [`reduce_into`](Communicator::reduce_into).
        ///
        /// ```no_run
        /// # fn main() -> smd::Result<()> {
        /// # let world = smd::Communicator::init()?;
        /// let (mine, mut total) = ([1u32], [0u32]);
        /// smd::scope(|s| world.ireduce_into(s, &mine, &mut total, smd::Op::Sum, 0)?.wait())?;
        /// # Ok(())
        /// # }
        /// ```
        fn ireduce_into<T>(&self, send: &'a [T], recv: &'a mut [T], op: Op, root: usize)
            => call::reduce(self, send, recv, op, root)?;

        /// Starts [`all_to_all`](Communicator::all_to_all).
        ///
        /// ```no_run
        /// # fn main() -> smd::Result<()> {
        /// # let world = smd::Communicator::init()?;
        /// let send = vec![7u8; world.size()];
        /// let mut recv = vec![0u8; world.size()];
        /// smd::scope(|s| world.iall_to_all(s, &send, &mut recv)?.wait())?;
        /// # Ok(())
        /// # }
        /// ```
        fn iall_to_all<T>(&self, send: &'a [T], recv: &'a mut [T])
            => call::all_to_all(self, send, recv)?;

        /// Starts [`barrier`](Communicator::barrier).
        ///
        /// ```no_run
        /// # fn main() -> smd::Result<()> {
        /// # let world = smd::Communicator::init()?;
        /// smd::scope(|s| world.ibarrier(s)?.wait())?;
        /// # Ok(())
        /// # }
        /// ```
        fn ibarrier(&self) => call::barrier();

        /// Starts [`send`](Communicator::send).
        ///
        /// ```no_run
        /// # fn main() -> smd::Result<()> {
        /// # let world = smd::Communicator::init()?;
        /// let data = [1i64, 2, 3];
        /// smd::scope(|s| world.isend(s, &data, 1, 0)?.wait())?;
        /// # Ok(())
        /// # }
        /// ```
        fn isend<T>(&self, buf: &'a [T], peer: usize, tag: u32)
            => call::send(self, buf, peer, tag)?;

        /// Starts [`recv`](Communicator::recv); [`Request::wait`] returns how
        /// many elements arrived.
        ///
        /// ```no_run
        /// # fn main() -> smd::Result<()> {
        /// # let world = smd::Communicator::init()?;
        /// let mut buf = [0i64; 16];
        /// let n = smd::scope(|s| world.irecv(s, &mut buf, 0, 0)?.wait())?;
        /// # Ok(())
        /// # }
        /// ```
        fn irecv<T>(&self, buf: &'a mut [T], peer: usize, tag: u32)
            => call::recv(self, buf, peer, tag)?;
    }
}
