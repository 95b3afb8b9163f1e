//! Rank groups for model parallelism: [`Groups`], [`GroupsConfig`],
//! [`GroupKind`].
//!
//! A world of W ranks with tensor-parallel degree tp and pipeline-parallel
//! degree pp (tp × pp dividing W) has reduced-data-parallel degree
//! rdp = W / (tp × pp); the placement ("cluster" = "DPT", "spread" = "TPD",
//! or any permutation of D, P, T, the right-most letter varying fastest)
//! maps the coordinates (rdp_rank, pp_rank, tp_rank) to ranks. See smd.h
//! and the README's "Rank groups".

use std::ffi::CString;
use std::mem::ManuallyDrop;
use std::os::raw::c_int;
use std::ptr::{self, NonNull};

use smd_sys as sys;

use crate::comm::Communicator;
use crate::error::{Error, ErrorCode, Result, check, to_c_int, to_usize};

/// A kind of rank group.
///
/// ```
/// use smd::GroupKind;
/// assert_eq!(GroupKind::ALL.len(), 7);
/// assert_eq!(GroupKind::Tp.raw(), smd::sys::smd_group_kind_t::SMD_GROUP_TP);
/// ```
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub enum GroupKind {
    /// Every rank of the communicator the groups came from.
    World,
    /// Tensor parallel: same rdp_rank and pp_rank (size tp).
    Tp,
    /// Pipeline parallel: same rdp_rank and tp_rank (size pp).
    Pp,
    /// Data parallel: same pp_rank (size tp × rdp).
    Dp,
    /// Reduced data parallel: same pp_rank and tp_rank (size rdp).
    Rdp,
    /// Model parallel: same rdp_rank, one whole model replica (size tp × pp).
    Mp,
    /// Sharded data parallel: a chunk of `sdp` consecutive members of the
    /// RDP group (the shard group of a sharded parameter set).
    Sdp,
}

impl GroupKind {
    /// Every kind, in the order of `smd_group_kind_t`.
    ///
    /// ```
    /// assert_eq!(smd::GroupKind::ALL[0], smd::GroupKind::World);
    /// ```
    pub const ALL: [GroupKind; 7] = [
        GroupKind::World,
        GroupKind::Tp,
        GroupKind::Pp,
        GroupKind::Dp,
        GroupKind::Rdp,
        GroupKind::Mp,
        GroupKind::Sdp,
    ];

    /// The library's code for this kind.
    ///
    /// ```
    /// assert_eq!(smd::GroupKind::Mp.raw(), smd::sys::smd_group_kind_t::SMD_GROUP_MP);
    /// ```
    pub fn raw(self) -> sys::smd_group_kind_t {
        use sys::smd_group_kind_t as K;
        match self {
            GroupKind::World => K::SMD_GROUP_WORLD,
            GroupKind::Tp => K::SMD_GROUP_TP,
            GroupKind::Pp => K::SMD_GROUP_PP,
            GroupKind::Dp => K::SMD_GROUP_DP,
            GroupKind::Rdp => K::SMD_GROUP_RDP,
            GroupKind::Mp => K::SMD_GROUP_MP,
            GroupKind::Sdp => K::SMD_GROUP_SDP,
        }
    }

    fn index(self) -> usize {
        self as usize
    }
}

/// Degrees and placement of the groups (`smd_groups_config_t`).
///
/// ```
/// use smd::{GroupKind, GroupsConfig};
/// # fn main() -> smd::Result<()> {
/// let config = GroupsConfig::new(2, 2).placement("cluster");
/// // Rank 5 of 8 under "DPT": rdp_rank 1, pp_rank 0, tp_rank 1.
/// let tp = config.layout(8, 5, GroupKind::Tp)?;
/// assert_eq!((tp.group_rank, tp.members), (1, vec![4, 5]));
/// # Ok(())
/// # }
/// ```
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct GroupsConfig {
    tp: usize,
    pp: usize,
    sdp: usize,
    placement: Option<String>,
}

impl GroupsConfig {
    /// Tensor-parallel degree `tp` and pipeline-parallel degree `pp` (both at
    /// least 1), placement "cluster".
    ///
    /// ```
    /// let data_parallel_only = smd::GroupsConfig::new(1, 1);
    /// ```
    pub fn new(tp: usize, pp: usize) -> GroupsConfig {
        GroupsConfig {
            tp,
            pp,
            sdp: 1,
            placement: None,
        }
    }

    /// The placement: "cluster", "spread", or a permutation of "DPT".
    ///
    /// ```
    /// let config = smd::GroupsConfig::new(4, 1).placement("spread");
    /// ```
    pub fn placement(mut self, placement: &str) -> GroupsConfig {
        self.placement = Some(placement.to_string());
        self
    }

    /// The sharded data-parallel degree (SMP's `sharded_data_parallel_degree`,
    /// default 1): it must divide rdp; the SDP groups are chunks of `sdp`
    /// consecutive members of each RDP group.
    ///
    /// ```
    /// use smd::{GroupKind, GroupsConfig};
    /// let sharded = GroupsConfig::new(1, 1).sdp(2);
    /// assert_eq!(sharded.layout(8, 5, GroupKind::Sdp).unwrap().members, vec![4, 5]);
    /// ```
    pub fn sdp(mut self, sdp: usize) -> GroupsConfig {
        self.sdp = sdp;
        self
    }

    /// Calls `f` with the C struct (valid during the call only).
    fn with_raw<R>(&self, f: impl FnOnce(&sys::smd_groups_config_t) -> Result<R>) -> Result<R> {
        let mut raw = sys::smd_groups_config_t::default();
        // SAFETY: a valid, writable struct for the library to fill in.
        check(unsafe { sys::smd_groups_config_init(&mut raw) })?;
        raw.tp = to_c_int(self.tp, "groups: tp")?;
        raw.pp = to_c_int(self.pp, "groups: pp")?;
        raw.sdp = to_c_int(self.sdp, "groups: sdp")?;
        let placement = self
            .placement
            .as_deref()
            .map(|p| {
                CString::new(p)
                    .map_err(|_| Error::invalid("groups: the placement contains a NUL byte"))
            })
            .transpose()?;
        if let Some(p) = &placement {
            raw.placement = p.as_ptr();
        }
        f(&raw)
    }

    /// The group of `kind` that rank `rank` of a world of `world_size` ranks
    /// belongs to, computed without communicating (`smd_groups_layout`):
    /// for planning, tools and tests. Fails like [`Communicator::groups`]
    /// for a configuration that does not fit.
    ///
    /// ```
    /// use smd::{GroupKind, GroupsConfig};
    /// let spread = GroupsConfig::new(1, 2).placement("spread");
    /// assert_eq!(spread.layout(8, 1, GroupKind::Mp).unwrap().members, vec![1, 5]);
    /// assert!(GroupsConfig::new(3, 1).layout(8, 0, GroupKind::Tp).is_err()); // 3 does not divide 8
    /// ```
    pub fn layout(&self, world_size: usize, rank: usize, kind: GroupKind) -> Result<GroupLayout> {
        let world = to_c_int(world_size, "layout: world size")?;
        let rank = to_c_int(rank, "layout: rank")?;
        self.with_raw(|raw| {
            let mut group_rank: c_int = 0;
            // Fills `members` (none: only counts) and returns the group's size.
            let mut layout = |members: &mut [c_int]| -> Result<c_int> {
                let capacity = to_c_int(members.len(), "group size")?;
                let members = if members.is_empty() {
                    ptr::null_mut()
                } else {
                    members.as_mut_ptr()
                };
                let mut count: c_int = 0;
                // SAFETY: `raw` is valid for the call; `members` has room for
                // `capacity` ranks (NULL with capacity 0 only asks for the count).
                check(unsafe {
                    sys::smd_groups_layout(
                        raw,
                        world,
                        rank,
                        kind.raw(),
                        &mut group_rank,
                        members,
                        capacity,
                        &mut count,
                    )
                })?;
                Ok(count)
            };
            let count = layout(&mut [])?;
            let mut members: Vec<c_int> = vec![0; to_usize(count, "group size")?];
            layout(&mut members)?;
            Ok(GroupLayout {
                group_rank: to_usize(group_rank, "group rank")?,
                members: ranks(&members)?,
            })
        })
    }
}

/// One rank's group of one kind, as [`GroupsConfig::layout`] computes it.
///
/// ```
/// let l = smd::GroupsConfig::new(2, 1).layout(4, 3, smd::GroupKind::Tp).unwrap();
/// assert_eq!(l, smd::GroupLayout { group_rank: 1, members: vec![2, 3] });
/// ```
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct GroupLayout {
    /// The rank's rank within the group (its position in `members`).
    pub group_rank: usize,
    /// The group's members, ascending.
    pub members: Vec<usize>,
}

fn ranks(raw: &[c_int]) -> Result<Vec<usize>> {
    raw.iter().map(|&r| to_usize(r, "member rank")).collect()
}

/// This rank's groups and a communicator for each (`smd_groups_t`), made by
/// [`Communicator::groups`]. Dropping it destroys the groups and their
/// communicators, so the communicators are lent out as `&Communicator`
/// borrowing the `Groups`.
///
/// `Send` and `Sync` like [`Communicator`]: after creation it is only read.
///
/// ```no_run
/// use smd::{Communicator, GroupKind, GroupsConfig, Op};
/// # fn main() -> smd::Result<()> {
/// let world = Communicator::init()?; // 8 ranks, say
/// let groups = world.groups(&GroupsConfig::new(2, 2))?;
/// let mut activations = vec![0.0f32; 1024];
/// groups.tp().all_reduce(&mut activations, Op::Sum)?;
/// let mut grads = vec![0.0f32; 1024];
/// groups.dp().all_reduce(&mut grads, Op::Avg)?;
/// println!("tp rank {} of {}", groups.rank(GroupKind::Tp), groups.size(GroupKind::Tp));
/// # Ok(())
/// # }
/// ```
pub struct Groups {
    raw: NonNull<sys::smd_groups_t>,
    /// Indexed by `GroupKind::index()`. Owned by `raw`: never dropped.
    groups: Vec<Group>,
}

struct Group {
    comm: ManuallyDrop<Communicator>,
    rank: usize,
    size: usize,
    members: Vec<usize>,
}

// SAFETY: smd.h: every function may be called from any thread; after
// creation a `Groups` is only read, and its communicators are Send + Sync.
unsafe impl Send for Groups {}
// SAFETY: as above.
unsafe impl Sync for Groups {}

impl Communicator {
    /// Builds every rank group of `config` and a communicator for each of
    /// this rank's groups. Collective over this communicator; every rank
    /// must pass the same configuration (checked: a difference fails on
    /// every rank with [`ErrorCode::Mismatch`]); one that does not fit the
    /// size fails with [`ErrorCode::InvalidArgument`].
    ///
    /// ```no_run
    /// # fn main() -> smd::Result<()> {
    /// let world = smd::Communicator::init()?;
    /// let groups = world.groups(&smd::GroupsConfig::new(1, world.size()).placement("spread"))?;
    /// let next_stage = (groups.pp().rank() + 1) % groups.pp().size();
    /// # Ok(())
    /// # }
    /// ```
    pub fn groups(&self, config: &GroupsConfig) -> Result<Groups> {
        let mut raw = ptr::null_mut();
        config.with_raw(|c| {
            // SAFETY: live communicator, `c` valid for the call, valid out-pointer.
            check(unsafe { sys::smd_groups_create(self.as_raw(), c, &mut raw) })
        })?;
        let raw = NonNull::new(raw)
            .ok_or_else(|| Error::new(ErrorCode::Internal, "libsmd returned NULL groups"))?;
        let mut groups = Groups {
            raw,
            groups: Vec::with_capacity(GroupKind::ALL.len()),
        };
        // On an error `groups` drops here, destroying the handle.
        for kind in GroupKind::ALL {
            let group = Group::query(raw, kind)?;
            groups.groups.push(group);
        }
        Ok(groups)
    }
}

impl Group {
    fn query(raw: NonNull<sys::smd_groups_t>, kind: GroupKind) -> Result<Group> {
        let g = raw.as_ptr();
        let (mut rank, mut size, mut count): (c_int, c_int, c_int) = (0, 0, 0);
        let mut comm = ptr::null_mut();
        // SAFETY: live groups, valid out-pointers.
        unsafe {
            check(sys::smd_groups_rank(g, kind.raw(), &mut rank))?;
            check(sys::smd_groups_size(g, kind.raw(), &mut size))?;
            check(sys::smd_groups_comm(g, kind.raw(), &mut comm))?;
        }
        let mut members: Vec<c_int> = vec![0; to_usize(size, "group size")?];
        // SAFETY: `members` has room for `size` ranks.
        check(unsafe {
            sys::smd_groups_members(g, kind.raw(), members.as_mut_ptr(), size, &mut count)
        })?;
        members.truncate(to_usize(count, "group size")?);
        let comm = NonNull::new(comm).ok_or_else(|| {
            Error::new(
                ErrorCode::Internal,
                "libsmd returned a NULL group communicator",
            )
        })?;
        Ok(Group {
            comm: Communicator::borrowed(comm)?,
            rank: to_usize(rank, "group rank")?,
            size: to_usize(size, "group size")?,
            members: ranks(&members)?,
        })
    }
}

/// Writes each shorthand for [`Groups::comm`] of one kind.
macro_rules! kind_communicators {
    ($($(#[$attr:meta])* $name:ident => $kind:ident;)*) => {$(
        $(#[$attr])*
        pub fn $name(&self) -> &Communicator {
            self.comm(GroupKind::$kind)
        }
    )*};
}

impl Groups {
    fn group(&self, kind: GroupKind) -> &Group {
        &self.groups[kind.index()]
    }

    /// The communicator of this rank's group of `kind`, valid while the
    /// `Groups` lives.
    ///
    /// ```no_run
    /// # fn main() -> smd::Result<()> {
    /// # let world = smd::Communicator::init()?;
    /// let groups = world.groups(&smd::GroupsConfig::new(2, 1))?;
    /// groups.comm(smd::GroupKind::Tp).barrier()?;
    /// # Ok(())
    /// # }
    /// ```
    pub fn comm(&self, kind: GroupKind) -> &Communicator {
        &self.group(kind).comm
    }

    /// This rank's rank in its group of `kind` (tp_rank, pp_rank, dp_rank,
    /// rdp_rank, mp_rank, or the rank in the parent communicator).
    ///
    /// ```no_run
    /// # fn main() -> smd::Result<()> {
    /// # let world = smd::Communicator::init()?;
    /// let groups = world.groups(&smd::GroupsConfig::new(2, 1))?;
    /// let first_of_pair = groups.rank(smd::GroupKind::Tp) == 0;
    /// # Ok(())
    /// # }
    /// ```
    pub fn rank(&self, kind: GroupKind) -> usize {
        self.group(kind).rank
    }

    /// The size of the groups of `kind` (tp, pp, tp × rdp, rdp, tp × pp, W).
    ///
    /// ```no_run
    /// # fn main() -> smd::Result<()> {
    /// # let world = smd::Communicator::init()?;
    /// let groups = world.groups(&smd::GroupsConfig::new(2, 1))?;
    /// assert_eq!(groups.size(smd::GroupKind::Tp), 2);
    /// # Ok(())
    /// # }
    /// ```
    pub fn size(&self, kind: GroupKind) -> usize {
        self.group(kind).size
    }

    /// The members of this rank's group of `kind`, as ranks of the parent
    /// communicator, ascending.
    ///
    /// ```no_run
    /// # fn main() -> smd::Result<()> {
    /// # let world = smd::Communicator::init()?;
    /// let groups = world.groups(&smd::GroupsConfig::new(2, 1))?;
    /// println!("my tp group: {:?}", groups.members(smd::GroupKind::Tp));
    /// # Ok(())
    /// # }
    /// ```
    pub fn members(&self, kind: GroupKind) -> &[usize] {
        &self.group(kind).members
    }

    kind_communicators! {
        /// The tensor-parallel communicator.
        ///
        /// ```no_run
        /// # fn main() -> smd::Result<()> {
        /// # let world = smd::Communicator::init()?;
        /// let groups = world.groups(&smd::GroupsConfig::new(2, 1))?;
        /// let mut x = [1.0f32; 4];
        /// groups.tp().all_reduce(&mut x, smd::Op::Sum)?;
        /// # Ok(())
        /// # }
        /// ```
        tp => Tp;

        /// The pipeline-parallel communicator.
        ///
        /// ```no_run
        /// # fn main() -> smd::Result<()> {
        /// # let world = smd::Communicator::init()?;
        /// let groups = world.groups(&smd::GroupsConfig::new(1, 2))?;
        /// let stage = groups.pp().rank();
        /// # Ok(())
        /// # }
        /// ```
        pp => Pp;

        /// The data-parallel communicator.
        ///
        /// ```no_run
        /// # fn main() -> smd::Result<()> {
        /// # let world = smd::Communicator::init()?;
        /// let groups = world.groups(&smd::GroupsConfig::new(2, 1))?;
        /// let mut grads = [0.5f32; 8];
        /// groups.dp().all_reduce(&mut grads, smd::Op::Avg)?;
        /// # Ok(())
        /// # }
        /// ```
        dp => Dp;

        /// The reduced-data-parallel communicator.
        ///
        /// ```no_run
        /// # fn main() -> smd::Result<()> {
        /// # let world = smd::Communicator::init()?;
        /// let groups = world.groups(&smd::GroupsConfig::new(2, 1))?;
        /// let replicas = groups.rdp().size();
        /// # Ok(())
        /// # }
        /// ```
        rdp => Rdp;

        /// The model-parallel communicator (one whole model replica).
        ///
        /// ```no_run
        /// # fn main() -> smd::Result<()> {
        /// # let world = smd::Communicator::init()?;
        /// let groups = world.groups(&smd::GroupsConfig::new(2, 2))?;
        /// groups.mp().barrier()?;
        /// # Ok(())
        /// # }
        /// ```
        mp => Mp;

        /// The communicator over every rank the groups came from.
        ///
        /// ```no_run
        /// # fn main() -> smd::Result<()> {
        /// # let world = smd::Communicator::init()?;
        /// let groups = world.groups(&smd::GroupsConfig::new(1, 1))?;
        /// assert_eq!(groups.world().size(), world.size());
        /// # Ok(())
        /// # }
        /// ```
        world => World;
    }
}

impl Drop for Groups {
    fn drop(&mut self) {
        // SAFETY: the handle is owned and destroyed once; the group
        // communicators it owns are never dropped by Rust (ManuallyDrop),
        // and no `&Communicator` from them outlives `self`.
        unsafe { sys::smd_groups_destroy(self.raw.as_ptr()) };
    }
}

impl std::fmt::Debug for Groups {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        let mut d = f.debug_struct("Groups");
        for kind in GroupKind::ALL {
            d.field(&format!("{kind:?}"), &self.members(kind));
        }
        d.finish()
    }
}
