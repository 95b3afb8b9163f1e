//! Blocking collectives and point-to-point messages on a [`Communicator`].
//!
//! Each method checks its slices (lengths, roots, peers) before calling the
//! library, so a wrong length is an [`ErrorCode::InvalidArgument`](crate::ErrorCode)
//! error on the calling rank only; every rank must still call the
//! collective with matching arguments, in the same order.

use crate::call::{self, Call};
use crate::comm::Communicator;
use crate::datatype::{Datatype, Op};
use crate::error::{Result, check};
use crate::request::scope;

impl Communicator {
    fn run(&self, call: Call) -> Result<()> {
        crate::group::check_no_open_group("smd")?;
        // SAFETY: the communicator is alive, and the call's buffers are
        // borrowed by the caller for the whole (blocking) call.
        check(unsafe { call.issue(self.as_raw(), None) })
    }

    /// Reduces `buf` over the ranks in place: afterwards every rank holds
    /// `op` applied element-wise to all ranks' `buf`.
    ///
    /// ```no_run
    /// use smd::{Communicator, Op};
    /// # fn main() -> smd::Result<()> {
    /// let world = Communicator::init()?;
    /// let mut grads = vec![1.0f32; 1 << 20];
    /// world.all_reduce(&mut grads, Op::Sum)?;
    /// assert_eq!(grads[0], world.size() as f32);
    /// # Ok(())
    /// # }
    /// ```
    pub fn all_reduce<T: Datatype>(&self, buf: &mut [T], op: Op) -> Result<()> {
        self.run(call::all_reduce_in_place(buf, op))
    }

    /// Reduces `send` over the ranks into `recv` (same length) on every rank.
    ///
    /// ```no_run
    /// # fn main() -> smd::Result<()> {
    /// let world = smd::Communicator::init()?;
    /// let local = [world.rank() as i64, 1];
    /// let mut total = [0i64; 2];
    /// world.all_reduce_into(&local, &mut total, smd::Op::Sum)?;
    /// assert_eq!(total[1], world.size() as i64);
    /// # Ok(())
    /// # }
    /// ```
    pub fn all_reduce_into<T: Datatype>(&self, send: &[T], recv: &mut [T], op: Op) -> Result<()> {
        self.run(call::all_reduce(send, recv, op)?)
    }

    /// Gathers every rank's `send` into `recv` in rank order on every rank:
    /// `recv.len()` must be `size() × send.len()`.
    ///
    /// ```no_run
    /// # fn main() -> smd::Result<()> {
    /// let world = smd::Communicator::init()?;
    /// let mut ranks = vec![0u32; world.size()];
    /// world.all_gather(&[world.rank() as u32], &mut ranks)?;
    /// assert_eq!(ranks, (0..world.size() as u32).collect::<Vec<_>>());
    /// # Ok(())
    /// # }
    /// ```
    pub fn all_gather<T: Datatype>(&self, send: &[T], recv: &mut [T]) -> Result<()> {
        self.run(call::all_gather(self, send, recv)?)
    }

    /// All-gather in place: `buf` holds `size()` equal blocks, this rank's
    /// block (block `rank()`) is its input, and afterwards every block holds
    /// its rank's input. Sharded parameters are gathered this way.
    ///
    /// ```no_run
    /// # fn main() -> smd::Result<()> {
    /// let world = smd::Communicator::init()?;
    /// let shard = 1024;
    /// let mut params = vec![0.0f32; shard * world.size()];
    /// params[world.rank() * shard..][..shard].fill(1.0); // my shard
    /// world.all_gather_in_place(&mut params)?;
    /// # Ok(())
    /// # }
    /// ```
    pub fn all_gather_in_place<T: Datatype>(&self, buf: &mut [T]) -> Result<()> {
        self.run(call::all_gather_in_place(self, buf)?)
    }

    /// Reduces `send` (`size()` equal blocks) over the ranks; rank `r`
    /// receives block `r` of the result in `recv` (`send.len() / size()`
    /// elements).
    ///
    /// ```no_run
    /// # fn main() -> smd::Result<()> {
    /// let world = smd::Communicator::init()?;
    /// let grads = vec![1.0f32; 4 * world.size()];
    /// let mut my_shard = [0.0f32; 4];
    /// world.reduce_scatter(&grads, &mut my_shard, smd::Op::Sum)?;
    /// # Ok(())
    /// # }
    /// ```
    pub fn reduce_scatter<T: Datatype>(&self, send: &[T], recv: &mut [T], op: Op) -> Result<()> {
        self.run(call::reduce_scatter(self, send, recv, op)?)
    }

    /// Reduce-scatter in place: `buf` holds `size()` equal blocks; afterwards
    /// block `rank()` holds this rank's block of the reduction (the other
    /// blocks are left in an unspecified state).
    ///
    /// ```no_run
    /// # fn main() -> smd::Result<()> {
    /// let world = smd::Communicator::init()?;
    /// let shard = 256;
    /// let mut grads = vec![1.0f32; shard * world.size()];
    /// world.reduce_scatter_in_place(&mut grads, smd::Op::Avg)?;
    /// let mine = &grads[world.rank() * shard..][..shard];
    /// # Ok(())
    /// # }
    /// ```
    pub fn reduce_scatter_in_place<T: Datatype>(&self, buf: &mut [T], op: Op) -> Result<()> {
        self.run(call::reduce_scatter_in_place(self, buf, op)?)
    }

    /// Copies `root`'s `buf` into every rank's `buf`.
    ///
    /// ```no_run
    /// # fn main() -> smd::Result<()> {
    /// let world = smd::Communicator::init()?;
    /// let mut params = vec![0.0f64; 100];
    /// if world.rank() == 0 {
    ///     params.fill(0.5);
    /// }
    /// world.broadcast(&mut params, 0)?;
    /// assert_eq!(params[99], 0.5);
    /// # Ok(())
    /// # }
    /// ```
    pub fn broadcast<T: Datatype>(&self, buf: &mut [T], root: usize) -> Result<()> {
        self.run(call::broadcast(self, buf, root)?)
    }

    /// Reduces `buf` over the ranks into `root`'s `buf`, in place; the other
    /// ranks' `buf` is left as it was.
    ///
    /// ```no_run
    /// # fn main() -> smd::Result<()> {
    /// let world = smd::Communicator::init()?;
    /// let mut count = [1u64];
    /// world.reduce(&mut count, smd::Op::Sum, 0)?;
    /// if world.rank() == 0 {
    ///     assert_eq!(count[0], world.size() as u64);
    /// }
    /// # Ok(())
    /// # }
    /// ```
    pub fn reduce<T: Datatype>(&self, buf: &mut [T], op: Op, root: usize) -> Result<()> {
        self.run(call::reduce_in_place(self, buf, op, root)?)
    }

    /// Reduces `send` over the ranks into `recv` at `root` (`recv` must be
    /// as long as `send` there); elsewhere `recv` is not touched and may be
    /// empty.
    ///
    /// ```no_run
    /// # fn main() -> smd::Result<()> {
    /// let world = smd::Communicator::init()?;
    /// let mine = [world.rank() as i32];
    /// let mut max = if world.rank() == 0 { vec![0] } else { vec![] };
    /// world.reduce_into(&mine, &mut max, smd::Op::Max, 0)?;
    /// # Ok(())
    /// # }
    /// ```
    pub fn reduce_into<T: Datatype>(
        &self,
        send: &[T],
        recv: &mut [T],
        op: Op,
        root: usize,
    ) -> Result<()> {
        self.run(call::reduce(self, send, recv, op, root)?)
    }

    /// Exchanges blocks: `send` and `recv` hold `size()` equal blocks; block
    /// `j` of `send` goes to rank `j`, which stores it as block `rank()` of
    /// its `recv`.
    ///
    /// ```no_run
    /// # fn main() -> smd::Result<()> {
    /// let world = smd::Communicator::init()?;
    /// let send: Vec<u32> = (0..world.size() as u32).collect(); // block j = j
    /// let mut recv = vec![0u32; world.size()];
    /// world.all_to_all(&send, &mut recv)?;
    /// assert!(recv.iter().all(|&v| v == world.rank() as u32));
    /// # Ok(())
    /// # }
    /// ```
    pub fn all_to_all<T: Datatype>(&self, send: &[T], recv: &mut [T]) -> Result<()> {
        self.run(call::all_to_all(self, send, recv)?)
    }

    /// Returns once every rank has entered the barrier.
    ///
    /// ```no_run
    /// # fn main() -> smd::Result<()> {
    /// let world = smd::Communicator::init()?;
    /// world.barrier()?;
    /// # Ok(())
    /// # }
    /// ```
    pub fn barrier(&self) -> Result<()> {
        self.run(call::barrier())
    }

    /// Sends `buf` to rank `peer` with `tag` (`0..=SMD_TAG_MAX`). Messages
    /// between two ranks with one tag arrive in the order sent; they are not
    /// ordered with collectives.
    ///
    /// ```no_run
    /// # fn main() -> smd::Result<()> {
    /// let world = smd::Communicator::init()?;
    /// if world.rank() == 0 {
    ///     world.send(&[1.0f32, 2.0, 3.0], 1, 7)?;
    /// } else if world.rank() == 1 {
    ///     let mut buf = [0.0f32; 8];
    ///     let n = world.recv(&mut buf, 0, 7)?;
    ///     assert_eq!(&buf[..n], &[1.0, 2.0, 3.0]);
    /// }
    /// # Ok(())
    /// # }
    /// ```
    pub fn send<T: Datatype>(&self, buf: &[T], peer: usize, tag: u32) -> Result<()> {
        self.run(call::send(self, buf, peer, tag)?)
    }

    /// Receives a message from rank `peer` with `tag` into `buf` and returns
    /// how many elements arrived (at most `buf.len()`; a longer message fails
    /// with [`ErrorCode::Truncated`](crate::ErrorCode::Truncated)).
    ///
    /// ```no_run
    /// # fn main() -> smd::Result<()> {
    /// let world = smd::Communicator::init()?;
    /// let mut buf = vec![0u8; 4096];
    /// let n = world.recv(&mut buf, 0, 0)?;
    /// let message = &buf[..n];
    /// # Ok(())
    /// # }
    /// ```
    pub fn recv<T: Datatype>(&self, buf: &mut [T], peer: usize, tag: u32) -> Result<usize> {
        // smd_recv does not say how much arrived; the request form does.
        scope(|s| self.irecv(s, buf, peer, tag)?.wait())
    }
}
