//! Errors: the library's result code and the message that explains it.

use std::ffi::CStr;
use std::fmt;

use smd_sys as sys;

/// A `Result` whose error is [`Error`].
pub type Result<T, E = Error> = std::result::Result<T, E>;

/// What kind of failure an [`Error`] is: the error codes of `smd_result_t`.
///
/// Every variant mirrors the `SMD_ERR_*` code of the same name; smd.h says
/// when each is returned.
///
/// ```
/// use smd::ErrorCode;
/// assert_eq!(ErrorCode::Timeout.name(), "SMD_ERR_TIMEOUT");
/// assert_eq!(ErrorCode::from_raw(smd::sys::smd_result_t::SMD_ERR_TIMEOUT), Some(ErrorCode::Timeout));
/// assert_eq!(ErrorCode::from_raw(smd::sys::smd_result_t::SMD_SUCCESS), None);
/// ```
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
#[non_exhaustive]
pub enum ErrorCode {
    /// `SMD_ERR_INVALID_ARGUMENT`: an argument is wrong (a slice of the
    /// wrong length, a rank out of range, a bad option).
    InvalidArgument,
    /// `SMD_ERR_INVALID_USAGE`: a call that is not allowed now (for example
    /// destroying a communicator that a `Groups` owns).
    InvalidUsage,
    /// `SMD_ERR_NO_MEMORY`.
    NoMemory,
    /// `SMD_ERR_TIMEOUT`: the deadline passed; the message names the ranks
    /// that were waited for.
    Timeout,
    /// `SMD_ERR_PEER_FAILURE`: a peer died, disconnected or failed; the
    /// message names it.
    PeerFailure,
    /// `SMD_ERR_ABORTED`: [`Communicator::abort`](crate::Communicator::abort)
    /// was called, here or on a peer.
    Aborted,
    /// `SMD_ERR_MISMATCH`: ranks disagree on a collective's arguments.
    Mismatch,
    /// `SMD_ERR_TRANSPORT`: the transport failed other than by a peer failure.
    Transport,
    /// `SMD_ERR_PLUGIN`: a transport plugin could not be found or loaded.
    Plugin,
    /// `SMD_ERR_NOT_SUPPORTED`: valid, but not possible in this build.
    NotSupported,
    /// `SMD_ERR_SYSTEM`: an operating-system call failed.
    System,
    /// `SMD_ERR_BOOTSTRAP`: forming the world failed.
    Bootstrap,
    /// `SMD_ERR_TRUNCATED`: a received message was larger than the buffer.
    Truncated,
    /// `SMD_ERR_INTERNAL`: a bug in smd.
    Internal,
    /// `SMD_ERR_REVOKED`: the communicator was revoked, here or by a peer.
    Revoked,
    /// A code this binding has no name for: one that a newer libsmd added
    /// (or `SMD_IN_PROGRESS` where an operation cannot be in progress).
    Unknown(i32),
}

impl ErrorCode {
    /// The error code of a raw result, or `None` for `SMD_SUCCESS`.
    ///
    /// ```
    /// use smd::{sys::smd_result_t, ErrorCode};
    /// assert_eq!(ErrorCode::from_raw(smd_result_t(99)), Some(ErrorCode::Unknown(99)));
    /// ```
    pub fn from_raw(raw: sys::smd_result_t) -> Option<ErrorCode> {
        use sys::smd_result_t as R;
        Some(match raw {
            R::SMD_SUCCESS => return None,
            R::SMD_ERR_INVALID_ARGUMENT => ErrorCode::InvalidArgument,
            R::SMD_ERR_INVALID_USAGE => ErrorCode::InvalidUsage,
            R::SMD_ERR_NO_MEMORY => ErrorCode::NoMemory,
            R::SMD_ERR_TIMEOUT => ErrorCode::Timeout,
            R::SMD_ERR_PEER_FAILURE => ErrorCode::PeerFailure,
            R::SMD_ERR_ABORTED => ErrorCode::Aborted,
            R::SMD_ERR_MISMATCH => ErrorCode::Mismatch,
            R::SMD_ERR_TRANSPORT => ErrorCode::Transport,
            R::SMD_ERR_PLUGIN => ErrorCode::Plugin,
            R::SMD_ERR_NOT_SUPPORTED => ErrorCode::NotSupported,
            R::SMD_ERR_SYSTEM => ErrorCode::System,
            R::SMD_ERR_BOOTSTRAP => ErrorCode::Bootstrap,
            R::SMD_ERR_TRUNCATED => ErrorCode::Truncated,
            R::SMD_ERR_INTERNAL => ErrorCode::Internal,
            R::SMD_ERR_REVOKED => ErrorCode::Revoked,
            R(other) => ErrorCode::Unknown(other),
        })
    }

    /// The raw `smd_result_t` value of this code.
    ///
    /// ```
    /// use smd::{sys::smd_result_t, ErrorCode};
    /// assert_eq!(ErrorCode::PeerFailure.raw(), smd_result_t::SMD_ERR_PEER_FAILURE);
    /// ```
    pub fn raw(self) -> sys::smd_result_t {
        use sys::smd_result_t as R;
        match self {
            ErrorCode::InvalidArgument => R::SMD_ERR_INVALID_ARGUMENT,
            ErrorCode::InvalidUsage => R::SMD_ERR_INVALID_USAGE,
            ErrorCode::NoMemory => R::SMD_ERR_NO_MEMORY,
            ErrorCode::Timeout => R::SMD_ERR_TIMEOUT,
            ErrorCode::PeerFailure => R::SMD_ERR_PEER_FAILURE,
            ErrorCode::Aborted => R::SMD_ERR_ABORTED,
            ErrorCode::Mismatch => R::SMD_ERR_MISMATCH,
            ErrorCode::Transport => R::SMD_ERR_TRANSPORT,
            ErrorCode::Plugin => R::SMD_ERR_PLUGIN,
            ErrorCode::NotSupported => R::SMD_ERR_NOT_SUPPORTED,
            ErrorCode::System => R::SMD_ERR_SYSTEM,
            ErrorCode::Bootstrap => R::SMD_ERR_BOOTSTRAP,
            ErrorCode::Truncated => R::SMD_ERR_TRUNCATED,
            ErrorCode::Internal => R::SMD_ERR_INTERNAL,
            ErrorCode::Revoked => R::SMD_ERR_REVOKED,
            ErrorCode::Unknown(raw) => R(raw),
        }
    }

    /// The library's name of the code (`smd_result_string()`), such as
    /// `"SMD_ERR_PEER_FAILURE"`.
    ///
    /// ```
    /// assert_eq!(smd::ErrorCode::Mismatch.name(), "SMD_ERR_MISMATCH");
    /// ```
    pub fn name(self) -> String {
        // SAFETY: smd_result_string accepts any value and returns a
        // NUL-terminated string, never NULL (smd.h); it is copied at once.
        let name = unsafe { CStr::from_ptr(sys::smd_result_string(self.raw())) };
        name.to_string_lossy().into_owned()
    }
}

impl fmt::Display for ErrorCode {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(&self.name())
    }
}

/// A failed smd call: its [`ErrorCode`] and the library's explanation.
///
/// The message is `smd_last_error()`, read on the failing thread right after
/// the failing call, so it names the call, the rank and the peer involved.
/// Errors that this crate detects before calling the library (a slice of
/// the wrong length, a rank that does not fit) have code
/// [`ErrorCode::InvalidArgument`] and a message naming the method.
///
/// ```no_run
/// use smd::{Communicator, ErrorCode, Op};
/// # fn main() -> smd::Result<()> {
/// let world = Communicator::init()?;
/// let mut grads = vec![0.0f32; 1024];
/// match world.all_reduce(&mut grads, Op::Sum) {
///     Ok(()) => {}
///     Err(e) if e.code() == ErrorCode::PeerFailure => eprintln!("a rank died: {}", e.message()),
///     Err(e) => return Err(e),
/// }
/// # Ok(())
/// # }
/// ```
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Error {
    code: ErrorCode,
    message: String,
}

impl Error {
    /// An error with the given code and message.
    ///
    /// ```
    /// let e = smd::Error::new(smd::ErrorCode::Timeout, "waited too long");
    /// assert_eq!(e.to_string(), "SMD_ERR_TIMEOUT: waited too long");
    /// ```
    pub fn new(code: ErrorCode, message: impl Into<String>) -> Error {
        Error {
            code,
            message: message.into(),
        }
    }

    /// What kind of failure this is.
    ///
    /// ```
    /// let e = smd::Error::new(smd::ErrorCode::Aborted, "");
    /// assert_eq!(e.code(), smd::ErrorCode::Aborted);
    /// ```
    pub fn code(&self) -> ErrorCode {
        self.code
    }

    /// What went wrong, in the library's words.
    ///
    /// ```
    /// let e = smd::Error::new(smd::ErrorCode::Mismatch, "count 4 vs 8");
    /// assert_eq!(e.message(), "count 4 vs 8");
    /// ```
    pub fn message(&self) -> &str {
        &self.message
    }

    /// The error of a call that failed with `code`, explained by the
    /// thread's last-error text. Must run right after that call.
    pub(crate) fn last(code: ErrorCode) -> Error {
        // SAFETY: smd_last_error returns this thread's NUL-terminated
        // message (valid until the next smd call here); it is copied at once.
        let text = unsafe {
            let p = sys::smd_last_error();
            if p.is_null() {
                String::new()
            } else {
                CStr::from_ptr(p).to_string_lossy().into_owned()
            }
        };
        Error::new(code, text)
    }

    /// An argument error found before calling the library.
    pub(crate) fn invalid(message: impl Into<String>) -> Error {
        Error::new(ErrorCode::InvalidArgument, message)
    }
}

impl fmt::Display for Error {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        if self.message.is_empty() {
            write!(f, "{}", self.code)
        } else {
            write!(f, "{}: {}", self.code, self.message)
        }
    }
}

impl std::error::Error for Error {}

/// `Ok(())` for `SMD_SUCCESS`, else the error with the thread's last-error
/// text. Call it directly on the result of the C call.
pub(crate) fn check(rc: sys::smd_result_t) -> Result<()> {
    match ErrorCode::from_raw(rc) {
        None => Ok(()),
        Some(code) => Err(Error::last(code)),
    }
}

/// A count or rank from the library as `usize` (they are never negative).
pub(crate) fn to_usize(value: std::os::raw::c_int, what: &str) -> Result<usize> {
    usize::try_from(value).map_err(|_| {
        Error::new(
            ErrorCode::Internal,
            format!("libsmd returned {what} = {value}"),
        )
    })
}

/// A rank, size or tag for the library, which takes C `int`s.
pub(crate) fn to_c_int(value: usize, what: &str) -> Result<std::os::raw::c_int> {
    std::os::raw::c_int::try_from(value)
        .map_err(|_| Error::invalid(format!("{what} {value} does not fit in a C int")))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn every_code_round_trips() {
        for raw in 0..20i32 {
            let raw = sys::smd_result_t(raw);
            match ErrorCode::from_raw(raw) {
                None => assert_eq!(raw, sys::smd_result_t::SMD_SUCCESS),
                Some(code) => assert_eq!(code.raw(), raw),
            }
        }
    }

    #[test]
    fn names_come_from_the_library() {
        assert_eq!(
            ErrorCode::InvalidArgument.name(),
            "SMD_ERR_INVALID_ARGUMENT"
        );
        assert_eq!(ErrorCode::Internal.name(), "SMD_ERR_INTERNAL");
        assert_eq!(ErrorCode::Unknown(1).name(), "SMD_IN_PROGRESS");
    }

    #[test]
    fn last_error_is_read_after_a_failure() {
        // SAFETY: a NULL size pointer is an argument error, not a crash.
        let rc = unsafe {
            sys::smd_datatype_size(sys::smd_datatype_t::SMD_FLOAT32, std::ptr::null_mut())
        };
        let e = check(rc).unwrap_err();
        assert_eq!(e.code(), ErrorCode::InvalidArgument);
        assert!(e.message().contains("smd_datatype_size"), "{e}");
    }

    #[test]
    fn c_int_conversions_are_checked() {
        assert_eq!(to_c_int(7, "rank").unwrap(), 7);
        assert_eq!(
            to_c_int(usize::MAX, "rank").unwrap_err().code(),
            ErrorCode::InvalidArgument
        );
        assert_eq!(
            to_usize(-1, "size").unwrap_err().code(),
            ErrorCode::Internal
        );
    }
}
