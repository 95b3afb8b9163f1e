//! examples/train_dp.rs end to end: on 1, 2 and 4 ranks the data-parallel
//! run must equal the single-process one (the example checks and says PASS).

mod common;

use std::path::PathBuf;
use std::process::Command;

/// The example binary, which `cargo test` builds next to the test binaries.
fn train_dp() -> PathBuf {
    let exe = std::env::current_exe().unwrap();
    let profile_dir = exe.parent().and_then(|deps| deps.parent()).unwrap();
    profile_dir.join("examples").join("train_dp")
}

#[test]
fn train_dp_matches_the_single_process_run() {
    let example = train_dp();
    assert!(
        example.exists(),
        "{} not built (cargo test builds examples)",
        example.display()
    );
    for ranks in [1, 2, 4] {
        let _one_at_a_time = common::one_job_at_a_time();
        let out = Command::new(common::smdrun())
            .args(["-n", &ranks.to_string(), "--timeout", "60"])
            .arg(&example)
            .args(["--steps", "200"])
            .output()
            .expect("run smdrun");
        let stdout = String::from_utf8_lossy(&out.stdout);
        assert!(
            out.status.success() && stdout.lines().any(|l| l == "[0] PASS"),
            "train_dp on {ranks} ranks: {}\n{stdout}{}",
            out.status,
            String::from_utf8_lossy(&out.stderr)
        );
    }
}
