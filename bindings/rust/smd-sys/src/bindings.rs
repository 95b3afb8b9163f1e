pub const SMD_VERSION_MAJOR: u32 = 0;
pub const SMD_VERSION_MINOR: u32 = 1;
pub const SMD_VERSION_PATCH: u32 = 0;
pub const SMD_STORE_OPS_VERSION: u32 = 1;
pub const SMD_INIT_OPTIONS_VERSION: u32 = 1;
pub const SMD_UNDEFINED: i32 = -1;
pub const SMD_STATS_MAX_TRANSPORTS: u32 = 4;
pub const SMD_TAG_MAX: u32 = 4194303;
pub const SMD_GROUPS_CONFIG_VERSION: u32 = 2;
pub const SMD_RANK_INFO_VERSION: u32 = 1;
pub const SMD_ANY_SOURCE: i32 = -2;
pub const SMD_ANY_TAG: i32 = -1;
pub const SMD_STATUS_VERSION: u32 = 1;
pub const SMD_SHARDED_CONFIG_VERSION: u32 = 1;
pub const SMD_SHARDED_STATS_VERSION: u32 = 1;
impl smd_result {
    pub const SMD_SUCCESS: smd_result = smd_result(0);
}
impl smd_result {
    pub const SMD_IN_PROGRESS: smd_result = smd_result(1);
}
impl smd_result {
    pub const SMD_ERR_INVALID_ARGUMENT: smd_result = smd_result(2);
}
impl smd_result {
    pub const SMD_ERR_INVALID_USAGE: smd_result = smd_result(3);
}
impl smd_result {
    pub const SMD_ERR_NO_MEMORY: smd_result = smd_result(4);
}
impl smd_result {
    pub const SMD_ERR_TIMEOUT: smd_result = smd_result(5);
}
impl smd_result {
    pub const SMD_ERR_PEER_FAILURE: smd_result = smd_result(6);
}
impl smd_result {
    pub const SMD_ERR_ABORTED: smd_result = smd_result(7);
}
impl smd_result {
    pub const SMD_ERR_MISMATCH: smd_result = smd_result(8);
}
impl smd_result {
    pub const SMD_ERR_TRANSPORT: smd_result = smd_result(9);
}
impl smd_result {
    pub const SMD_ERR_PLUGIN: smd_result = smd_result(10);
}
impl smd_result {
    pub const SMD_ERR_NOT_SUPPORTED: smd_result = smd_result(11);
}
impl smd_result {
    pub const SMD_ERR_SYSTEM: smd_result = smd_result(12);
}
impl smd_result {
    pub const SMD_ERR_BOOTSTRAP: smd_result = smd_result(13);
}
impl smd_result {
    pub const SMD_ERR_TRUNCATED: smd_result = smd_result(14);
}
impl smd_result {
    pub const SMD_ERR_INTERNAL: smd_result = smd_result(15);
}
impl smd_result {
    pub const SMD_ERR_REVOKED: smd_result = smd_result(16);
}
impl smd_result {
    pub const SMD_RESULT_RANGE_MIN_: smd_result = smd_result(-2147483648);
}
impl smd_result {
    pub const SMD_RESULT_RANGE_MAX_: smd_result = smd_result(2147483647);
}
#[repr(transparent)]
#[derive(Debug, Copy, Clone, Hash, PartialEq, Eq)]
pub struct smd_result(pub ::std::os::raw::c_int);
pub use self::smd_result as smd_result_t;
extern "C" {
    pub fn smd_result_string(result: smd_result_t) -> *const ::std::os::raw::c_char;
}
extern "C" {
    pub fn smd_last_error() -> *const ::std::os::raw::c_char;
}
extern "C" {
    pub fn smd_get_version(
        major: *mut ::std::os::raw::c_int,
        minor: *mut ::std::os::raw::c_int,
        patch: *mut ::std::os::raw::c_int,
    ) -> smd_result_t;
}
impl smd_datatype {
    pub const SMD_INT8: smd_datatype = smd_datatype(0);
}
impl smd_datatype {
    pub const SMD_UINT8: smd_datatype = smd_datatype(1);
}
impl smd_datatype {
    pub const SMD_INT32: smd_datatype = smd_datatype(2);
}
impl smd_datatype {
    pub const SMD_UINT32: smd_datatype = smd_datatype(3);
}
impl smd_datatype {
    pub const SMD_INT64: smd_datatype = smd_datatype(4);
}
impl smd_datatype {
    pub const SMD_UINT64: smd_datatype = smd_datatype(5);
}
impl smd_datatype {
    pub const SMD_FLOAT16: smd_datatype = smd_datatype(6);
}
impl smd_datatype {
    pub const SMD_BFLOAT16: smd_datatype = smd_datatype(7);
}
impl smd_datatype {
    pub const SMD_FLOAT32: smd_datatype = smd_datatype(8);
}
impl smd_datatype {
    pub const SMD_FLOAT64: smd_datatype = smd_datatype(9);
}
impl smd_datatype {
    pub const SMD_DATATYPE_COUNT: smd_datatype = smd_datatype(10);
}
impl smd_datatype {
    pub const SMD_DATATYPE_RANGE_MIN_: smd_datatype = smd_datatype(-2147483648);
}
impl smd_datatype {
    pub const SMD_DATATYPE_RANGE_MAX_: smd_datatype = smd_datatype(2147483647);
}
#[repr(transparent)]
#[derive(Debug, Copy, Clone, Hash, PartialEq, Eq)]
pub struct smd_datatype(pub ::std::os::raw::c_int);
pub use self::smd_datatype as smd_datatype_t;
impl smd_op {
    pub const SMD_SUM: smd_op = smd_op(0);
}
impl smd_op {
    pub const SMD_PROD: smd_op = smd_op(1);
}
impl smd_op {
    pub const SMD_MIN: smd_op = smd_op(2);
}
impl smd_op {
    pub const SMD_MAX: smd_op = smd_op(3);
}
impl smd_op {
    pub const SMD_AVG: smd_op = smd_op(4);
}
impl smd_op {
    pub const SMD_OP_COUNT: smd_op = smd_op(5);
}
impl smd_op {
    pub const SMD_OP_RANGE_MIN_: smd_op = smd_op(-2147483648);
}
impl smd_op {
    pub const SMD_OP_RANGE_MAX_: smd_op = smd_op(2147483647);
}
#[repr(transparent)]
#[derive(Debug, Copy, Clone, Hash, PartialEq, Eq)]
pub struct smd_op(pub ::std::os::raw::c_int);
pub use self::smd_op as smd_op_t;
extern "C" {
    pub fn smd_datatype_size(datatype: smd_datatype_t, size: *mut usize) -> smd_result_t;
}
#[repr(C)]
#[derive(Debug, Copy, Clone)]
pub struct smd_comm {
    _unused: [u8; 0],
}
pub type smd_comm_t = smd_comm;
#[repr(C)]
#[derive(Debug, Copy, Clone)]
pub struct smd_request {
    _unused: [u8; 0],
}
pub type smd_request_t = smd_request;
pub type smd_stream_t = *mut ::std::os::raw::c_void;
#[repr(C)]
pub struct smd_store_ops {
    pub struct_size: usize,
    pub version: u32,
    pub user: *mut ::std::os::raw::c_void,
    pub set: ::std::option::Option<
        unsafe extern "C" fn(
            user: *mut ::std::os::raw::c_void,
            key: *const ::std::os::raw::c_char,
            value: *const ::std::os::raw::c_void,
            size: usize,
            error: *mut ::std::os::raw::c_char,
            error_size: usize,
        ) -> smd_result_t,
    >,
    pub get: ::std::option::Option<
        unsafe extern "C" fn(
            user: *mut ::std::os::raw::c_void,
            key: *const ::std::os::raw::c_char,
            timeout_ms: i64,
            value: *mut *mut ::std::os::raw::c_void,
            size: *mut usize,
            error: *mut ::std::os::raw::c_char,
            error_size: usize,
        ) -> smd_result_t,
    >,
    pub add: ::std::option::Option<
        unsafe extern "C" fn(
            user: *mut ::std::os::raw::c_void,
            key: *const ::std::os::raw::c_char,
            delta: i64,
            new_value: *mut i64,
            error: *mut ::std::os::raw::c_char,
            error_size: usize,
        ) -> smd_result_t,
    >,
}
#[test]
fn bindgen_test_layout_smd_store_ops() {
    assert_eq!(
        ::std::mem::size_of::<smd_store_ops>(),
        48usize,
        concat!("Size of: ", stringify!(smd_store_ops))
    );
    assert_eq!(
        ::std::mem::align_of::<smd_store_ops>(),
        8usize,
        concat!("Alignment of ", stringify!(smd_store_ops))
    );
    fn test_field_struct_size() {
        assert_eq!(
            unsafe {
                let uninit = ::std::mem::MaybeUninit::<smd_store_ops>::uninit();
                let ptr = uninit.as_ptr();
                ::std::ptr::addr_of!((*ptr).struct_size) as usize - ptr as usize
            },
            0usize,
            concat!(
                "Offset of field: ",
                stringify!(smd_store_ops),
                "::",
                stringify!(struct_size)
            )
        );
    }
    test_field_struct_size();
    fn test_field_version() {
        assert_eq!(
            unsafe {
                let uninit = ::std::mem::MaybeUninit::<smd_store_ops>::uninit();
                let ptr = uninit.as_ptr();
                ::std::ptr::addr_of!((*ptr).version) as usize - ptr as usize
            },
            8usize,
            concat!(
                "Offset of field: ",
                stringify!(smd_store_ops),
                "::",
                stringify!(version)
            )
        );
    }
    test_field_version();
    fn test_field_user() {
        assert_eq!(
            unsafe {
                let uninit = ::std::mem::MaybeUninit::<smd_store_ops>::uninit();
                let ptr = uninit.as_ptr();
                ::std::ptr::addr_of!((*ptr).user) as usize - ptr as usize
            },
            16usize,
            concat!(
                "Offset of field: ",
                stringify!(smd_store_ops),
                "::",
                stringify!(user)
            )
        );
    }
    test_field_user();
    fn test_field_set() {
        assert_eq!(
            unsafe {
                let uninit = ::std::mem::MaybeUninit::<smd_store_ops>::uninit();
                let ptr = uninit.as_ptr();
                ::std::ptr::addr_of!((*ptr).set) as usize - ptr as usize
            },
            24usize,
            concat!(
                "Offset of field: ",
                stringify!(smd_store_ops),
                "::",
                stringify!(set)
            )
        );
    }
    test_field_set();
    fn test_field_get() {
        assert_eq!(
            unsafe {
                let uninit = ::std::mem::MaybeUninit::<smd_store_ops>::uninit();
                let ptr = uninit.as_ptr();
                ::std::ptr::addr_of!((*ptr).get) as usize - ptr as usize
            },
            32usize,
            concat!(
                "Offset of field: ",
                stringify!(smd_store_ops),
                "::",
                stringify!(get)
            )
        );
    }
    test_field_get();
    fn test_field_add() {
        assert_eq!(
            unsafe {
                let uninit = ::std::mem::MaybeUninit::<smd_store_ops>::uninit();
                let ptr = uninit.as_ptr();
                ::std::ptr::addr_of!((*ptr).add) as usize - ptr as usize
            },
            40usize,
            concat!(
                "Offset of field: ",
                stringify!(smd_store_ops),
                "::",
                stringify!(add)
            )
        );
    }
    test_field_add();
}
impl Default for smd_store_ops {
    fn default() -> Self {
        let mut s = ::std::mem::MaybeUninit::<Self>::uninit();
        unsafe {
            ::std::ptr::write_bytes(s.as_mut_ptr(), 0, 1);
            s.assume_init()
        }
    }
}
pub type smd_store_ops_t = smd_store_ops;
#[repr(C)]
pub struct smd_init_options {
    pub struct_size: usize,
    pub version: u32,
    pub rank: i32,
    pub world_size: i32,
    pub store_addr: *const ::std::os::raw::c_char,
    pub store_port: i32,
    pub job_token: *const ::std::os::raw::c_char,
    pub timeout_ms: i64,
    pub transport: *const ::std::os::raw::c_char,
    pub store: *const smd_store_ops_t,
    pub store_prefix: *const ::std::os::raw::c_char,
}
#[test]
fn bindgen_test_layout_smd_init_options() {
    assert_eq!(
        ::std::mem::size_of::<smd_init_options>(),
        80usize,
        concat!("Size of: ", stringify!(smd_init_options))
    );
    assert_eq!(
        ::std::mem::align_of::<smd_init_options>(),
        8usize,
        concat!("Alignment of ", stringify!(smd_init_options))
    );
    fn test_field_struct_size() {
        assert_eq!(
            unsafe {
                let uninit = ::std::mem::MaybeUninit::<smd_init_options>::uninit();
                let ptr = uninit.as_ptr();
                ::std::ptr::addr_of!((*ptr).struct_size) as usize - ptr as usize
            },
            0usize,
            concat!(
                "Offset of field: ",
                stringify!(smd_init_options),
                "::",
                stringify!(struct_size)
            )
        );
    }
    test_field_struct_size();
    fn test_field_version() {
        assert_eq!(
            unsafe {
                let uninit = ::std::mem::MaybeUninit::<smd_init_options>::uninit();
                let ptr = uninit.as_ptr();
                ::std::ptr::addr_of!((*ptr).version) as usize - ptr as usize
            },
            8usize,
            concat!(
                "Offset of field: ",
                stringify!(smd_init_options),
                "::",
                stringify!(version)
            )
        );
    }
    test_field_version();
    fn test_field_rank() {
        assert_eq!(
            unsafe {
                let uninit = ::std::mem::MaybeUninit::<smd_init_options>::uninit();
                let ptr = uninit.as_ptr();
                ::std::ptr::addr_of!((*ptr).rank) as usize - ptr as usize
            },
            12usize,
            concat!(
                "Offset of field: ",
                stringify!(smd_init_options),
                "::",
                stringify!(rank)
            )
        );
    }
    test_field_rank();
    fn test_field_world_size() {
        assert_eq!(
            unsafe {
                let uninit = ::std::mem::MaybeUninit::<smd_init_options>::uninit();
                let ptr = uninit.as_ptr();
                ::std::ptr::addr_of!((*ptr).world_size) as usize - ptr as usize
            },
            16usize,
            concat!(
                "Offset of field: ",
                stringify!(smd_init_options),
                "::",
                stringify!(world_size)
            )
        );
    }
    test_field_world_size();
    fn test_field_store_addr() {
        assert_eq!(
            unsafe {
                let uninit = ::std::mem::MaybeUninit::<smd_init_options>::uninit();
                let ptr = uninit.as_ptr();
                ::std::ptr::addr_of!((*ptr).store_addr) as usize - ptr as usize
            },
            24usize,
            concat!(
                "Offset of field: ",
                stringify!(smd_init_options),
                "::",
                stringify!(store_addr)
            )
        );
    }
    test_field_store_addr();
    fn test_field_store_port() {
        assert_eq!(
            unsafe {
                let uninit = ::std::mem::MaybeUninit::<smd_init_options>::uninit();
                let ptr = uninit.as_ptr();
                ::std::ptr::addr_of!((*ptr).store_port) as usize - ptr as usize
            },
            32usize,
            concat!(
                "Offset of field: ",
                stringify!(smd_init_options),
                "::",
                stringify!(store_port)
            )
        );
    }
    test_field_store_port();
    fn test_field_job_token() {
        assert_eq!(
            unsafe {
                let uninit = ::std::mem::MaybeUninit::<smd_init_options>::uninit();
                let ptr = uninit.as_ptr();
                ::std::ptr::addr_of!((*ptr).job_token) as usize - ptr as usize
            },
            40usize,
            concat!(
                "Offset of field: ",
                stringify!(smd_init_options),
                "::",
                stringify!(job_token)
            )
        );
    }
    test_field_job_token();
    fn test_field_timeout_ms() {
        assert_eq!(
            unsafe {
                let uninit = ::std::mem::MaybeUninit::<smd_init_options>::uninit();
                let ptr = uninit.as_ptr();
                ::std::ptr::addr_of!((*ptr).timeout_ms) as usize - ptr as usize
            },
            48usize,
            concat!(
                "Offset of field: ",
                stringify!(smd_init_options),
                "::",
                stringify!(timeout_ms)
            )
        );
    }
    test_field_timeout_ms();
    fn test_field_transport() {
        assert_eq!(
            unsafe {
                let uninit = ::std::mem::MaybeUninit::<smd_init_options>::uninit();
                let ptr = uninit.as_ptr();
                ::std::ptr::addr_of!((*ptr).transport) as usize - ptr as usize
            },
            56usize,
            concat!(
                "Offset of field: ",
                stringify!(smd_init_options),
                "::",
                stringify!(transport)
            )
        );
    }
    test_field_transport();
    fn test_field_store() {
        assert_eq!(
            unsafe {
                let uninit = ::std::mem::MaybeUninit::<smd_init_options>::uninit();
                let ptr = uninit.as_ptr();
                ::std::ptr::addr_of!((*ptr).store) as usize - ptr as usize
            },
            64usize,
            concat!(
                "Offset of field: ",
                stringify!(smd_init_options),
                "::",
                stringify!(store)
            )
        );
    }
    test_field_store();
    fn test_field_store_prefix() {
        assert_eq!(
            unsafe {
                let uninit = ::std::mem::MaybeUninit::<smd_init_options>::uninit();
                let ptr = uninit.as_ptr();
                ::std::ptr::addr_of!((*ptr).store_prefix) as usize - ptr as usize
            },
            72usize,
            concat!(
                "Offset of field: ",
                stringify!(smd_init_options),
                "::",
                stringify!(store_prefix)
            )
        );
    }
    test_field_store_prefix();
}
impl Default for smd_init_options {
    fn default() -> Self {
        let mut s = ::std::mem::MaybeUninit::<Self>::uninit();
        unsafe {
            ::std::ptr::write_bytes(s.as_mut_ptr(), 0, 1);
            s.assume_init()
        }
    }
}
pub type smd_init_options_t = smd_init_options;
extern "C" {
    pub fn smd_init_options_init(options: *mut smd_init_options_t) -> smd_result_t;
}
extern "C" {
    pub fn smd_comm_init(
        options: *const smd_init_options_t,
        world: *mut *mut smd_comm_t,
    ) -> smd_result_t;
}
extern "C" {
    pub fn smd_comm_split(
        comm: *mut smd_comm_t,
        color: ::std::os::raw::c_int,
        key: ::std::os::raw::c_int,
        newcomm: *mut *mut smd_comm_t,
    ) -> smd_result_t;
}
extern "C" {
    pub fn smd_comm_dup(comm: *mut smd_comm_t, newcomm: *mut *mut smd_comm_t) -> smd_result_t;
}
extern "C" {
    pub fn smd_comm_create_group(
        comm: *mut smd_comm_t,
        ranks: *const ::std::os::raw::c_int,
        nranks: ::std::os::raw::c_int,
        newcomm: *mut *mut smd_comm_t,
    ) -> smd_result_t;
}
extern "C" {
    pub fn smd_comm_destroy(comm: *mut smd_comm_t) -> smd_result_t;
}
extern "C" {
    pub fn smd_comm_abort(comm: *mut smd_comm_t) -> smd_result_t;
}
extern "C" {
    pub fn smd_comm_get_async_error(
        comm: *mut smd_comm_t,
        error: *mut smd_result_t,
    ) -> smd_result_t;
}
#[repr(C)]
pub struct smd_transport_stats {
    pub name: [::std::os::raw::c_char; 16usize],
    pub bytes_sent: u64,
    pub bytes_received: u64,
}
#[test]
fn bindgen_test_layout_smd_transport_stats() {
    assert_eq!(
        ::std::mem::size_of::<smd_transport_stats>(),
        32usize,
        concat!("Size of: ", stringify!(smd_transport_stats))
    );
    assert_eq!(
        ::std::mem::align_of::<smd_transport_stats>(),
        8usize,
        concat!("Alignment of ", stringify!(smd_transport_stats))
    );
    fn test_field_name() {
        assert_eq!(
            unsafe {
                let uninit = ::std::mem::MaybeUninit::<smd_transport_stats>::uninit();
                let ptr = uninit.as_ptr();
                ::std::ptr::addr_of!((*ptr).name) as usize - ptr as usize
            },
            0usize,
            concat!(
                "Offset of field: ",
                stringify!(smd_transport_stats),
                "::",
                stringify!(name)
            )
        );
    }
    test_field_name();
    fn test_field_bytes_sent() {
        assert_eq!(
            unsafe {
                let uninit = ::std::mem::MaybeUninit::<smd_transport_stats>::uninit();
                let ptr = uninit.as_ptr();
                ::std::ptr::addr_of!((*ptr).bytes_sent) as usize - ptr as usize
            },
            16usize,
            concat!(
                "Offset of field: ",
                stringify!(smd_transport_stats),
                "::",
                stringify!(bytes_sent)
            )
        );
    }
    test_field_bytes_sent();
    fn test_field_bytes_received() {
        assert_eq!(
            unsafe {
                let uninit = ::std::mem::MaybeUninit::<smd_transport_stats>::uninit();
                let ptr = uninit.as_ptr();
                ::std::ptr::addr_of!((*ptr).bytes_received) as usize - ptr as usize
            },
            24usize,
            concat!(
                "Offset of field: ",
                stringify!(smd_transport_stats),
                "::",
                stringify!(bytes_received)
            )
        );
    }
    test_field_bytes_received();
}
impl Default for smd_transport_stats {
    fn default() -> Self {
        let mut s = ::std::mem::MaybeUninit::<Self>::uninit();
        unsafe {
            ::std::ptr::write_bytes(s.as_mut_ptr(), 0, 1);
            s.assume_init()
        }
    }
}
pub type smd_transport_stats_t = smd_transport_stats;
#[repr(C)]
pub struct smd_comm_stats {
    pub struct_size: usize,
    pub collectives: u64,
    pub inter_node_bytes_sent: u64,
    pub inter_node_bytes_received: u64,
    pub intra_node_bytes_sent: u64,
    pub intra_node_bytes_received: u64,
    pub last_algorithm: [::std::os::raw::c_char; 32usize],
    pub last_predicted_us: f64,
    pub transport_count: ::std::os::raw::c_int,
    pub transports: [smd_transport_stats_t; 4usize],
}
#[test]
fn bindgen_test_layout_smd_comm_stats() {
    assert_eq!(
        ::std::mem::size_of::<smd_comm_stats>(),
        224usize,
        concat!("Size of: ", stringify!(smd_comm_stats))
    );
    assert_eq!(
        ::std::mem::align_of::<smd_comm_stats>(),
        8usize,
        concat!("Alignment of ", stringify!(smd_comm_stats))
    );
    fn test_field_struct_size() {
        assert_eq!(
            unsafe {
                let uninit = ::std::mem::MaybeUninit::<smd_comm_stats>::uninit();
                let ptr = uninit.as_ptr();
                ::std::ptr::addr_of!((*ptr).struct_size) as usize - ptr as usize
            },
            0usize,
            concat!(
                "Offset of field: ",
                stringify!(smd_comm_stats),
                "::",
                stringify!(struct_size)
            )
        );
    }
    test_field_struct_size();
    fn test_field_collectives() {
        assert_eq!(
            unsafe {
                let uninit = ::std::mem::MaybeUninit::<smd_comm_stats>::uninit();
                let ptr = uninit.as_ptr();
                ::std::ptr::addr_of!((*ptr).collectives) as usize - ptr as usize
            },
            8usize,
            concat!(
                "Offset of field: ",
                stringify!(smd_comm_stats),
                "::",
                stringify!(collectives)
            )
        );
    }
    test_field_collectives();
    fn test_field_inter_node_bytes_sent() {
        assert_eq!(
            unsafe {
                let uninit = ::std::mem::MaybeUninit::<smd_comm_stats>::uninit();
                let ptr = uninit.as_ptr();
                ::std::ptr::addr_of!((*ptr).inter_node_bytes_sent) as usize - ptr as usize
            },
            16usize,
            concat!(
                "Offset of field: ",
                stringify!(smd_comm_stats),
                "::",
                stringify!(inter_node_bytes_sent)
            )
        );
    }
    test_field_inter_node_bytes_sent();
    fn test_field_inter_node_bytes_received() {
        assert_eq!(
            unsafe {
                let uninit = ::std::mem::MaybeUninit::<smd_comm_stats>::uninit();
                let ptr = uninit.as_ptr();
                ::std::ptr::addr_of!((*ptr).inter_node_bytes_received) as usize - ptr as usize
            },
            24usize,
            concat!(
                "Offset of field: ",
                stringify!(smd_comm_stats),
                "::",
                stringify!(inter_node_bytes_received)
            )
        );
    }
    test_field_inter_node_bytes_received();
    fn test_field_intra_node_bytes_sent() {
        assert_eq!(
            unsafe {
                let uninit = ::std::mem::MaybeUninit::<smd_comm_stats>::uninit();
                let ptr = uninit.as_ptr();
                ::std::ptr::addr_of!((*ptr).intra_node_bytes_sent) as usize - ptr as usize
            },
            32usize,
            concat!(
                "Offset of field: ",
                stringify!(smd_comm_stats),
                "::",
                stringify!(intra_node_bytes_sent)
            )
        );
    }
    test_field_intra_node_bytes_sent();
    fn test_field_intra_node_bytes_received() {
        assert_eq!(
            unsafe {
                let uninit = ::std::mem::MaybeUninit::<smd_comm_stats>::uninit();
                let ptr = uninit.as_ptr();
                ::std::ptr::addr_of!((*ptr).intra_node_bytes_received) as usize - ptr as usize
            },
            40usize,
            concat!(
                "Offset of field: ",
                stringify!(smd_comm_stats),
                "::",
                stringify!(intra_node_bytes_received)
            )
        );
    }
    test_field_intra_node_bytes_received();
    fn test_field_last_algorithm() {
        assert_eq!(
            unsafe {
                let uninit = ::std::mem::MaybeUninit::<smd_comm_stats>::uninit();
                let ptr = uninit.as_ptr();
                ::std::ptr::addr_of!((*ptr).last_algorithm) as usize - ptr as usize
            },
            48usize,
            concat!(
                "Offset of field: ",
                stringify!(smd_comm_stats),
                "::",
                stringify!(last_algorithm)
            )
        );
    }
    test_field_last_algorithm();
    fn test_field_last_predicted_us() {
        assert_eq!(
            unsafe {
                let uninit = ::std::mem::MaybeUninit::<smd_comm_stats>::uninit();
                let ptr = uninit.as_ptr();
                ::std::ptr::addr_of!((*ptr).last_predicted_us) as usize - ptr as usize
            },
            80usize,
            concat!(
                "Offset of field: ",
                stringify!(smd_comm_stats),
                "::",
                stringify!(last_predicted_us)
            )
        );
    }
    test_field_last_predicted_us();
    fn test_field_transport_count() {
        assert_eq!(
            unsafe {
                let uninit = ::std::mem::MaybeUninit::<smd_comm_stats>::uninit();
                let ptr = uninit.as_ptr();
                ::std::ptr::addr_of!((*ptr).transport_count) as usize - ptr as usize
            },
            88usize,
            concat!(
                "Offset of field: ",
                stringify!(smd_comm_stats),
                "::",
                stringify!(transport_count)
            )
        );
    }
    test_field_transport_count();
    fn test_field_transports() {
        assert_eq!(
            unsafe {
                let uninit = ::std::mem::MaybeUninit::<smd_comm_stats>::uninit();
                let ptr = uninit.as_ptr();
                ::std::ptr::addr_of!((*ptr).transports) as usize - ptr as usize
            },
            96usize,
            concat!(
                "Offset of field: ",
                stringify!(smd_comm_stats),
                "::",
                stringify!(transports)
            )
        );
    }
    test_field_transports();
}
impl Default for smd_comm_stats {
    fn default() -> Self {
        let mut s = ::std::mem::MaybeUninit::<Self>::uninit();
        unsafe {
            ::std::ptr::write_bytes(s.as_mut_ptr(), 0, 1);
            s.assume_init()
        }
    }
}
pub type smd_comm_stats_t = smd_comm_stats;
extern "C" {
    pub fn smd_comm_get_stats(
        comm: *const smd_comm_t,
        stats: *mut smd_comm_stats_t,
    ) -> smd_result_t;
}
extern "C" {
    pub fn smd_comm_rank(comm: *const smd_comm_t, rank: *mut ::std::os::raw::c_int)
        -> smd_result_t;
}
extern "C" {
    pub fn smd_comm_size(comm: *const smd_comm_t, size: *mut ::std::os::raw::c_int)
        -> smd_result_t;
}
extern "C" {
    pub fn smd_comm_local_rank(
        comm: *const smd_comm_t,
        rank: *mut ::std::os::raw::c_int,
    ) -> smd_result_t;
}
extern "C" {
    pub fn smd_comm_local_size(
        comm: *const smd_comm_t,
        size: *mut ::std::os::raw::c_int,
    ) -> smd_result_t;
}
extern "C" {
    pub fn smd_comm_node_index(
        comm: *const smd_comm_t,
        node: *mut ::std::os::raw::c_int,
    ) -> smd_result_t;
}
extern "C" {
    pub fn smd_comm_node_count(
        comm: *const smd_comm_t,
        count: *mut ::std::os::raw::c_int,
    ) -> smd_result_t;
}
extern "C" {
    pub fn smd_comm_world_rank(
        comm: *const smd_comm_t,
        rank: ::std::os::raw::c_int,
        world_rank: *mut ::std::os::raw::c_int,
    ) -> smd_result_t;
}
extern "C" {
    pub fn smd_allreduce(
        sendbuf: *const ::std::os::raw::c_void,
        recvbuf: *mut ::std::os::raw::c_void,
        count: usize,
        datatype: smd_datatype_t,
        op: smd_op_t,
        comm: *mut smd_comm_t,
        stream: smd_stream_t,
    ) -> smd_result_t;
}
extern "C" {
    pub fn smd_iallreduce(
        sendbuf: *const ::std::os::raw::c_void,
        recvbuf: *mut ::std::os::raw::c_void,
        count: usize,
        datatype: smd_datatype_t,
        op: smd_op_t,
        comm: *mut smd_comm_t,
        stream: smd_stream_t,
        request: *mut *mut smd_request_t,
    ) -> smd_result_t;
}
extern "C" {
    pub fn smd_allgather(
        sendbuf: *const ::std::os::raw::c_void,
        recvbuf: *mut ::std::os::raw::c_void,
        sendcount: usize,
        datatype: smd_datatype_t,
        comm: *mut smd_comm_t,
        stream: smd_stream_t,
    ) -> smd_result_t;
}
extern "C" {
    pub fn smd_iallgather(
        sendbuf: *const ::std::os::raw::c_void,
        recvbuf: *mut ::std::os::raw::c_void,
        sendcount: usize,
        datatype: smd_datatype_t,
        comm: *mut smd_comm_t,
        stream: smd_stream_t,
        request: *mut *mut smd_request_t,
    ) -> smd_result_t;
}
extern "C" {
    pub fn smd_reduce_scatter(
        sendbuf: *const ::std::os::raw::c_void,
        recvbuf: *mut ::std::os::raw::c_void,
        recvcount: usize,
        datatype: smd_datatype_t,
        op: smd_op_t,
        comm: *mut smd_comm_t,
        stream: smd_stream_t,
    ) -> smd_result_t;
}
extern "C" {
    pub fn smd_ireduce_scatter(
        sendbuf: *const ::std::os::raw::c_void,
        recvbuf: *mut ::std::os::raw::c_void,
        recvcount: usize,
        datatype: smd_datatype_t,
        op: smd_op_t,
        comm: *mut smd_comm_t,
        stream: smd_stream_t,
        request: *mut *mut smd_request_t,
    ) -> smd_result_t;
}
extern "C" {
    pub fn smd_broadcast(
        sendbuf: *const ::std::os::raw::c_void,
        recvbuf: *mut ::std::os::raw::c_void,
        count: usize,
        datatype: smd_datatype_t,
        root: ::std::os::raw::c_int,
        comm: *mut smd_comm_t,
        stream: smd_stream_t,
    ) -> smd_result_t;
}
extern "C" {
    pub fn smd_ibroadcast(
        sendbuf: *const ::std::os::raw::c_void,
        recvbuf: *mut ::std::os::raw::c_void,
        count: usize,
        datatype: smd_datatype_t,
        root: ::std::os::raw::c_int,
        comm: *mut smd_comm_t,
        stream: smd_stream_t,
        request: *mut *mut smd_request_t,
    ) -> smd_result_t;
}
extern "C" {
    pub fn smd_reduce(
        sendbuf: *const ::std::os::raw::c_void,
        recvbuf: *mut ::std::os::raw::c_void,
        count: usize,
        datatype: smd_datatype_t,
        op: smd_op_t,
        root: ::std::os::raw::c_int,
        comm: *mut smd_comm_t,
        stream: smd_stream_t,
    ) -> smd_result_t;
}
extern "C" {
    pub fn smd_ireduce(
        sendbuf: *const ::std::os::raw::c_void,
        recvbuf: *mut ::std::os::raw::c_void,
        count: usize,
        datatype: smd_datatype_t,
        op: smd_op_t,
        root: ::std::os::raw::c_int,
        comm: *mut smd_comm_t,
        stream: smd_stream_t,
        request: *mut *mut smd_request_t,
    ) -> smd_result_t;
}
extern "C" {
    pub fn smd_alltoall(
        sendbuf: *const ::std::os::raw::c_void,
        recvbuf: *mut ::std::os::raw::c_void,
        count: usize,
        datatype: smd_datatype_t,
        comm: *mut smd_comm_t,
        stream: smd_stream_t,
    ) -> smd_result_t;
}
extern "C" {
    pub fn smd_ialltoall(
        sendbuf: *const ::std::os::raw::c_void,
        recvbuf: *mut ::std::os::raw::c_void,
        count: usize,
        datatype: smd_datatype_t,
        comm: *mut smd_comm_t,
        stream: smd_stream_t,
        request: *mut *mut smd_request_t,
    ) -> smd_result_t;
}
extern "C" {
    pub fn smd_barrier(comm: *mut smd_comm_t, stream: smd_stream_t) -> smd_result_t;
}
extern "C" {
    pub fn smd_ibarrier(
        comm: *mut smd_comm_t,
        stream: smd_stream_t,
        request: *mut *mut smd_request_t,
    ) -> smd_result_t;
}
extern "C" {
    pub fn smd_send(
        buf: *const ::std::os::raw::c_void,
        count: usize,
        datatype: smd_datatype_t,
        peer: ::std::os::raw::c_int,
        tag: ::std::os::raw::c_int,
        comm: *mut smd_comm_t,
        stream: smd_stream_t,
    ) -> smd_result_t;
}
extern "C" {
    pub fn smd_isend(
        buf: *const ::std::os::raw::c_void,
        count: usize,
        datatype: smd_datatype_t,
        peer: ::std::os::raw::c_int,
        tag: ::std::os::raw::c_int,
        comm: *mut smd_comm_t,
        stream: smd_stream_t,
        request: *mut *mut smd_request_t,
    ) -> smd_result_t;
}
extern "C" {
    pub fn smd_recv(
        buf: *mut ::std::os::raw::c_void,
        count: usize,
        datatype: smd_datatype_t,
        peer: ::std::os::raw::c_int,
        tag: ::std::os::raw::c_int,
        comm: *mut smd_comm_t,
        stream: smd_stream_t,
    ) -> smd_result_t;
}
extern "C" {
    pub fn smd_irecv(
        buf: *mut ::std::os::raw::c_void,
        count: usize,
        datatype: smd_datatype_t,
        peer: ::std::os::raw::c_int,
        tag: ::std::os::raw::c_int,
        comm: *mut smd_comm_t,
        stream: smd_stream_t,
        request: *mut *mut smd_request_t,
    ) -> smd_result_t;
}
extern "C" {
    pub fn smd_request_test(
        request: *mut smd_request_t,
        done: *mut ::std::os::raw::c_int,
    ) -> smd_result_t;
}
extern "C" {
    pub fn smd_request_wait(request: *mut smd_request_t) -> smd_result_t;
}
extern "C" {
    pub fn smd_request_wait_timeout(request: *mut smd_request_t, timeout_ms: i64) -> smd_result_t;
}
extern "C" {
    pub fn smd_request_get_count(request: *mut smd_request_t, count: *mut usize) -> smd_result_t;
}
extern "C" {
    pub fn smd_request_free(request: *mut smd_request_t) -> smd_result_t;
}
impl smd_group_kind {
    pub const SMD_GROUP_WORLD: smd_group_kind = smd_group_kind(0);
}
impl smd_group_kind {
    pub const SMD_GROUP_TP: smd_group_kind = smd_group_kind(1);
}
impl smd_group_kind {
    pub const SMD_GROUP_PP: smd_group_kind = smd_group_kind(2);
}
impl smd_group_kind {
    pub const SMD_GROUP_DP: smd_group_kind = smd_group_kind(3);
}
impl smd_group_kind {
    pub const SMD_GROUP_RDP: smd_group_kind = smd_group_kind(4);
}
impl smd_group_kind {
    pub const SMD_GROUP_MP: smd_group_kind = smd_group_kind(5);
}
impl smd_group_kind {
    pub const SMD_GROUP_SDP: smd_group_kind = smd_group_kind(6);
}
impl smd_group_kind {
    pub const SMD_GROUP_KIND_COUNT: smd_group_kind = smd_group_kind(7);
}
impl smd_group_kind {
    pub const SMD_GROUP_KIND_RANGE_MIN_: smd_group_kind = smd_group_kind(-2147483648);
}
impl smd_group_kind {
    pub const SMD_GROUP_KIND_RANGE_MAX_: smd_group_kind = smd_group_kind(2147483647);
}
#[repr(transparent)]
#[derive(Debug, Copy, Clone, Hash, PartialEq, Eq)]
pub struct smd_group_kind(pub ::std::os::raw::c_int);
pub use self::smd_group_kind as smd_group_kind_t;
#[repr(C)]
#[derive(Debug, Copy, Clone)]
pub struct smd_groups {
    _unused: [u8; 0],
}
pub type smd_groups_t = smd_groups;
#[repr(C)]
pub struct smd_groups_config {
    pub struct_size: usize,
    pub version: u32,
    pub tp: i32,
    pub pp: i32,
    pub placement: *const ::std::os::raw::c_char,
    pub sdp: i32,
}
#[test]
fn bindgen_test_layout_smd_groups_config() {
    assert_eq!(
        ::std::mem::size_of::<smd_groups_config>(),
        40usize,
        concat!("Size of: ", stringify!(smd_groups_config))
    );
    assert_eq!(
        ::std::mem::align_of::<smd_groups_config>(),
        8usize,
        concat!("Alignment of ", stringify!(smd_groups_config))
    );
    fn test_field_struct_size() {
        assert_eq!(
            unsafe {
                let uninit = ::std::mem::MaybeUninit::<smd_groups_config>::uninit();
                let ptr = uninit.as_ptr();
                ::std::ptr::addr_of!((*ptr).struct_size) as usize - ptr as usize
            },
            0usize,
            concat!(
                "Offset of field: ",
                stringify!(smd_groups_config),
                "::",
                stringify!(struct_size)
            )
        );
    }
    test_field_struct_size();
    fn test_field_version() {
        assert_eq!(
            unsafe {
                let uninit = ::std::mem::MaybeUninit::<smd_groups_config>::uninit();
                let ptr = uninit.as_ptr();
                ::std::ptr::addr_of!((*ptr).version) as usize - ptr as usize
            },
            8usize,
            concat!(
                "Offset of field: ",
                stringify!(smd_groups_config),
                "::",
                stringify!(version)
            )
        );
    }
    test_field_version();
    fn test_field_tp() {
        assert_eq!(
            unsafe {
                let uninit = ::std::mem::MaybeUninit::<smd_groups_config>::uninit();
                let ptr = uninit.as_ptr();
                ::std::ptr::addr_of!((*ptr).tp) as usize - ptr as usize
            },
            12usize,
            concat!(
                "Offset of field: ",
                stringify!(smd_groups_config),
                "::",
                stringify!(tp)
            )
        );
    }
    test_field_tp();
    fn test_field_pp() {
        assert_eq!(
            unsafe {
                let uninit = ::std::mem::MaybeUninit::<smd_groups_config>::uninit();
                let ptr = uninit.as_ptr();
                ::std::ptr::addr_of!((*ptr).pp) as usize - ptr as usize
            },
            16usize,
            concat!(
                "Offset of field: ",
                stringify!(smd_groups_config),
                "::",
                stringify!(pp)
            )
        );
    }
    test_field_pp();
    fn test_field_placement() {
        assert_eq!(
            unsafe {
                let uninit = ::std::mem::MaybeUninit::<smd_groups_config>::uninit();
                let ptr = uninit.as_ptr();
                ::std::ptr::addr_of!((*ptr).placement) as usize - ptr as usize
            },
            24usize,
            concat!(
                "Offset of field: ",
                stringify!(smd_groups_config),
                "::",
                stringify!(placement)
            )
        );
    }
    test_field_placement();
    fn test_field_sdp() {
        assert_eq!(
            unsafe {
                let uninit = ::std::mem::MaybeUninit::<smd_groups_config>::uninit();
                let ptr = uninit.as_ptr();
                ::std::ptr::addr_of!((*ptr).sdp) as usize - ptr as usize
            },
            32usize,
            concat!(
                "Offset of field: ",
                stringify!(smd_groups_config),
                "::",
                stringify!(sdp)
            )
        );
    }
    test_field_sdp();
}
impl Default for smd_groups_config {
    fn default() -> Self {
        let mut s = ::std::mem::MaybeUninit::<Self>::uninit();
        unsafe {
            ::std::ptr::write_bytes(s.as_mut_ptr(), 0, 1);
            s.assume_init()
        }
    }
}
pub type smd_groups_config_t = smd_groups_config;
extern "C" {
    pub fn smd_groups_config_init(config: *mut smd_groups_config_t) -> smd_result_t;
}
extern "C" {
    pub fn smd_groups_create(
        comm: *mut smd_comm_t,
        config: *const smd_groups_config_t,
        groups: *mut *mut smd_groups_t,
    ) -> smd_result_t;
}
extern "C" {
    pub fn smd_groups_destroy(groups: *mut smd_groups_t) -> smd_result_t;
}
extern "C" {
    pub fn smd_groups_rank(
        groups: *const smd_groups_t,
        kind: smd_group_kind_t,
        rank: *mut ::std::os::raw::c_int,
    ) -> smd_result_t;
}
extern "C" {
    pub fn smd_groups_size(
        groups: *const smd_groups_t,
        kind: smd_group_kind_t,
        size: *mut ::std::os::raw::c_int,
    ) -> smd_result_t;
}
extern "C" {
    pub fn smd_groups_comm(
        groups: *const smd_groups_t,
        kind: smd_group_kind_t,
        comm: *mut *mut smd_comm_t,
    ) -> smd_result_t;
}
extern "C" {
    pub fn smd_groups_members(
        groups: *const smd_groups_t,
        kind: smd_group_kind_t,
        ranks: *mut ::std::os::raw::c_int,
        capacity: ::std::os::raw::c_int,
        count: *mut ::std::os::raw::c_int,
    ) -> smd_result_t;
}
extern "C" {
    pub fn smd_groups_layout(
        config: *const smd_groups_config_t,
        world_size: ::std::os::raw::c_int,
        rank: ::std::os::raw::c_int,
        kind: smd_group_kind_t,
        group_rank: *mut ::std::os::raw::c_int,
        ranks: *mut ::std::os::raw::c_int,
        capacity: ::std::os::raw::c_int,
        count: *mut ::std::os::raw::c_int,
    ) -> smd_result_t;
}
#[repr(C)]
pub struct smd_rank_info {
    pub struct_size: usize,
    pub version: u32,
    pub rank: i32,
    pub world_rank: i32,
    pub node_index: i32,
    pub local_rank: i32,
    pub local_size: i32,
    pub pid: i32,
    pub numa_node: i32,
    pub cpus: i32,
    pub host: [::std::os::raw::c_char; 64usize],
    pub cpuset: [::std::os::raw::c_char; 128usize],
}
#[test]
fn bindgen_test_layout_smd_rank_info() {
    assert_eq!(
        ::std::mem::size_of::<smd_rank_info>(),
        240usize,
        concat!("Size of: ", stringify!(smd_rank_info))
    );
    assert_eq!(
        ::std::mem::align_of::<smd_rank_info>(),
        8usize,
        concat!("Alignment of ", stringify!(smd_rank_info))
    );
    fn test_field_struct_size() {
        assert_eq!(
            unsafe {
                let uninit = ::std::mem::MaybeUninit::<smd_rank_info>::uninit();
                let ptr = uninit.as_ptr();
                ::std::ptr::addr_of!((*ptr).struct_size) as usize - ptr as usize
            },
            0usize,
            concat!(
                "Offset of field: ",
                stringify!(smd_rank_info),
                "::",
                stringify!(struct_size)
            )
        );
    }
    test_field_struct_size();
    fn test_field_version() {
        assert_eq!(
            unsafe {
                let uninit = ::std::mem::MaybeUninit::<smd_rank_info>::uninit();
                let ptr = uninit.as_ptr();
                ::std::ptr::addr_of!((*ptr).version) as usize - ptr as usize
            },
            8usize,
            concat!(
                "Offset of field: ",
                stringify!(smd_rank_info),
                "::",
                stringify!(version)
            )
        );
    }
    test_field_version();
    fn test_field_rank() {
        assert_eq!(
            unsafe {
                let uninit = ::std::mem::MaybeUninit::<smd_rank_info>::uninit();
                let ptr = uninit.as_ptr();
                ::std::ptr::addr_of!((*ptr).rank) as usize - ptr as usize
            },
            12usize,
            concat!(
                "Offset of field: ",
                stringify!(smd_rank_info),
                "::",
                stringify!(rank)
            )
        );
    }
    test_field_rank();
    fn test_field_world_rank() {
        assert_eq!(
            unsafe {
                let uninit = ::std::mem::MaybeUninit::<smd_rank_info>::uninit();
                let ptr = uninit.as_ptr();
                ::std::ptr::addr_of!((*ptr).world_rank) as usize - ptr as usize
            },
            16usize,
            concat!(
                "Offset of field: ",
                stringify!(smd_rank_info),
                "::",
                stringify!(world_rank)
            )
        );
    }
    test_field_world_rank();
    fn test_field_node_index() {
        assert_eq!(
            unsafe {
                let uninit = ::std::mem::MaybeUninit::<smd_rank_info>::uninit();
                let ptr = uninit.as_ptr();
                ::std::ptr::addr_of!((*ptr).node_index) as usize - ptr as usize
            },
            20usize,
            concat!(
                "Offset of field: ",
                stringify!(smd_rank_info),
                "::",
                stringify!(node_index)
            )
        );
    }
    test_field_node_index();
    fn test_field_local_rank() {
        assert_eq!(
            unsafe {
                let uninit = ::std::mem::MaybeUninit::<smd_rank_info>::uninit();
                let ptr = uninit.as_ptr();
                ::std::ptr::addr_of!((*ptr).local_rank) as usize - ptr as usize
            },
            24usize,
            concat!(
                "Offset of field: ",
                stringify!(smd_rank_info),
                "::",
                stringify!(local_rank)
            )
        );
    }
    test_field_local_rank();
    fn test_field_local_size() {
        assert_eq!(
            unsafe {
                let uninit = ::std::mem::MaybeUninit::<smd_rank_info>::uninit();
                let ptr = uninit.as_ptr();
                ::std::ptr::addr_of!((*ptr).local_size) as usize - ptr as usize
            },
            28usize,
            concat!(
                "Offset of field: ",
                stringify!(smd_rank_info),
                "::",
                stringify!(local_size)
            )
        );
    }
    test_field_local_size();
    fn test_field_pid() {
        assert_eq!(
            unsafe {
                let uninit = ::std::mem::MaybeUninit::<smd_rank_info>::uninit();
                let ptr = uninit.as_ptr();
                ::std::ptr::addr_of!((*ptr).pid) as usize - ptr as usize
            },
            32usize,
            concat!(
                "Offset of field: ",
                stringify!(smd_rank_info),
                "::",
                stringify!(pid)
            )
        );
    }
    test_field_pid();
    fn test_field_numa_node() {
        assert_eq!(
            unsafe {
                let uninit = ::std::mem::MaybeUninit::<smd_rank_info>::uninit();
                let ptr = uninit.as_ptr();
                ::std::ptr::addr_of!((*ptr).numa_node) as usize - ptr as usize
            },
            36usize,
            concat!(
                "Offset of field: ",
                stringify!(smd_rank_info),
                "::",
                stringify!(numa_node)
            )
        );
    }
    test_field_numa_node();
    fn test_field_cpus() {
        assert_eq!(
            unsafe {
                let uninit = ::std::mem::MaybeUninit::<smd_rank_info>::uninit();
                let ptr = uninit.as_ptr();
                ::std::ptr::addr_of!((*ptr).cpus) as usize - ptr as usize
            },
            40usize,
            concat!(
                "Offset of field: ",
                stringify!(smd_rank_info),
                "::",
                stringify!(cpus)
            )
        );
    }
    test_field_cpus();
    fn test_field_host() {
        assert_eq!(
            unsafe {
                let uninit = ::std::mem::MaybeUninit::<smd_rank_info>::uninit();
                let ptr = uninit.as_ptr();
                ::std::ptr::addr_of!((*ptr).host) as usize - ptr as usize
            },
            44usize,
            concat!(
                "Offset of field: ",
                stringify!(smd_rank_info),
                "::",
                stringify!(host)
            )
        );
    }
    test_field_host();
    fn test_field_cpuset() {
        assert_eq!(
            unsafe {
                let uninit = ::std::mem::MaybeUninit::<smd_rank_info>::uninit();
                let ptr = uninit.as_ptr();
                ::std::ptr::addr_of!((*ptr).cpuset) as usize - ptr as usize
            },
            108usize,
            concat!(
                "Offset of field: ",
                stringify!(smd_rank_info),
                "::",
                stringify!(cpuset)
            )
        );
    }
    test_field_cpuset();
}
impl Default for smd_rank_info {
    fn default() -> Self {
        let mut s = ::std::mem::MaybeUninit::<Self>::uninit();
        unsafe {
            ::std::ptr::write_bytes(s.as_mut_ptr(), 0, 1);
            s.assume_init()
        }
    }
}
pub type smd_rank_info_t = smd_rank_info;
extern "C" {
    pub fn smd_comm_rank_info(
        comm: *const smd_comm_t,
        rank: ::std::os::raw::c_int,
        info: *mut smd_rank_info_t,
    ) -> smd_result_t;
}
extern "C" {
    pub fn smd_mem_alloc(
        comm: *mut smd_comm_t,
        bytes: usize,
        ptr: *mut *mut ::std::os::raw::c_void,
    ) -> smd_result_t;
}
extern "C" {
    pub fn smd_mem_free(ptr: *mut ::std::os::raw::c_void) -> smd_result_t;
}
extern "C" {
    pub fn smd_group_start() -> smd_result_t;
}
extern "C" {
    pub fn smd_group_end() -> smd_result_t;
}
extern "C" {
    pub fn smd_allgatherv(
        sendbuf: *const ::std::os::raw::c_void,
        recvbuf: *mut ::std::os::raw::c_void,
        counts: *const usize,
        displs: *const usize,
        datatype: smd_datatype_t,
        comm: *mut smd_comm_t,
        stream: smd_stream_t,
    ) -> smd_result_t;
}
extern "C" {
    pub fn smd_iallgatherv(
        sendbuf: *const ::std::os::raw::c_void,
        recvbuf: *mut ::std::os::raw::c_void,
        counts: *const usize,
        displs: *const usize,
        datatype: smd_datatype_t,
        comm: *mut smd_comm_t,
        stream: smd_stream_t,
        request: *mut *mut smd_request_t,
    ) -> smd_result_t;
}
extern "C" {
    pub fn smd_reduce_scatterv(
        sendbuf: *const ::std::os::raw::c_void,
        recvbuf: *mut ::std::os::raw::c_void,
        counts: *const usize,
        displs: *const usize,
        datatype: smd_datatype_t,
        op: smd_op_t,
        comm: *mut smd_comm_t,
        stream: smd_stream_t,
    ) -> smd_result_t;
}
extern "C" {
    pub fn smd_ireduce_scatterv(
        sendbuf: *const ::std::os::raw::c_void,
        recvbuf: *mut ::std::os::raw::c_void,
        counts: *const usize,
        displs: *const usize,
        datatype: smd_datatype_t,
        op: smd_op_t,
        comm: *mut smd_comm_t,
        stream: smd_stream_t,
        request: *mut *mut smd_request_t,
    ) -> smd_result_t;
}
extern "C" {
    pub fn smd_alltoallv(
        sendbuf: *const ::std::os::raw::c_void,
        sendcounts: *const usize,
        sdispls: *const usize,
        recvbuf: *mut ::std::os::raw::c_void,
        recvcounts: *const usize,
        rdispls: *const usize,
        datatype: smd_datatype_t,
        comm: *mut smd_comm_t,
        stream: smd_stream_t,
    ) -> smd_result_t;
}
extern "C" {
    pub fn smd_ialltoallv(
        sendbuf: *const ::std::os::raw::c_void,
        sendcounts: *const usize,
        sdispls: *const usize,
        recvbuf: *mut ::std::os::raw::c_void,
        recvcounts: *const usize,
        rdispls: *const usize,
        datatype: smd_datatype_t,
        comm: *mut smd_comm_t,
        stream: smd_stream_t,
        request: *mut *mut smd_request_t,
    ) -> smd_result_t;
}
#[repr(C)]
pub struct smd_status {
    pub struct_size: usize,
    pub version: u32,
    pub source: i32,
    pub tag: i32,
    pub count: usize,
    pub bytes: usize,
}
#[test]
fn bindgen_test_layout_smd_status() {
    assert_eq!(
        ::std::mem::size_of::<smd_status>(),
        40usize,
        concat!("Size of: ", stringify!(smd_status))
    );
    assert_eq!(
        ::std::mem::align_of::<smd_status>(),
        8usize,
        concat!("Alignment of ", stringify!(smd_status))
    );
    fn test_field_struct_size() {
        assert_eq!(
            unsafe {
                let uninit = ::std::mem::MaybeUninit::<smd_status>::uninit();
                let ptr = uninit.as_ptr();
                ::std::ptr::addr_of!((*ptr).struct_size) as usize - ptr as usize
            },
            0usize,
            concat!(
                "Offset of field: ",
                stringify!(smd_status),
                "::",
                stringify!(struct_size)
            )
        );
    }
    test_field_struct_size();
    fn test_field_version() {
        assert_eq!(
            unsafe {
                let uninit = ::std::mem::MaybeUninit::<smd_status>::uninit();
                let ptr = uninit.as_ptr();
                ::std::ptr::addr_of!((*ptr).version) as usize - ptr as usize
            },
            8usize,
            concat!(
                "Offset of field: ",
                stringify!(smd_status),
                "::",
                stringify!(version)
            )
        );
    }
    test_field_version();
    fn test_field_source() {
        assert_eq!(
            unsafe {
                let uninit = ::std::mem::MaybeUninit::<smd_status>::uninit();
                let ptr = uninit.as_ptr();
                ::std::ptr::addr_of!((*ptr).source) as usize - ptr as usize
            },
            12usize,
            concat!(
                "Offset of field: ",
                stringify!(smd_status),
                "::",
                stringify!(source)
            )
        );
    }
    test_field_source();
    fn test_field_tag() {
        assert_eq!(
            unsafe {
                let uninit = ::std::mem::MaybeUninit::<smd_status>::uninit();
                let ptr = uninit.as_ptr();
                ::std::ptr::addr_of!((*ptr).tag) as usize - ptr as usize
            },
            16usize,
            concat!(
                "Offset of field: ",
                stringify!(smd_status),
                "::",
                stringify!(tag)
            )
        );
    }
    test_field_tag();
    fn test_field_count() {
        assert_eq!(
            unsafe {
                let uninit = ::std::mem::MaybeUninit::<smd_status>::uninit();
                let ptr = uninit.as_ptr();
                ::std::ptr::addr_of!((*ptr).count) as usize - ptr as usize
            },
            24usize,
            concat!(
                "Offset of field: ",
                stringify!(smd_status),
                "::",
                stringify!(count)
            )
        );
    }
    test_field_count();
    fn test_field_bytes() {
        assert_eq!(
            unsafe {
                let uninit = ::std::mem::MaybeUninit::<smd_status>::uninit();
                let ptr = uninit.as_ptr();
                ::std::ptr::addr_of!((*ptr).bytes) as usize - ptr as usize
            },
            32usize,
            concat!(
                "Offset of field: ",
                stringify!(smd_status),
                "::",
                stringify!(bytes)
            )
        );
    }
    test_field_bytes();
}
impl Default for smd_status {
    fn default() -> Self {
        let mut s = ::std::mem::MaybeUninit::<Self>::uninit();
        unsafe {
            ::std::ptr::write_bytes(s.as_mut_ptr(), 0, 1);
            s.assume_init()
        }
    }
}
pub type smd_status_t = smd_status;
extern "C" {
    pub fn smd_status_init(status: *mut smd_status_t) -> smd_result_t;
}
extern "C" {
    pub fn smd_request_get_status(
        request: *mut smd_request_t,
        status: *mut smd_status_t,
    ) -> smd_result_t;
}
extern "C" {
    pub fn smd_recv_status(
        buf: *mut ::std::os::raw::c_void,
        count: usize,
        datatype: smd_datatype_t,
        peer: ::std::os::raw::c_int,
        tag: ::std::os::raw::c_int,
        comm: *mut smd_comm_t,
        stream: smd_stream_t,
        status: *mut smd_status_t,
    ) -> smd_result_t;
}
#[repr(C)]
#[derive(Debug, Copy, Clone)]
pub struct smd_sharded {
    _unused: [u8; 0],
}
pub type smd_sharded_t = smd_sharded;
#[repr(C)]
pub struct smd_sharded_config {
    pub struct_size: usize,
    pub version: u32,
    pub max_live_parameters: u64,
    pub param_persistence_threshold: u64,
    pub reduce_bucket_size: u64,
    pub hierarchical_allgather: i32,
    pub prefetch_depth: i32,
    pub average_gradients: i32,
    pub gradient_wire_dtype: i32,
    pub replica_comm: *mut smd_comm_t,
}
#[test]
fn bindgen_test_layout_smd_sharded_config() {
    assert_eq!(
        ::std::mem::size_of::<smd_sharded_config>(),
        64usize,
        concat!("Size of: ", stringify!(smd_sharded_config))
    );
    assert_eq!(
        ::std::mem::align_of::<smd_sharded_config>(),
        8usize,
        concat!("Alignment of ", stringify!(smd_sharded_config))
    );
    fn test_field_struct_size() {
        assert_eq!(
            unsafe {
                let uninit = ::std::mem::MaybeUninit::<smd_sharded_config>::uninit();
                let ptr = uninit.as_ptr();
                ::std::ptr::addr_of!((*ptr).struct_size) as usize - ptr as usize
            },
            0usize,
            concat!(
                "Offset of field: ",
                stringify!(smd_sharded_config),
                "::",
                stringify!(struct_size)
            )
        );
    }
    test_field_struct_size();
    fn test_field_version() {
        assert_eq!(
            unsafe {
                let uninit = ::std::mem::MaybeUninit::<smd_sharded_config>::uninit();
                let ptr = uninit.as_ptr();
                ::std::ptr::addr_of!((*ptr).version) as usize - ptr as usize
            },
            8usize,
            concat!(
                "Offset of field: ",
                stringify!(smd_sharded_config),
                "::",
                stringify!(version)
            )
        );
    }
    test_field_version();
    fn test_field_max_live_parameters() {
        assert_eq!(
            unsafe {
                let uninit = ::std::mem::MaybeUninit::<smd_sharded_config>::uninit();
                let ptr = uninit.as_ptr();
                ::std::ptr::addr_of!((*ptr).max_live_parameters) as usize - ptr as usize
            },
            16usize,
            concat!(
                "Offset of field: ",
                stringify!(smd_sharded_config),
                "::",
                stringify!(max_live_parameters)
            )
        );
    }
    test_field_max_live_parameters();
    fn test_field_param_persistence_threshold() {
        assert_eq!(
            unsafe {
                let uninit = ::std::mem::MaybeUninit::<smd_sharded_config>::uninit();
                let ptr = uninit.as_ptr();
                ::std::ptr::addr_of!((*ptr).param_persistence_threshold) as usize - ptr as usize
            },
            24usize,
            concat!(
                "Offset of field: ",
                stringify!(smd_sharded_config),
                "::",
                stringify!(param_persistence_threshold)
            )
        );
    }
    test_field_param_persistence_threshold();
    fn test_field_reduce_bucket_size() {
        assert_eq!(
            unsafe {
                let uninit = ::std::mem::MaybeUninit::<smd_sharded_config>::uninit();
                let ptr = uninit.as_ptr();
                ::std::ptr::addr_of!((*ptr).reduce_bucket_size) as usize - ptr as usize
            },
            32usize,
            concat!(
                "Offset of field: ",
                stringify!(smd_sharded_config),
                "::",
                stringify!(reduce_bucket_size)
            )
        );
    }
    test_field_reduce_bucket_size();
    fn test_field_hierarchical_allgather() {
        assert_eq!(
            unsafe {
                let uninit = ::std::mem::MaybeUninit::<smd_sharded_config>::uninit();
                let ptr = uninit.as_ptr();
                ::std::ptr::addr_of!((*ptr).hierarchical_allgather) as usize - ptr as usize
            },
            40usize,
            concat!(
                "Offset of field: ",
                stringify!(smd_sharded_config),
                "::",
                stringify!(hierarchical_allgather)
            )
        );
    }
    test_field_hierarchical_allgather();
    fn test_field_prefetch_depth() {
        assert_eq!(
            unsafe {
                let uninit = ::std::mem::MaybeUninit::<smd_sharded_config>::uninit();
                let ptr = uninit.as_ptr();
                ::std::ptr::addr_of!((*ptr).prefetch_depth) as usize - ptr as usize
            },
            44usize,
            concat!(
                "Offset of field: ",
                stringify!(smd_sharded_config),
                "::",
                stringify!(prefetch_depth)
            )
        );
    }
    test_field_prefetch_depth();
    fn test_field_average_gradients() {
        assert_eq!(
            unsafe {
                let uninit = ::std::mem::MaybeUninit::<smd_sharded_config>::uninit();
                let ptr = uninit.as_ptr();
                ::std::ptr::addr_of!((*ptr).average_gradients) as usize - ptr as usize
            },
            48usize,
            concat!(
                "Offset of field: ",
                stringify!(smd_sharded_config),
                "::",
                stringify!(average_gradients)
            )
        );
    }
    test_field_average_gradients();
    fn test_field_gradient_wire_dtype() {
        assert_eq!(
            unsafe {
                let uninit = ::std::mem::MaybeUninit::<smd_sharded_config>::uninit();
                let ptr = uninit.as_ptr();
                ::std::ptr::addr_of!((*ptr).gradient_wire_dtype) as usize - ptr as usize
            },
            52usize,
            concat!(
                "Offset of field: ",
                stringify!(smd_sharded_config),
                "::",
                stringify!(gradient_wire_dtype)
            )
        );
    }
    test_field_gradient_wire_dtype();
    fn test_field_replica_comm() {
        assert_eq!(
            unsafe {
                let uninit = ::std::mem::MaybeUninit::<smd_sharded_config>::uninit();
                let ptr = uninit.as_ptr();
                ::std::ptr::addr_of!((*ptr).replica_comm) as usize - ptr as usize
            },
            56usize,
            concat!(
                "Offset of field: ",
                stringify!(smd_sharded_config),
                "::",
                stringify!(replica_comm)
            )
        );
    }
    test_field_replica_comm();
}
impl Default for smd_sharded_config {
    fn default() -> Self {
        let mut s = ::std::mem::MaybeUninit::<Self>::uninit();
        unsafe {
            ::std::ptr::write_bytes(s.as_mut_ptr(), 0, 1);
            s.assume_init()
        }
    }
}
pub type smd_sharded_config_t = smd_sharded_config;
extern "C" {
    pub fn smd_sharded_config_init(config: *mut smd_sharded_config_t) -> smd_result_t;
}
extern "C" {
    pub fn smd_sharded_create(
        comm: *mut smd_comm_t,
        config: *const smd_sharded_config_t,
        set: *mut *mut smd_sharded_t,
    ) -> smd_result_t;
}
extern "C" {
    pub fn smd_sharded_destroy(set: *mut smd_sharded_t) -> smd_result_t;
}
extern "C" {
    pub fn smd_sharded_register(
        set: *mut smd_sharded_t,
        count: usize,
        datatype: smd_datatype_t,
        init: *const ::std::os::raw::c_void,
        id: *mut i32,
    ) -> smd_result_t;
}
extern "C" {
    pub fn smd_sharded_shard(
        set: *mut smd_sharded_t,
        id: i32,
        data: *mut *mut ::std::os::raw::c_void,
        count: *mut usize,
        offset: *mut usize,
        persistent: *mut ::std::os::raw::c_int,
    ) -> smd_result_t;
}
extern "C" {
    pub fn smd_sharded_grad(
        set: *mut smd_sharded_t,
        id: i32,
        data: *mut *mut ::std::os::raw::c_void,
        count: *mut usize,
    ) -> smd_result_t;
}
extern "C" {
    pub fn smd_sharded_fetch(
        set: *mut smd_sharded_t,
        ids: *const i32,
        n: usize,
        stream: smd_stream_t,
        request: *mut *mut smd_request_t,
    ) -> smd_result_t;
}
extern "C" {
    pub fn smd_sharded_full(
        set: *mut smd_sharded_t,
        id: i32,
        data: *mut *mut ::std::os::raw::c_void,
    ) -> smd_result_t;
}
extern "C" {
    pub fn smd_sharded_release(set: *mut smd_sharded_t, ids: *const i32, n: usize) -> smd_result_t;
}
extern "C" {
    pub fn smd_sharded_reduce_grads(
        set: *mut smd_sharded_t,
        ids: *const i32,
        n: usize,
        grads: *const *const ::std::os::raw::c_void,
        stream: smd_stream_t,
        request: *mut *mut smd_request_t,
    ) -> smd_result_t;
}
extern "C" {
    pub fn smd_sharded_clip_grads(
        set: *mut smd_sharded_t,
        max_norm: f64,
        total_norm: *mut f64,
    ) -> smd_result_t;
}
#[repr(C)]
pub struct smd_sharded_stats {
    pub struct_size: usize,
    pub version: u32,
    pub parameters: u64,
    pub persistent_elements: u64,
    pub owned_elements: u64,
    pub live_elements: u64,
    pub peak_live_elements: u64,
    pub live_bytes: u64,
    pub peak_live_bytes: u64,
    pub bytes_fetched: u64,
    pub fetches: u64,
    pub prefetches: u64,
    pub fetch_stalls: u64,
    pub cache_hits: u64,
    pub evictions: u64,
    pub last_grad_norm: f64,
}
#[test]
fn bindgen_test_layout_smd_sharded_stats() {
    assert_eq!(
        ::std::mem::size_of::<smd_sharded_stats>(),
        128usize,
        concat!("Size of: ", stringify!(smd_sharded_stats))
    );
    assert_eq!(
        ::std::mem::align_of::<smd_sharded_stats>(),
        8usize,
        concat!("Alignment of ", stringify!(smd_sharded_stats))
    );
    fn test_field_struct_size() {
        assert_eq!(
            unsafe {
                let uninit = ::std::mem::MaybeUninit::<smd_sharded_stats>::uninit();
                let ptr = uninit.as_ptr();
                ::std::ptr::addr_of!((*ptr).struct_size) as usize - ptr as usize
            },
            0usize,
            concat!(
                "Offset of field: ",
                stringify!(smd_sharded_stats),
                "::",
                stringify!(struct_size)
            )
        );
    }
    test_field_struct_size();
    fn test_field_version() {
        assert_eq!(
            unsafe {
                let uninit = ::std::mem::MaybeUninit::<smd_sharded_stats>::uninit();
                let ptr = uninit.as_ptr();
                ::std::ptr::addr_of!((*ptr).version) as usize - ptr as usize
            },
            8usize,
            concat!(
                "Offset of field: ",
                stringify!(smd_sharded_stats),
                "::",
                stringify!(version)
            )
        );
    }
    test_field_version();
    fn test_field_parameters() {
        assert_eq!(
            unsafe {
                let uninit = ::std::mem::MaybeUninit::<smd_sharded_stats>::uninit();
                let ptr = uninit.as_ptr();
                ::std::ptr::addr_of!((*ptr).parameters) as usize - ptr as usize
            },
            16usize,
            concat!(
                "Offset of field: ",
                stringify!(smd_sharded_stats),
                "::",
                stringify!(parameters)
            )
        );
    }
    test_field_parameters();
    fn test_field_persistent_elements() {
        assert_eq!(
            unsafe {
                let uninit = ::std::mem::MaybeUninit::<smd_sharded_stats>::uninit();
                let ptr = uninit.as_ptr();
                ::std::ptr::addr_of!((*ptr).persistent_elements) as usize - ptr as usize
            },
            24usize,
            concat!(
                "Offset of field: ",
                stringify!(smd_sharded_stats),
                "::",
                stringify!(persistent_elements)
            )
        );
    }
    test_field_persistent_elements();
    fn test_field_owned_elements() {
        assert_eq!(
            unsafe {
                let uninit = ::std::mem::MaybeUninit::<smd_sharded_stats>::uninit();
                let ptr = uninit.as_ptr();
                ::std::ptr::addr_of!((*ptr).owned_elements) as usize - ptr as usize
            },
            32usize,
            concat!(
                "Offset of field: ",
                stringify!(smd_sharded_stats),
                "::",
                stringify!(owned_elements)
            )
        );
    }
    test_field_owned_elements();
    fn test_field_live_elements() {
        assert_eq!(
            unsafe {
                let uninit = ::std::mem::MaybeUninit::<smd_sharded_stats>::uninit();
                let ptr = uninit.as_ptr();
                ::std::ptr::addr_of!((*ptr).live_elements) as usize - ptr as usize
            },
            40usize,
            concat!(
                "Offset of field: ",
                stringify!(smd_sharded_stats),
                "::",
                stringify!(live_elements)
            )
        );
    }
    test_field_live_elements();
    fn test_field_peak_live_elements() {
        assert_eq!(
            unsafe {
                let uninit = ::std::mem::MaybeUninit::<smd_sharded_stats>::uninit();
                let ptr = uninit.as_ptr();
                ::std::ptr::addr_of!((*ptr).peak_live_elements) as usize - ptr as usize
            },
            48usize,
            concat!(
                "Offset of field: ",
                stringify!(smd_sharded_stats),
                "::",
                stringify!(peak_live_elements)
            )
        );
    }
    test_field_peak_live_elements();
    fn test_field_live_bytes() {
        assert_eq!(
            unsafe {
                let uninit = ::std::mem::MaybeUninit::<smd_sharded_stats>::uninit();
                let ptr = uninit.as_ptr();
                ::std::ptr::addr_of!((*ptr).live_bytes) as usize - ptr as usize
            },
            56usize,
            concat!(
                "Offset of field: ",
                stringify!(smd_sharded_stats),
                "::",
                stringify!(live_bytes)
            )
        );
    }
    test_field_live_bytes();
    fn test_field_peak_live_bytes() {
        assert_eq!(
            unsafe {
                let uninit = ::std::mem::MaybeUninit::<smd_sharded_stats>::uninit();
                let ptr = uninit.as_ptr();
                ::std::ptr::addr_of!((*ptr).peak_live_bytes) as usize - ptr as usize
            },
            64usize,
            concat!(
                "Offset of field: ",
                stringify!(smd_sharded_stats),
                "::",
                stringify!(peak_live_bytes)
            )
        );
    }
    test_field_peak_live_bytes();
    fn test_field_bytes_fetched() {
        assert_eq!(
            unsafe {
                let uninit = ::std::mem::MaybeUninit::<smd_sharded_stats>::uninit();
                let ptr = uninit.as_ptr();
                ::std::ptr::addr_of!((*ptr).bytes_fetched) as usize - ptr as usize
            },
            72usize,
            concat!(
                "Offset of field: ",
                stringify!(smd_sharded_stats),
                "::",
                stringify!(bytes_fetched)
            )
        );
    }
    test_field_bytes_fetched();
    fn test_field_fetches() {
        assert_eq!(
            unsafe {
                let uninit = ::std::mem::MaybeUninit::<smd_sharded_stats>::uninit();
                let ptr = uninit.as_ptr();
                ::std::ptr::addr_of!((*ptr).fetches) as usize - ptr as usize
            },
            80usize,
            concat!(
                "Offset of field: ",
                stringify!(smd_sharded_stats),
                "::",
                stringify!(fetches)
            )
        );
    }
    test_field_fetches();
    fn test_field_prefetches() {
        assert_eq!(
            unsafe {
                let uninit = ::std::mem::MaybeUninit::<smd_sharded_stats>::uninit();
                let ptr = uninit.as_ptr();
                ::std::ptr::addr_of!((*ptr).prefetches) as usize - ptr as usize
            },
            88usize,
            concat!(
                "Offset of field: ",
                stringify!(smd_sharded_stats),
                "::",
                stringify!(prefetches)
            )
        );
    }
    test_field_prefetches();
    fn test_field_fetch_stalls() {
        assert_eq!(
            unsafe {
                let uninit = ::std::mem::MaybeUninit::<smd_sharded_stats>::uninit();
                let ptr = uninit.as_ptr();
                ::std::ptr::addr_of!((*ptr).fetch_stalls) as usize - ptr as usize
            },
            96usize,
            concat!(
                "Offset of field: ",
                stringify!(smd_sharded_stats),
                "::",
                stringify!(fetch_stalls)
            )
        );
    }
    test_field_fetch_stalls();
    fn test_field_cache_hits() {
        assert_eq!(
            unsafe {
                let uninit = ::std::mem::MaybeUninit::<smd_sharded_stats>::uninit();
                let ptr = uninit.as_ptr();
                ::std::ptr::addr_of!((*ptr).cache_hits) as usize - ptr as usize
            },
            104usize,
            concat!(
                "Offset of field: ",
                stringify!(smd_sharded_stats),
                "::",
                stringify!(cache_hits)
            )
        );
    }
    test_field_cache_hits();
    fn test_field_evictions() {
        assert_eq!(
            unsafe {
                let uninit = ::std::mem::MaybeUninit::<smd_sharded_stats>::uninit();
                let ptr = uninit.as_ptr();
                ::std::ptr::addr_of!((*ptr).evictions) as usize - ptr as usize
            },
            112usize,
            concat!(
                "Offset of field: ",
                stringify!(smd_sharded_stats),
                "::",
                stringify!(evictions)
            )
        );
    }
    test_field_evictions();
    fn test_field_last_grad_norm() {
        assert_eq!(
            unsafe {
                let uninit = ::std::mem::MaybeUninit::<smd_sharded_stats>::uninit();
                let ptr = uninit.as_ptr();
                ::std::ptr::addr_of!((*ptr).last_grad_norm) as usize - ptr as usize
            },
            120usize,
            concat!(
                "Offset of field: ",
                stringify!(smd_sharded_stats),
                "::",
                stringify!(last_grad_norm)
            )
        );
    }
    test_field_last_grad_norm();
}
impl Default for smd_sharded_stats {
    fn default() -> Self {
        let mut s = ::std::mem::MaybeUninit::<Self>::uninit();
        unsafe {
            ::std::ptr::write_bytes(s.as_mut_ptr(), 0, 1);
            s.assume_init()
        }
    }
}
pub type smd_sharded_stats_t = smd_sharded_stats;
extern "C" {
    pub fn smd_sharded_get_stats(
        set: *const smd_sharded_t,
        stats: *mut smd_sharded_stats_t,
    ) -> smd_result_t;
}
extern "C" {
    pub fn smd_sharded_reduce_grads_part(
        set: *mut smd_sharded_t,
        ids: *const i32,
        n: usize,
        grads: *const *const ::std::os::raw::c_void,
        stream: smd_stream_t,
        request: *mut *mut smd_request_t,
    ) -> smd_result_t;
}
extern "C" {
    pub fn smd_sharded_fetch_into(
        set: *mut smd_sharded_t,
        ids: *const i32,
        n: usize,
        datatypes: *const smd_datatype_t,
        dsts: *const *mut ::std::os::raw::c_void,
        capacities: *const usize,
        stream: smd_stream_t,
        request: *mut *mut smd_request_t,
    ) -> smd_result_t;
}
extern "C" {
    pub fn smd_sharded_gathered_count(
        set: *mut smd_sharded_t,
        id: i32,
        count: *mut usize,
    ) -> smd_result_t;
}
extern "C" {
    pub fn smd_set_interrupt_fd(fd: ::std::os::raw::c_int) -> smd_result_t;
}
extern "C" {
    pub fn smd_comm_revoke(comm: *mut smd_comm_t) -> smd_result_t;
}
extern "C" {
    pub fn smd_comm_agree(
        comm: *mut smd_comm_t,
        flag: *mut u32,
        failed: *mut ::std::os::raw::c_int,
        failed_capacity: ::std::os::raw::c_int,
        nfailed: *mut ::std::os::raw::c_int,
    ) -> smd_result_t;
}
extern "C" {
    pub fn smd_comm_shrink(
        comm: *mut smd_comm_t,
        newcomm: *mut *mut smd_comm_t,
        old_to_new: *mut ::std::os::raw::c_int,
    ) -> smd_result_t;
}
extern "C" {
    pub fn smd_comm_grow(
        comm: *mut smd_comm_t,
        n_new: ::std::os::raw::c_int,
        wait_ms: i64,
        newcomm: *mut *mut smd_comm_t,
    ) -> smd_result_t;
}
extern "C" {
    pub fn smd_comm_join(
        options: *const smd_init_options_t,
        newcomm: *mut *mut smd_comm_t,
    ) -> smd_result_t;
}
