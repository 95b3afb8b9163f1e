//! Where ranks run: [`RankInfo`] and [`version`].

use std::ffi::CStr;
use std::os::raw::{c_char, c_int};

use smd_sys as sys;

use crate::comm::Communicator;
use crate::error::{Result, check, to_c_int, to_usize};

/// Where one rank of a communicator runs, as it reported when the world
/// formed (`smd_rank_info_t`).
///
/// ```no_run
/// # fn main() -> smd::Result<()> {
/// let world = smd::Communicator::init()?;
/// for r in 0..world.size() {
///     let info = world.rank_info(r)?;
///     println!("rank {r}: {} pid {} cpus {}", info.host, info.pid, info.cpuset);
/// }
/// # Ok(())
/// # }
/// ```
#[derive(Debug, Clone, PartialEq, Eq)]
#[non_exhaustive]
pub struct RankInfo {
    /// Rank in the communicator.
    pub rank: usize,
    /// Rank in the world.
    pub world_rank: usize,
    /// Index of its node among the communicator's nodes.
    pub node_index: usize,
    /// Rank among the communicator's ranks on that node.
    pub local_rank: usize,
    /// Number of the communicator's ranks on that node.
    pub local_size: usize,
    /// Process id.
    pub pid: u32,
    /// NUMA node of its CPUs; `None` when unknown (no hwloc) or spread
    /// over several.
    pub numa_node: Option<usize>,
    /// Number of CPUs it may run on.
    pub cpus: usize,
    /// Host name (truncated to 63 bytes).
    pub host: String,
    /// The CPUs it may run on, such as `"0-3,8"`; empty when unknown.
    pub cpuset: String,
}

fn text(chars: &[c_char]) -> String {
    let bytes: Vec<u8> = chars.iter().map(|&c| c as u8).collect();
    match CStr::from_bytes_until_nul(&bytes) {
        Ok(s) => s.to_string_lossy().into_owned(),
        Err(_) => String::from_utf8_lossy(&bytes).into_owned(),
    }
}

impl Communicator {
    /// Where rank `rank` of this communicator runs. Local: no communication.
    ///
    /// ```no_run
    /// # fn main() -> smd::Result<()> {
    /// let world = smd::Communicator::init()?;
    /// let me = world.rank_info(world.rank())?;
    /// assert_eq!(me.pid, std::process::id());
    /// # Ok(())
    /// # }
    /// ```
    pub fn rank_info(&self, rank: usize) -> Result<RankInfo> {
        let c_rank = to_c_int(rank, "rank_info: rank")?;
        let mut info = sys::smd_rank_info_t {
            struct_size: std::mem::size_of::<sys::smd_rank_info_t>(),
            version: sys::SMD_RANK_INFO_VERSION,
            ..Default::default()
        };
        // SAFETY: live communicator; `info` is a valid struct with its size
        // and version set.
        check(unsafe { sys::smd_comm_rank_info(self.as_raw(), c_rank, &mut info) })?;
        Ok(RankInfo {
            rank: to_usize(info.rank, "rank")?,
            world_rank: to_usize(info.world_rank, "world rank")?,
            node_index: to_usize(info.node_index, "node index")?,
            local_rank: to_usize(info.local_rank, "local rank")?,
            local_size: to_usize(info.local_size, "local size")?,
            pid: u32::try_from(info.pid).unwrap_or(0),
            numa_node: usize::try_from(info.numa_node).ok(),
            cpus: to_usize(info.cpus, "cpus")?,
            host: text(&info.host),
            cpuset: text(&info.cpuset),
        })
    }
}

/// A version of smd: major, minor, patch.
///
/// ```
/// let v = smd::Version { major: 0, minor: 1, patch: 0 };
/// assert_eq!(v.to_string(), "0.1.0");
/// ```
#[derive(Debug, Clone, Copy, PartialEq, Eq, PartialOrd, Ord, Hash)]
pub struct Version {
    /// Incremented by incompatible changes (never, for the C ABI).
    pub major: u32,
    /// Incremented by additions.
    pub minor: u32,
    /// Incremented by fixes.
    pub patch: u32,
}

impl std::fmt::Display for Version {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        write!(f, "{}.{}.{}", self.major, self.minor, self.patch)
    }
}

/// The version of smd.h these bindings were generated from.
///
/// ```
/// assert_eq!(smd::HEADER_VERSION.major, smd::sys::SMD_VERSION_MAJOR);
/// ```
pub const HEADER_VERSION: Version = Version {
    major: sys::SMD_VERSION_MAJOR,
    minor: sys::SMD_VERSION_MINOR,
    patch: sys::SMD_VERSION_PATCH,
};

/// The version of the libsmd loaded at run time (`smd_get_version`), which
/// may be newer than [`HEADER_VERSION`].
///
/// ```
/// let v = smd::version().unwrap();
/// assert!(v >= smd::HEADER_VERSION);
/// ```
pub fn version() -> Result<Version> {
    let (mut major, mut minor, mut patch): (c_int, c_int, c_int) = (0, 0, 0);
    // SAFETY: valid out-pointers.
    check(unsafe { sys::smd_get_version(&mut major, &mut minor, &mut patch) })?;
    let part = |v: c_int| to_usize(v, "version").map(|v| v as u32);
    Ok(Version {
        major: part(major)?,
        minor: part(minor)?,
        patch: part(patch)?,
    })
}
