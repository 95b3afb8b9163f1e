//! What the borrow checker must refuse around nonblocking operations, with
//! the error it must refuse it with: each case is compiled by rustc against
//! the smd library under test (`--emit=metadata`: checked, not linked),
//! next to a control case that must compile, so that a failure for an
//! unrelated reason (a typo, a missing crate) cannot pass.

use std::path::{Path, PathBuf};
use std::process::Command;

/// rustc of the toolchain that built this test (next to its cargo).
fn rustc() -> PathBuf {
    let next_to_cargo = Path::new(env!("CARGO")).with_file_name("rustc");
    if next_to_cargo.exists() {
        next_to_cargo
    } else {
        PathBuf::from("rustc")
    }
}

/// The newest `libsmd-*.rlib` next to this test binary.
fn smd_rlib(deps: &Path) -> PathBuf {
    std::fs::read_dir(deps)
        .expect("read target/<profile>/deps")
        .filter_map(|e| e.ok())
        .filter(|e| {
            let name = e.file_name();
            let name = name.to_string_lossy();
            name.starts_with("libsmd-") && name.ends_with(".rlib")
        })
        .max_by_key(|e| e.metadata().and_then(|m| m.modified()).ok())
        .map(|e| e.path())
        .expect("libsmd-*.rlib next to the test binary")
}

/// Compiles `body` as the body of `fn case(world: &Communicator) ->
/// smd::Result<()>`; Ok, or Err with rustc's messages.
fn compile(name: &str, body: &str) -> Result<(), String> {
    let exe = std::env::current_exe().unwrap();
    let deps = exe.parent().unwrap();
    let dir = PathBuf::from(env!("CARGO_TARGET_TMPDIR")).join("borrowck");
    std::fs::create_dir_all(&dir).unwrap();
    let src = dir.join(format!("{name}.rs"));
    let text = format!(
        "#![allow(unused)]\nuse smd::{{Communicator, Op}};\n\
         pub fn case(world: &Communicator) -> smd::Result<()> {{\n{body}\n}}\n"
    );
    std::fs::write(&src, text).unwrap();
    let out = Command::new(rustc())
        .args([
            "--edition",
            "2021",
            "--crate-type",
            "lib",
            "--emit=metadata",
        ])
        .arg("--crate-name")
        .arg(name)
        .arg("--out-dir")
        .arg(&dir)
        .arg("--extern")
        .arg(format!("smd={}", smd_rlib(deps).display()))
        .arg("-L")
        .arg(format!("dependency={}", deps.display()))
        .arg(&src)
        .output()
        .expect("run rustc");
    if out.status.success() {
        Ok(())
    } else {
        Err(String::from_utf8_lossy(&out.stderr).into_owned())
    }
}

fn refused(name: &str, body: &str, error: &str) {
    match compile(name, body) {
        Ok(()) => panic!("{name}: compiled, but must be refused with {error}"),
        Err(messages) => assert!(
            messages.contains(error),
            "{name}: refused, but not with {error}:\n{messages}"
        ),
    }
}

#[test]
fn control_cases_compile() {
    let cases = [
        (
            "read_after_the_scope",
            "let mut buf = vec![1.0f32; 4];
             smd::scope(|s| world.iall_reduce(s, &mut buf, Op::Sum)?.wait())?;
             buf[0] += 1.0;
             Ok(())",
        ),
        (
            "forget_then_read_after_the_scope",
            "let mut buf = vec![1.0f32; 4];
             smd::scope(|s| {
                 std::mem::forget(world.iall_reduce(s, &mut buf, Op::Sum)?);
                 Ok::<_, smd::Error>(())
             })?;
             let x = buf[0];
             Ok(())",
        ),
    ];
    for (name, body) in cases {
        if let Err(messages) = compile(name, body) {
            panic!("{name} must compile:\n{messages}");
        }
    }
}

/// Each `test: "error" = body` is a test that `body` is refused with `error`.
macro_rules! must_refuse {
    ($($test:ident: $error:literal = $body:expr;)*) => {$(
        #[test]
        fn $test() {
            refused(stringify!($test), &$body, $error);
        }
    )*};
}

/// A case body that lends `buf` to an allreduce started in a scope, whose
/// request is `r`, and then runs `then` in the scope.
fn lent(then: &str) -> String {
    format!(
        "let mut buf = vec![1.0f32; 4];
         smd::scope(|s| {{
             let r = world.iall_reduce(s, &mut buf, Op::Sum)?;
             {then}
         }})?;
         Ok(())"
    )
}

must_refuse! {
    a_lent_buffer_cannot_be_written: "E0499" = lent("buf[0] = 2.0; r.wait()");
    a_lent_buffer_cannot_be_read: "E0502" = lent("let x = buf[0]; r.wait()");
    forgetting_the_request_does_not_end_the_loan: "E0499"
        = lent("std::mem::forget(r); buf[0] = 2.0; Ok(())");
    the_loan_lasts_until_the_scope_ends: "E0499" = lent("r.wait()?; buf[0] = 2.0; Ok(())");
}

#[test]
fn a_buffer_must_outlive_the_scope() {
    refused(
        "local_buffer",
        "smd::scope(|s| {
             let mut local = vec![0.0f32; 4];
             std::mem::forget(world.iall_reduce(s, &mut local, Op::Sum)?);
             Ok(())
         })",
        "E0597",
    );
    // Nor can an inner scope's buffer be lent to an outer scope.
    refused(
        "buffer_of_an_inner_scope",
        "smd::scope(|outer| {
             let mut local = vec![0.0f32; 4];
             smd::scope(|_inner| {
                 std::mem::forget(world.iall_reduce(outer, &mut local, Op::Sum)?);
                 Ok(())
             })
         })",
        "E0597",
    );
}

#[test]
fn a_communicator_must_outlive_the_scope() {
    refused(
        "local_communicator",
        "smd::scope(|s| {
             let dup = world.dup()?;
             dup.ibarrier(s)?.wait()?;
             Ok(())
         })",
        "E0597",
    );
}

#[test]
fn a_request_cannot_leave_its_scope() {
    refused(
        "escaping_request",
        "let r = smd::scope(|s| world.ibarrier(s))?;
         Ok(())",
        "lifetime may not live long enough",
    );
}
