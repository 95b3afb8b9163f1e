//! Multi-rank tests: a test function of an integration-test binary runs
//! twice over. Run by `cargo test` (the parent), it launches
//! `smdrun -n N <this binary> --exact <test name>` for each N; run by smdrun
//! (a rank, marked by the `SMD_RS_TEST` variable naming the test), it
//! executes the test's body and prints a line saying so.
//!
//! The parent passes when smdrun exits as expected and enough ranks printed
//! their line: a misspelt test name would otherwise run no test and pass.
//! smdrun is `SMD_SMDRUN`, else the Meson build tree's
//! (`build/tools/smdrun`), else `smdrun` on PATH. Jobs run one at a time.

#![allow(dead_code)] // each test binary uses part of this

use std::env;
use std::path::PathBuf;
use std::process::Command;
use std::sync::{Mutex, MutexGuard};
use std::time::{Duration, Instant};

use smd::Communicator;

#[macro_use]
pub mod values;

/// Names the test a rank process is to run.
const CHILD: &str = "SMD_RS_TEST";
/// Printed by a rank whose body returned.
const DONE: &str = "smd-test-rank-done";

/// One smdrun job at a time: 4-rank jobs in parallel would only fight for
/// the cores.
static JOBS: Mutex<()> = Mutex::new(());

/// How to launch a test and what counts as success.
#[derive(Debug, Clone, Copy)]
pub struct Launch {
    /// Number of ranks.
    pub ranks: usize,
    /// smdrun's expected exit status.
    pub status: i32,
    /// How many ranks must finish their body.
    pub finished: usize,
    /// smdrun's --grace: how long the others may take once a rank failed.
    pub grace: Duration,
}

impl Launch {
    /// `ranks` ranks that must all succeed.
    pub fn ranks(ranks: usize) -> Launch {
        Launch {
            ranks,
            status: 0,
            finished: ranks,
            grace: Duration::from_secs(3),
        }
    }
}

/// The smdrun to launch jobs with.
pub fn smdrun() -> PathBuf {
    if let Some(p) = env::var_os("SMD_SMDRUN") {
        return PathBuf::from(p);
    }
    let tree = PathBuf::from(env!("CARGO_MANIFEST_DIR")).join("../../../build/tools/smdrun");
    if tree.exists() {
        return tree;
    }
    PathBuf::from("smdrun")
}

/// Whether this process is a rank of `name`'s job.
fn is_rank_of(name: &str) -> bool {
    env::var(CHILD).is_ok_and(|v| v == name)
}

/// Runs `body` as every rank of a job of `launch.ranks` ranks. The body
/// forms its own communicators (to test `init_with`, say).
pub fn run_job(name: &str, launch: Launch, body: impl FnOnce()) {
    if is_rank_of(name) {
        run_rank(name, body);
    } else {
        spawn_job(name, launch);
    }
}

/// Runs `body` with the world on every rank of jobs of each size in `sizes`.
pub fn on_ranks(name: &str, sizes: &[usize], body: impl FnOnce(&Communicator)) {
    if is_rank_of(name) {
        run_rank(name, || {
            body(&Communicator::init().expect("init the world"))
        });
        return;
    }
    for &n in sizes {
        spawn_job(name, Launch::ranks(n));
    }
}

/// `#[test] fn $name()` that runs `$each::<T>(world)` for every datatype
/// `T` on jobs of each size in `$sizes`.
#[allow(unused_macros)] // not every test binary uses it
macro_rules! datatype_test {
    ($name:ident, $sizes:expr, $each:ident) => {
        #[test]
        fn $name() {
            $crate::common::on_ranks(stringify!($name), &$sizes, |world| {
                for_each_datatype!($each(world))
            });
        }
    };
}

fn run_rank(name: &str, body: impl FnOnce()) {
    body();
    println!("{DONE} {name}");
}

/// Holds off other jobs of this test binary while it lives.
pub fn one_job_at_a_time() -> MutexGuard<'static, ()> {
    JOBS.lock().unwrap_or_else(|e| e.into_inner())
}

fn spawn_job(name: &str, launch: Launch) {
    let _one_at_a_time = one_job_at_a_time();
    let smdrun = smdrun();
    let start = Instant::now();
    let out = Command::new(&smdrun)
        .arg("-n")
        .arg(launch.ranks.to_string())
        .args(["--timeout", "90", "--grace"])
        .arg(launch.grace.as_secs_f64().to_string())
        .arg(env::current_exe().expect("test binary path"))
        .args(["--exact", name, "--nocapture", "--test-threads=1"])
        .env(CHILD, name)
        .output()
        .unwrap_or_else(|e| {
            panic!(
                "cannot run {}: {e} (build it with ninja -C build, or set SMD_SMDRUN)",
                smdrun.display()
            )
        });
    let stdout = String::from_utf8_lossy(&out.stdout);
    let stderr = String::from_utf8_lossy(&out.stderr);
    let done = format!("{DONE} {name}");
    let finished = stdout.lines().filter(|l| l.ends_with(&done)).count();
    let status = out.status.code().unwrap_or(-1);
    println!(
        "{name}: {} ranks, smdrun exit {status}, {finished} finished, {:.1} s",
        launch.ranks,
        start.elapsed().as_secs_f64()
    );
    assert!(
        status == launch.status && finished == launch.finished,
        "{name} on {} ranks: smdrun exited {status} (expected {}), {finished} ranks finished \
         (expected {})\n--- stdout\n{stdout}--- stderr\n{stderr}",
        launch.ranks,
        launch.status,
        launch.finished
    );
}
