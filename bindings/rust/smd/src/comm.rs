//! [`Communicator`]: forming the world, deriving communicators, queries.

use std::fmt;
use std::mem::ManuallyDrop;
use std::os::raw::c_int;
use std::ptr::{self, NonNull};

use smd_sys as sys;

use crate::error::{Error, ErrorCode, Result, check, to_c_int, to_usize};
use crate::init::{InitOptions, RawInitOptions};

/// A group of ranks that run collectives together (`smd_comm_t`).
///
/// Created by [`Communicator::init`] (the world) or derived from another
/// ([`split`](Communicator::split), [`dup`](Communicator::dup),
/// [`create_group`](Communicator::create_group)); dropping it destroys it
/// (`smd_comm_destroy`, local, not collective: pending operations finish
/// first). Rank, size and placement are read once at creation, so the
/// accessors cannot fail.
///
/// # Thread safety
///
/// `Communicator` is `Send` and `Sync`. smd.h makes every function callable
/// from any thread, and guarantees that disagreement between ranks ends in an
/// error (`Mismatch`, `Truncated`, `Timeout`), "never in corruption beyond
/// the buffers given" — so sharing one communicator between threads is
/// memory-safe. What the library cannot do is order the collectives that
/// several threads issue on one communicator: every rank must issue them in
/// the same order, and arranging that (one thread per communicator, a lock,
/// or one communicator per thread via [`dup`](Communicator::dup)) is the
/// caller's job. [`abort`](Communicator::abort) is meant to be called from
/// another thread while one is blocked in a collective.
///
/// ```no_run
/// use smd::{Communicator, Op};
/// # fn main() -> smd::Result<()> {
/// let world = Communicator::init()?; // rank and size from smdrun, torchrun, mpirun, Slurm
/// let mut grads = vec![world.rank() as f32; 4];
/// world.all_reduce(&mut grads, Op::Avg)?;
/// let evens = world.split(Some((world.rank() % 2) as u32), 0)?;
/// # Ok(())
/// # }
/// ```
pub struct Communicator {
    raw: NonNull<sys::smd_comm_t>,
    layout: Layout,
}

// SAFETY: smd.h: "All functions may be called from any thread"; different
// threads issuing collectives on one communicator is allowed (their order is
// the caller's business, and a wrong order is reported as an error, not
// undefined behaviour). The cached layout is immutable.
unsafe impl Send for Communicator {}
// SAFETY: as above; every method takes &self and the library synchronises.
unsafe impl Sync for Communicator {}

/// What a communicator's queries answer; fixed for its lifetime.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
struct Layout {
    rank: usize,
    size: usize,
    local_rank: usize,
    local_size: usize,
    node_index: usize,
    node_count: usize,
}

type Query = unsafe extern "C" fn(*const sys::smd_comm_t, *mut c_int) -> sys::smd_result_t;
/// `smd_comm_init` or `smd_comm_join`.
type Bootstrap = unsafe extern "C" fn(
    *const sys::smd_init_options_t,
    *mut *mut sys::smd_comm_t,
) -> sys::smd_result_t;

impl Layout {
    fn query(raw: NonNull<sys::smd_comm_t>) -> Result<Layout> {
        let get = |f: Query, what: &str| {
            let mut v: c_int = 0;
            // SAFETY: `raw` is a live communicator, `v` a valid out-pointer.
            check(unsafe { f(raw.as_ptr(), &mut v) })?;
            to_usize(v, what)
        };
        Ok(Layout {
            rank: get(sys::smd_comm_rank, "rank")?,
            size: get(sys::smd_comm_size, "size")?,
            local_rank: get(sys::smd_comm_local_rank, "local rank")?,
            local_size: get(sys::smd_comm_local_size, "local size")?,
            node_index: get(sys::smd_comm_node_index, "node index")?,
            node_count: get(sys::smd_comm_node_count, "node count")?,
        })
    }
}

impl Communicator {
    /// Forms the world from the launcher's environment: smdrun, torchrun,
    /// Open MPI, Slurm or `SMD_*` variables; without any, a one-rank world.
    /// Collective over the world: every rank calls it.
    ///
    /// ```no_run
    /// let world = smd::Communicator::init().expect("smd world");
    /// println!("rank {} of {}", world.rank(), world.size());
    /// ```
    pub fn init() -> Result<Communicator> {
        Communicator::bootstrap(sys::smd_comm_init, None)
    }

    /// Forms the world with explicit settings (rank, size, store address,
    /// job token, timeout, transport); what `options` leaves unset comes
    /// from the environment. Collective over the world.
    ///
    /// ```no_run
    /// use std::time::Duration;
    /// use smd::{Communicator, InitOptions};
    /// # fn main() -> smd::Result<()> {
    /// let options = InitOptions::new()
    ///     .rank(1)
    ///     .world_size(4)
    ///     .store_addr("10.0.0.1")
    ///     .store_port(29500)
    ///     .job_token("job-42")
    ///     .timeout(Duration::from_secs(60));
    /// let world = Communicator::init_with(&options)?;
    /// # Ok(())
    /// # }
    /// ```
    pub fn init_with(options: &InitOptions) -> Result<Communicator> {
        Communicator::bootstrap(sys::smd_comm_init, Some(options))
    }

    /// Forms a communicator with `bootstrap` (`smd_comm_init` or
    /// `smd_comm_join`) from `options`, or from the environment without.
    fn bootstrap(bootstrap: Bootstrap, options: Option<&InitOptions>) -> Result<Communicator> {
        let raw_options = options.map(InitOptions::to_raw).transpose()?;
        let options = raw_options
            .as_ref()
            .map_or(ptr::null(), RawInitOptions::as_ptr);
        // SAFETY: NULL options mean "from the environment"; other options
        // and the strings they point to live in `raw_options` until after
        // the call; `raw` is a valid out-pointer.
        Communicator::create(|raw| unsafe { bootstrap(options, raw) })
    }

    /// Runs `create`, which makes a communicator through its out-pointer,
    /// and takes ownership of what it made.
    fn create(
        create: impl FnOnce(&mut *mut sys::smd_comm_t) -> sys::smd_result_t,
    ) -> Result<Communicator> {
        let mut raw = ptr::null_mut();
        check(create(&mut raw))?;
        Communicator::adopt(raw)
    }

    /// Takes ownership of a communicator the library just created.
    fn adopt(raw: *mut sys::smd_comm_t) -> Result<Communicator> {
        let raw = NonNull::new(raw).ok_or_else(|| {
            Error::new(ErrorCode::Internal, "libsmd returned a NULL communicator")
        })?;
        let layout = match Layout::query(raw) {
            Ok(layout) => layout,
            Err(e) => {
                // SAFETY: `raw` is ours and not yet wrapped: destroy it once.
                unsafe { sys::smd_comm_destroy(raw.as_ptr()) };
                return Err(e);
            }
        };
        Ok(Communicator { raw, layout })
    }

    /// Wraps a communicator that something else owns (a `Groups`), which
    /// must outlive the wrapper; the wrapper never destroys it.
    pub(crate) fn borrowed(raw: NonNull<sys::smd_comm_t>) -> Result<ManuallyDrop<Communicator>> {
        let layout = Layout::query(raw)?;
        Ok(ManuallyDrop::new(Communicator { raw, layout }))
    }

    /// The raw handle, for calling `smd_sys` functions directly. It stays
    /// owned by this `Communicator`: do not destroy it.
    ///
    /// ```no_run
    /// # fn main() -> smd::Result<()> {
    /// let world = smd::Communicator::init()?;
    /// let mut count = 0;
    /// // SAFETY: `world` is alive for the call; `count` is a valid out-pointer.
    /// unsafe { smd::sys::smd_comm_node_count(world.as_raw(), &mut count) };
    /// # Ok(())
    /// # }
    /// ```
    pub fn as_raw(&self) -> *mut sys::smd_comm_t {
        self.raw.as_ptr()
    }

    /// This process's rank in the communicator, `0..size()`.
    ///
    /// ```no_run
    /// let world = smd::Communicator::init().unwrap();
    /// assert!(world.rank() < world.size());
    /// ```
    pub fn rank(&self) -> usize {
        self.layout.rank
    }

    /// The number of ranks.
    ///
    /// ```no_run
    /// let world = smd::Communicator::init().unwrap();
    /// assert!(world.size() >= 1);
    /// ```
    pub fn size(&self) -> usize {
        self.layout.size
    }

    /// This rank's index among the members on its node.
    ///
    /// ```no_run
    /// let world = smd::Communicator::init().unwrap();
    /// assert!(world.local_rank() < world.local_size());
    /// ```
    pub fn local_rank(&self) -> usize {
        self.layout.local_rank
    }

    /// How many members share this rank's node.
    ///
    /// ```no_run
    /// let world = smd::Communicator::init().unwrap();
    /// assert!(world.local_size() <= world.size());
    /// ```
    pub fn local_size(&self) -> usize {
        self.layout.local_size
    }

    /// The index of this rank's node among the communicator's nodes
    /// (nodes ordered by their lowest rank).
    ///
    /// ```no_run
    /// let world = smd::Communicator::init().unwrap();
    /// assert!(world.node_index() < world.node_count());
    /// ```
    pub fn node_index(&self) -> usize {
        self.layout.node_index
    }

    /// The number of nodes the members run on.
    ///
    /// ```no_run
    /// let world = smd::Communicator::init().unwrap();
    /// let single_node = world.node_count() == 1;
    /// ```
    pub fn node_count(&self) -> usize {
        self.layout.node_count
    }

    /// The world rank of rank `rank` of this communicator.
    ///
    /// ```no_run
    /// # fn main() -> smd::Result<()> {
    /// let world = smd::Communicator::init()?;
    /// let half = world.split(Some((world.rank() % 2) as u32), 0)?.unwrap();
    /// let first = half.world_rank(0)?; // 0 or 1
    /// # Ok(())
    /// # }
    /// ```
    pub fn world_rank(&self, rank: usize) -> Result<usize> {
        let rank = to_c_int(rank, "rank")?;
        let mut world_rank: c_int = 0;
        // SAFETY: live communicator, valid out-pointer.
        check(unsafe { sys::smd_comm_world_rank(self.as_raw(), rank, &mut world_rank) })?;
        to_usize(world_rank, "world rank")
    }

    /// Splits the communicator: ranks passing the same `color` form a new
    /// communicator, ranked by `(key, rank here)`; ranks passing `None` get
    /// `None`. Collective over this communicator.
    ///
    /// ```no_run
    /// # fn main() -> smd::Result<()> {
    /// let world = smd::Communicator::init()?;
    /// // Ranks 0 and 1 form one communicator, the others none.
    /// let color = (world.rank() < 2).then_some(0);
    /// if let Some(pair) = world.split(color, 0)? {
    ///     pair.barrier()?;
    /// }
    /// # Ok(())
    /// # }
    /// ```
    pub fn split(&self, color: Option<u32>, key: i32) -> Result<Option<Communicator>> {
        let color = match color {
            Some(c) => c_int::try_from(c)
                .map_err(|_| Error::invalid(format!("split: color {c} does not fit in a C int")))?,
            None => sys::SMD_UNDEFINED,
        };
        let mut raw = ptr::null_mut();
        // SAFETY: live communicator, valid out-pointer.
        check(unsafe { sys::smd_comm_split(self.as_raw(), color, key, &mut raw) })?;
        if raw.is_null() {
            return Ok(None);
        }
        Communicator::adopt(raw).map(Some)
    }

    /// A new communicator with the same ranks: its collectives are ordered
    /// independently of this one's (one per thread, for example).
    /// Collective over this communicator.
    ///
    /// ```no_run
    /// # fn main() -> smd::Result<()> {
    /// let world = smd::Communicator::init()?;
    /// let for_the_loader_thread = world.dup()?;
    /// # Ok(())
    /// # }
    /// ```
    pub fn dup(&self) -> Result<Communicator> {
        // SAFETY: live communicator, valid out-pointer.
        Communicator::create(|raw| unsafe { sys::smd_comm_dup(self.as_raw(), raw) })
    }

    /// A communicator of the listed ranks of this one, in that order (which
    /// gives their new ranks). Collective over the listed ranks only: each of
    /// them calls it with the same list; the others do not call it.
    ///
    /// ```no_run
    /// # fn main() -> smd::Result<()> {
    /// let world = smd::Communicator::init()?;
    /// if world.rank() % 2 == 0 {
    ///     let evens: Vec<usize> = (0..world.size()).step_by(2).collect();
    ///     let comm = world.create_group(&evens)?;
    ///     assert_eq!(comm.rank(), world.rank() / 2);
    /// }
    /// # Ok(())
    /// # }
    /// ```
    pub fn create_group(&self, ranks: &[usize]) -> Result<Communicator> {
        let ranks = ranks
            .iter()
            .map(|&r| to_c_int(r, "create_group: rank"))
            .collect::<Result<Vec<c_int>>>()?;
        let n = to_c_int(ranks.len(), "create_group: number of ranks")?;
        // SAFETY: live communicator; `ranks` holds `n` ints; valid out-pointer.
        Communicator::create(|raw| unsafe {
            sys::smd_comm_create_group(self.as_raw(), ranks.as_ptr(), n, raw)
        })
    }

    /// Makes every pending and future operation on this communicator fail
    /// with [`ErrorCode::Aborted`], here and on its peers; blocked calls
    /// return promptly. Meant to be called from another thread (a watchdog).
    ///
    /// ```no_run
    /// # fn main() -> smd::Result<()> {
    /// let world = smd::Communicator::init()?;
    /// std::thread::scope(|s| {
    ///     s.spawn(|| {
    ///         std::thread::sleep(std::time::Duration::from_secs(60));
    ///         world.abort() // the barrier below has waited long enough
    ///     });
    ///     world.barrier()
    /// })?;
    /// # Ok(())
    /// # }
    /// ```
    pub fn abort(&self) -> Result<()> {
        // SAFETY: live communicator.
        check(unsafe { sys::smd_comm_abort(self.as_raw()) })
    }

    /// Make every pending and future call on this communicator fail with
    /// [`ErrorCode::Revoked`], here and on every member that can be
    /// reached; from any thread. [`agree`](Self::agree),
    /// [`shrink`](Self::shrink) and dropping still work (docs/ELASTIC.md).
    pub fn revoke(&self) -> Result<()> {
        // SAFETY: live communicator.
        check(unsafe { sys::smd_comm_revoke(self.as_raw()) })
    }

    /// Collective over the survivors: the bitwise AND of their `flag`s and
    /// the ranks of this communicator that failed, ascending; every
    /// survivor gets the same answer, even when members fail during it.
    pub fn agree(&self, flag: u32) -> Result<(u32, Vec<usize>)> {
        let mut flag = flag;
        let mut failed: Vec<c_int> = vec![0; self.size()];
        let mut nfailed: c_int = 0;
        let capacity = to_c_int(self.size(), "size")?;
        // SAFETY: live communicator; `failed` holds `capacity` ints.
        check(unsafe {
            sys::smd_comm_agree(
                self.as_raw(),
                &mut flag,
                failed.as_mut_ptr(),
                capacity,
                &mut nfailed,
            )
        })?;
        failed.truncate(to_usize(nfailed, "nfailed")?.min(self.size()));
        let failed = failed
            .into_iter()
            .map(|r| to_usize(r, "failed rank"))
            .collect::<Result<_>>()?;
        Ok((flag, failed))
    }

    /// Collective over the survivors: a new communicator of the members that
    /// have not failed, ranked in their order here, and for each rank here
    /// its new rank (`None` for a failed one). This communicator stays as
    /// it is (revoke and drop it).
    pub fn shrink(&self) -> Result<(Communicator, Vec<Option<usize>>)> {
        let mut raw = ptr::null_mut();
        let mut old_to_new: Vec<c_int> = vec![-1; self.size()];
        // SAFETY: live communicator, valid out-pointer, `old_to_new` holds size() ints.
        check(unsafe { sys::smd_comm_shrink(self.as_raw(), &mut raw, old_to_new.as_mut_ptr()) })?;
        let comm = Communicator::adopt(raw)?;
        Ok((
            comm,
            old_to_new
                .into_iter()
                .map(|r| usize::try_from(r).ok())
                .collect(),
        ))
    }

    /// Collective over every member: admits `n_new` new processes (which
    /// call [`Communicator::join`]) and returns the grown communicator:
    /// the members keep their ranks, the joiners follow. Waits up to `wait`
    /// for them (`None`: SMD_TIMEOUT); `ErrorCode::Timeout` on every member
    /// when fewer come. This communicator stays as it is.
    pub fn grow(&self, n_new: usize, wait: Option<std::time::Duration>) -> Result<Communicator> {
        let n_new = to_c_int(n_new, "n_new")?;
        let wait_ms = wait.map_or(0, |d| {
            i64::try_from(d.as_millis().max(1)).unwrap_or(i64::MAX)
        });
        // SAFETY: live communicator, valid out-pointer.
        Communicator::create(|raw| unsafe {
            sys::smd_comm_grow(self.as_raw(), n_new, wait_ms, raw)
        })
    }

    /// A new process joins a running job (the job's store and token from
    /// the environment: SMD_MASTER_ADDR, SMD_MASTER_PORT, SMD_JOB_TOKEN):
    /// waits for the members' [`Communicator::grow`] that admits it and
    /// returns the grown communicator.
    pub fn join() -> Result<Communicator> {
        Communicator::bootstrap(sys::smd_comm_join, None)
    }

    /// [`Communicator::join`] with explicit store settings (address, port,
    /// job token, timeout, transport); rank and world size are ignored. A
    /// wrong token is refused with `ErrorCode::Bootstrap`.
    pub fn join_with(options: &InitOptions) -> Result<Communicator> {
        Communicator::bootstrap(sys::smd_comm_join, Some(options))
    }

    /// The background failure of this communicator, if any (a peer died
    /// while no call was waiting on it, an abort).
    ///
    /// ```no_run
    /// # fn main() -> smd::Result<()> {
    /// let world = smd::Communicator::init()?;
    /// if let Some(code) = world.async_error()? {
    ///     eprintln!("communicator failed: {code}");
    /// }
    /// # Ok(())
    /// # }
    /// ```
    pub fn async_error(&self) -> Result<Option<ErrorCode>> {
        let mut code = sys::smd_result_t::SMD_SUCCESS;
        // SAFETY: live communicator, valid out-pointer.
        check(unsafe { sys::smd_comm_get_async_error(self.as_raw(), &mut code) })?;
        Ok(ErrorCode::from_raw(code))
    }

    /// Traffic and algorithm statistics of this communicator on this rank
    /// (`smd_comm_get_stats`): cumulative since it was created, including
    /// the sub-communicators its hierarchical collectives run on.
    ///
    /// ```no_run
    /// # fn main() -> smd::Result<()> {
    /// let world = smd::Communicator::init()?;
    /// let mut v = vec![1.0f32; 1 << 20];
    /// world.all_reduce(&mut v, smd::Op::Sum)?;
    /// let s = world.stats()?;
    /// println!("{} sent {} bytes across nodes", s.last_algorithm, s.inter_node_bytes_sent);
    /// # Ok(())
    /// # }
    /// ```
    pub fn stats(&self) -> Result<Stats> {
        // SAFETY: an all-zero smd_comm_stats_t is a valid value of the C
        // struct (integers, floats and char arrays).
        let mut raw: sys::smd_comm_stats_t = unsafe { std::mem::zeroed() };
        raw.struct_size = std::mem::size_of::<sys::smd_comm_stats_t>();
        // SAFETY: live communicator, valid out-pointer with struct_size set.
        check(unsafe { sys::smd_comm_get_stats(self.as_raw(), &mut raw) })?;
        let text = |chars: &[std::os::raw::c_char]| -> String {
            let bytes: Vec<u8> = chars.iter().take_while(|&&c| c != 0).map(|&c| c as u8).collect();
            String::from_utf8_lossy(&bytes).into_owned()
        };
        let count = usize::try_from(raw.transport_count).unwrap_or(0).min(raw.transports.len());
        Ok(Stats {
            collectives: raw.collectives,
            inter_node_bytes_sent: raw.inter_node_bytes_sent,
            inter_node_bytes_received: raw.inter_node_bytes_received,
            intra_node_bytes_sent: raw.intra_node_bytes_sent,
            intra_node_bytes_received: raw.intra_node_bytes_received,
            last_algorithm: text(&raw.last_algorithm),
            last_predicted_us: raw.last_predicted_us,
            transports: raw.transports[..count]
                .iter()
                .map(|t| TransportStats {
                    name: text(&t.name),
                    bytes_sent: t.bytes_sent,
                    bytes_received: t.bytes_received,
                })
                .collect(),
        })
    }
}

/// What [`Communicator::stats`] returns. Bytes are point-to-point payload
/// handed to transports; a node's shared-memory arena moves data without
/// messages and is not counted.
#[derive(Clone, Debug, PartialEq)]
pub struct Stats {
    /// Collective calls run on this rank.
    pub collectives: u64,
    /// Bytes sent to members on other nodes.
    pub inter_node_bytes_sent: u64,
    /// Bytes received from members on other nodes.
    pub inter_node_bytes_received: u64,
    /// Bytes sent to members on this node.
    pub intra_node_bytes_sent: u64,
    /// Bytes received from members on this node.
    pub intra_node_bytes_received: u64,
    /// The last collective's algorithm (`"direct"`, `"ring"`, `"rd"`,
    /// `"tree"`, `"pairwise"`, `"hierarchical"`, `"cma"`, `"herring"`, `"single"`; empty
    /// before the first).
    pub last_algorithm: String,
    /// The cost model's prediction of one call of it, in microseconds.
    pub last_predicted_us: f64,
    /// Bytes by transport, over the whole world.
    pub transports: Vec<TransportStats>,
}

/// One transport's bytes in [`Stats`].
#[derive(Clone, Debug, PartialEq)]
pub struct TransportStats {
    /// The plugin's name (`"shm"`, `"tcp"`, `"ucx"`, `"efa"`).
    pub name: String,
    /// Bytes sent through it.
    pub bytes_sent: u64,
    /// Bytes received through it.
    pub bytes_received: u64,
}

impl Drop for Communicator {
    fn drop(&mut self) {
        // SAFETY: the handle is owned and destroyed exactly once. The
        // result is dropped: a destroy that fails (a peer already gone) has
        // nothing left to release that the caller could act on.
        unsafe { sys::smd_comm_destroy(self.raw.as_ptr()) };
    }
}

impl fmt::Debug for Communicator {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.debug_struct("Communicator")
            .field("rank", &self.layout.rank)
            .field("size", &self.layout.size)
            .field("local_rank", &self.layout.local_rank)
            .field("local_size", &self.layout.local_size)
            .field("node_index", &self.layout.node_index)
            .field("node_count", &self.layout.node_count)
            .finish()
    }
}
