//! Finds libsmd and tells rustc to link it.
//!
//! In this order (the first that answers wins):
//! 1. `SMD_LIB_DIR`: a directory holding `libsmd.so` (a build tree or an
//!    install prefix's libdir; absolute, as build scripts run in the
//!    crate's directory);
//! 2. `pkg-config smd` (an installed smd; for an uninstalled one point
//!    `PKG_CONFIG_PATH` at the absolute path of `build/meson-uninstalled`;
//!    `PKG_CONFIG` names the command);
//! 3. the Meson build tree of this checkout, `../../../build/src`.
//!
//! The bindings themselves are pregenerated (src/bindings.rs, see
//! gen-bindings.sh), so building needs neither bindgen nor libclang.
//!
//! libsmd is linked through symlinks in `$OUT_DIR/lib`: Cargo puts search
//! paths inside the target directory (and only those) on the dynamic
//! library path of what it runs (`cargo test`, `cargo run`, doctests), so
//! tests and examples find libsmd without LD_LIBRARY_PATH or an rpath
//! baked into the binaries. libsmd resolves its own real location to find
//! its plugins, so the symlinks do not hide them.
//!
//! Metadata for crates that depend on this one (`links = "smd"`):
//! `DEP_SMD_LIB_DIR` (the real directory of libsmd) and `DEP_SMD_INCLUDE`
//! (the directory of smd.h in this checkout).

use std::env;
use std::ffi::OsString;
use std::path::{Path, PathBuf};
use std::process::{self, Command};

/// The oldest libsmd these bindings were generated for (include/smd.h).
const MIN_VERSION: &str = "0.1.0";

fn main() {
    println!("cargo:rerun-if-changed=build.rs");
    for var in [
        "SMD_LIB_DIR",
        "PKG_CONFIG",
        "PKG_CONFIG_PATH",
        "PKG_CONFIG_LIBDIR",
    ] {
        println!("cargo:rerun-if-env-changed={var}");
    }
    let manifest_dir = PathBuf::from(env::var_os("CARGO_MANIFEST_DIR").expect("set by cargo"));
    let out_dir = PathBuf::from(env::var_os("OUT_DIR").expect("set by cargo"));

    let (lib_dir, how) = match find_libsmd(&manifest_dir) {
        Ok(found) => found,
        Err(why) => {
            eprintln!("smd-sys: cannot find libsmd.\n{why}");
            eprintln!(
                "Build it (meson setup build && ninja -C build, from the repository root), \
                 or set SMD_LIB_DIR to the directory holding libsmd.so, or make \
                 `pkg-config smd` find it (PKG_CONFIG_PATH)."
            );
            process::exit(1);
        }
    };

    let link_dir = out_dir.join("lib");
    if let Err(e) = link_into(&lib_dir, &link_dir) {
        eprintln!(
            "smd-sys: cannot link {} into {}: {e}",
            lib_dir.display(),
            link_dir.display()
        );
        process::exit(1);
    }
    println!("cargo:rustc-link-search=native={}", link_dir.display());
    println!("cargo:rustc-link-lib=dylib=smd");
    println!("cargo:lib_dir={}", lib_dir.display());
    let include = manifest_dir.join("../../../include");
    if let Ok(include) = include.canonicalize() {
        println!("cargo:include={}", include.display());
    }
    // Shown by `cargo build -vv`: which libsmd this build uses.
    println!("smd-sys: libsmd from {how}: {}", lib_dir.display());
}

/// The directory of libsmd.so and how it was found.
fn find_libsmd(manifest_dir: &Path) -> Result<(PathBuf, &'static str), String> {
    let mut tried = Vec::new();
    if let Some(dir) = env::var_os("SMD_LIB_DIR") {
        let dir = PathBuf::from(dir);
        if has_libsmd(&dir) {
            return Ok((absolute(&dir), "SMD_LIB_DIR"));
        }
        // An explicit choice that is wrong is an error, not a reason to
        // quietly link some other libsmd.
        return Err(format!("SMD_LIB_DIR={} holds no libsmd.so", dir.display()));
    }
    match pkg_config_libdir() {
        Ok(dir) => return Ok((absolute(&dir), "pkg-config")),
        Err(why) => tried.push(format!("pkg-config: {why}")),
    }
    let tree = manifest_dir.join("../../../build/src");
    if has_libsmd(&tree) {
        return Ok((absolute(&tree), "the build tree"));
    }
    tried.push(format!(
        "build tree: no {}",
        tree.join("libsmd.so").display()
    ));
    Err(tried.join("\n"))
}

fn has_libsmd(dir: &Path) -> bool {
    dir.join("libsmd.so").exists()
}

fn absolute(dir: &Path) -> PathBuf {
    dir.canonicalize().unwrap_or_else(|_| dir.to_path_buf())
}

/// Where `pkg-config smd` says libsmd is, after checking the version: the
/// first of its `-L` directories and its libdir that holds libsmd.so (an
/// uninstalled smd.pc has the build tree in `-L` only; pkg-config leaves
/// out `-L` for system directories, which libdir names).
fn pkg_config_libdir() -> Result<PathBuf, String> {
    let program = env::var_os("PKG_CONFIG").unwrap_or_else(|| OsString::from("pkg-config"));
    let run = |args: &[&str]| {
        let out = Command::new(&program)
            .args(args)
            .output()
            .map_err(|e| format!("cannot run {}: {e}", program.to_string_lossy()))?;
        Ok::<_, String>((
            out.status.success(),
            String::from_utf8_lossy(&out.stdout).into_owned(),
        ))
    };
    let (known, _) = run(&[&format!("--atleast-version={MIN_VERSION}"), "smd"])?;
    if !known {
        return Err(format!("no smd >= {MIN_VERSION} known to pkg-config"));
    }
    let (_, flags) = run(&["--libs-only-L", "smd"])?;
    let (_, libdir) = run(&["--variable=libdir", "smd"])?;
    let candidates: Vec<PathBuf> = flags
        .split_whitespace()
        .filter_map(|f| f.strip_prefix("-L"))
        .chain(Some(libdir.trim()).filter(|d| !d.is_empty()))
        .map(PathBuf::from)
        .collect();
    candidates
        .iter()
        .find(|d| has_libsmd(d))
        .cloned()
        .ok_or_else(|| format!("no libsmd.so in the directories smd.pc names: {candidates:?}"))
}

/// Makes `link_dir` hold symlinks to libsmd's shared objects in `lib_dir`.
fn link_into(lib_dir: &Path, link_dir: &Path) -> std::io::Result<()> {
    std::fs::create_dir_all(link_dir)?;
    for entry in std::fs::read_dir(lib_dir)? {
        let name = entry?.file_name();
        let is_libsmd = name
            .to_str()
            .is_some_and(|n| n == "libsmd.so" || n.starts_with("libsmd.so."));
        if !is_libsmd {
            continue;
        }
        let link = link_dir.join(&name);
        if link.symlink_metadata().is_ok() {
            std::fs::remove_file(&link)?;
        }
        std::os::unix::fs::symlink(lib_dir.join(&name), &link)?;
    }
    Ok(())
}
