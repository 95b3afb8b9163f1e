//! src/bindings.rs must be exactly what gen-bindings.sh makes of
//! include/smd.h today: a change to the header without regenerating (or a
//! hand edit of the bindings) fails here.
//!
//! Needs the bindgen the script names (other versions format the same
//! bindings differently) and rustfmt: without them it fails, saying so,
//! rather than passing unchecked. Meson runs it as its own test only where
//! they are installed and reports it skipped elsewhere (bindings/rust/
//! meson.build); `cargo test -- --skip bindings_match_the_header` leaves it
//! out by hand. `BINDGEN` names the command.

use std::env;
use std::path::{Path, PathBuf};
use std::process::Command;

fn crate_dir() -> PathBuf {
    PathBuf::from(env!("CARGO_MANIFEST_DIR"))
}

/// The generator the script was written for ("bindgen 0.60.1").
fn expected_generator(script: &Path) -> String {
    let text = std::fs::read_to_string(script).expect("read gen-bindings.sh");
    text.lines()
        .find_map(|l| l.strip_prefix("# generator: "))
        .expect("gen-bindings.sh names its generator")
        .trim()
        .to_string()
}

fn version_of(program: &str) -> Option<String> {
    let out = Command::new(program).arg("--version").output().ok()?;
    out.status
        .success()
        .then(|| String::from_utf8_lossy(&out.stdout).trim().to_string())
}

#[test]
fn bindings_match_the_header() {
    let script = crate_dir().join("gen-bindings.sh");
    let bindgen = env::var("BINDGEN").unwrap_or_else(|_| "bindgen".to_string());
    let installed = version_of(&bindgen)
        .unwrap_or_else(|| panic!("{bindgen} not found: cannot check src/bindings.rs against smd.h"));
    assert!(
        version_of("rustfmt").is_some(),
        "rustfmt not found: cannot check src/bindings.rs against smd.h"
    );
    let expected = expected_generator(&script);
    assert_eq!(
        installed, expected,
        "the installed bindgen is not the one that generated src/bindings.rs; \
         formatting differs between versions"
    );

    let fresh = PathBuf::from(env!("CARGO_TARGET_TMPDIR")).join("bindings.rs");
    let status = Command::new("sh")
        .arg(&script)
        .arg(&fresh)
        .env("BINDGEN", &bindgen)
        .status()
        .expect("run gen-bindings.sh");
    assert!(status.success(), "gen-bindings.sh failed: {status}");

    let committed = std::fs::read_to_string(crate_dir().join("src/bindings.rs")).unwrap();
    let regenerated = std::fs::read_to_string(&fresh).unwrap();
    if committed != regenerated {
        let first = committed
            .lines()
            .zip(regenerated.lines())
            .position(|(a, b)| a != b)
            .unwrap_or_else(|| committed.lines().count().min(regenerated.lines().count()));
        panic!(
            "src/bindings.rs is stale: it differs from what bindgen makes of include/smd.h \
             from line {} on (fresh copy: {}). Run bindings/rust/smd-sys/gen-bindings.sh \
             and commit the result.",
            first + 1,
            fresh.display()
        );
    }
}
