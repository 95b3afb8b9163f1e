//! [`InitOptions`]: explicit settings for forming the world.

use std::ffi::CString;
use std::time::Duration;

use smd_sys as sys;

use crate::error::{Error, Result, check, to_c_int};

/// Explicit settings for [`Communicator::init_with`](crate::Communicator::init_with)
/// (`smd_init_options_t`). Every setting left unset comes from the
/// environment, as with [`Communicator::init`](crate::Communicator::init).
///
/// A framework that launches its own processes sets rank, world size, store
/// address and port and a job token; a test may only shorten the timeout.
/// (An injected key-value store, `smd_store_ops_t`, is not offered in Rust
/// yet: it needs callbacks from C into Rust.)
///
/// ```
/// use std::time::Duration;
/// let options = smd::InitOptions::new()
///     .rank(0)
///     .world_size(2)
///     .store_addr("127.0.0.1")
///     .store_port(29500)
///     .job_token("my-job")
///     .timeout(Duration::from_secs(30))
///     .transport("shm");
/// ```
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct InitOptions {
    rank: Option<usize>,
    world_size: Option<usize>,
    store_addr: Option<String>,
    store_port: Option<u16>,
    job_token: Option<String>,
    timeout: Option<Duration>,
    transport: Option<String>,
    store_prefix: Option<String>,
}

/// Writes each setter: `name(arg: Type)` stores `Some(arg)` in the field of
/// the same name, `name(arg: Type) = value` stores `Some(value)`.
macro_rules! setters {
    (@value $arg:ident) => { $arg };
    (@value $arg:ident, $value:expr) => { $value };
    ($($(#[$attr:meta])* $name:ident($arg:ident: $ty:ty) $(= $value:expr)?;)*) => {$(
        $(#[$attr])*
        pub fn $name(mut self, $arg: $ty) -> InitOptions {
            self.$name = Some(setters!(@value $arg $(, $value)?));
            self
        }
    )*};
}

impl InitOptions {
    /// Nothing set: everything from the environment.
    ///
    /// ```
    /// assert_eq!(smd::InitOptions::new(), smd::InitOptions::default());
    /// ```
    pub fn new() -> InitOptions {
        InitOptions::default()
    }

    setters! {
        /// This process's rank (set it together with
        /// [`world_size`](InitOptions::world_size)).
        ///
        /// ```
        /// let options = smd::InitOptions::new().rank(3).world_size(8);
        /// ```
        rank(rank: usize);

        /// The number of ranks in the world.
        ///
        /// ```
        /// let options = smd::InitOptions::new().rank(0).world_size(1);
        /// ```
        world_size(world_size: usize);

        /// Host of the TCP store that rank 0 serves (default
        /// `SMD_MASTER_ADDR`, `MASTER_ADDR`, then 127.0.0.1).
        ///
        /// ```
        /// let options = smd::InitOptions::new().store_addr("node1");
        /// ```
        store_addr(addr: &str) = addr.to_string();

        /// Port of the TCP store (default `SMD_MASTER_PORT`, `MASTER_PORT`).
        ///
        /// ```
        /// let options = smd::InitOptions::new().store_port(29500);
        /// ```
        store_port(port: u16);

        /// The identity every rank presents to the store; ranks of other jobs
        /// are refused (default `SMD_JOB_TOKEN`, else the launcher's job id).
        ///
        /// ```
        /// let options = smd::InitOptions::new().job_token("run-2024-11-21");
        /// ```
        job_token(token: &str) = token.to_string();

        /// Deadline of every blocking step, rounded up to whole milliseconds
        /// (default `SMD_TIMEOUT`, 300 s). Zero is refused.
        ///
        /// ```
        /// let options = smd::InitOptions::new().timeout(std::time::Duration::from_secs(10));
        /// ```
        timeout(timeout: Duration);

        /// The transport: `"shm"`, `"auto"` or a plugin name (default
        /// `SMD_TRANSPORT`, `"auto"`).
        ///
        /// ```
        /// let options = smd::InitOptions::new().transport("shm");
        /// ```
        transport(transport: &str) = transport.to_string();

        /// A prefix for every key smd writes to the store, so that several
        /// worlds can share one store.
        ///
        /// ```
        /// let options = smd::InitOptions::new().store_prefix("world-b/");
        /// ```
        store_prefix(prefix: &str) = prefix.to_string();
    }

    /// The C struct, with the strings it points to.
    pub(crate) fn to_raw(&self) -> Result<RawInitOptions> {
        let mut raw = RawInitOptions {
            options: sys::smd_init_options_t::default(),
            _strings: Vec::new(),
        };
        // SAFETY: a valid, writable struct for the library to fill in.
        check(unsafe { sys::smd_init_options_init(&mut raw.options) })?;
        let o = &mut raw.options;
        if let Some(rank) = self.rank {
            o.rank = to_c_int(rank, "rank")?;
        }
        if let Some(size) = self.world_size {
            o.world_size = to_c_int(size, "world size")?;
        }
        if let Some(port) = self.store_port {
            o.store_port = i32::from(port);
        }
        if let Some(timeout) = self.timeout {
            if timeout.is_zero() {
                return Err(Error::invalid("init: a timeout of zero"));
            }
            let ms = timeout.as_nanos().div_ceil(1_000_000);
            o.timeout_ms = i64::try_from(ms).unwrap_or(i64::MAX);
        }
        let strings = [
            (&self.store_addr, &mut o.store_addr, "store address"),
            (&self.job_token, &mut o.job_token, "job token"),
            (&self.transport, &mut o.transport, "transport"),
            (&self.store_prefix, &mut o.store_prefix, "store prefix"),
        ];
        for (value, field, what) in strings {
            if let Some(value) = value {
                let c = CString::new(value.as_str())
                    .map_err(|_| Error::invalid(format!("init: the {what} contains a NUL byte")))?;
                // The CString's heap buffer does not move when it is pushed.
                *field = c.as_ptr();
                raw._strings.push(c);
            }
        }
        Ok(raw)
    }
}

/// An `smd_init_options_t` and the C strings its pointers refer to.
pub(crate) struct RawInitOptions {
    options: sys::smd_init_options_t,
    _strings: Vec<CString>,
}

impl RawInitOptions {
    pub(crate) fn as_ptr(&self) -> *const sys::smd_init_options_t {
        &self.options
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn unset_fields_keep_the_library_defaults() {
        let raw = InitOptions::new().to_raw().unwrap();
        let o = &raw.options;
        assert_eq!(
            o.struct_size,
            std::mem::size_of::<sys::smd_init_options_t>()
        );
        assert_eq!(o.version, sys::SMD_INIT_OPTIONS_VERSION);
        assert_eq!(
            (o.rank, o.world_size, o.store_port, o.timeout_ms),
            (-1, -1, -1, 0)
        );
        assert!(o.store_addr.is_null() && o.job_token.is_null() && o.store.is_null());
    }

    #[test]
    fn set_fields_reach_the_struct() {
        let raw = InitOptions::new()
            .rank(2)
            .world_size(4)
            .store_port(1234)
            .store_addr("host")
            .timeout(Duration::from_micros(1500))
            .to_raw()
            .unwrap();
        let o = &raw.options;
        assert_eq!(
            (o.rank, o.world_size, o.store_port, o.timeout_ms),
            (2, 4, 1234, 2)
        );
        // SAFETY: points into raw._strings, alive here.
        let addr = unsafe { std::ffi::CStr::from_ptr(o.store_addr) };
        assert_eq!(addr.to_str(), Ok("host"));
    }

    #[test]
    fn bad_values_are_refused_before_the_library_sees_them() {
        let nul = InitOptions::new().job_token("a\0b").to_raw().err().unwrap();
        assert!(nul.message().contains("NUL"), "{nul}");
        assert!(InitOptions::new().timeout(Duration::ZERO).to_raw().is_err());
        assert!(InitOptions::new().rank(usize::MAX).to_raw().is_err());
    }
}
