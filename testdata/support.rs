//! Shared by the integration tests of the workspace's crates, each of which
//! includes this file as a module (`#[path = ".../testdata/support.rs"]`):
//! where the reference captures are, and what a test does when an external
//! tool it needs is missing.
//!
//! Every crate including it sits one directory below the repository root.
#![allow(dead_code)] // each test binary uses its own subset

use std::path::{Path, PathBuf};
use std::process::Command;

/// `testdata/captures/<name>` in the repository. The captures are part of
/// the repository, so a missing one fails the test, naming the path.
pub fn capture(name: &str) -> PathBuf {
    let path =
        PathBuf::from(concat!(env!("CARGO_MANIFEST_DIR"), "/../testdata/captures")).join(name);
    assert!(
        path.is_file(),
        "reference capture {} is missing (the captures are part of the repository: testdata/captures/)",
        path.display()
    );
    path
}

/// Whether the tests run under CI: `CI` is set and is neither empty nor
/// "false" nor "0".
pub fn in_ci() -> bool {
    std::env::var("CI").is_ok_and(|v| !matches!(v.trim(), "" | "false" | "0"))
}

/// Whether the external `tool` runs (`<tool> --version` succeeds). When it
/// does not, a test under CI fails here, naming the tool; elsewhere this
/// prints "skipped: ..." and returns false, and the caller skips what needs
/// the tool.
pub fn have_tool(tool: &str) -> bool {
    let ok = Command::new(tool)
        .arg("--version")
        .output()
        .is_ok_and(|o| o.status.success());
    if !ok {
        assert!(
            !in_ci(),
            "{tool} is missing (`{tool} --version` did not run) and CI is set: \
             under CI a missing tool fails the test; `make deps` installs it"
        );
        println!("skipped: {tool} is not installed (`make deps` installs it)");
    }
    ok
}

/// Frames of `pcap` that tshark's display `filter` selects (iWARP
/// dissectors on; `rpcordma`, which claims the same ports, off). Callers
/// check [`have_tool`] first.
pub fn tshark_count(pcap: &Path, filter: &str) -> usize {
    let out = Command::new("tshark")
        .arg("-r")
        .arg(pcap)
        .args(["--disable-protocol", "rpcordma", "-Y", filter])
        .output()
        .expect("run tshark");
    assert!(
        out.status.success(),
        "tshark: {}",
        String::from_utf8_lossy(&out.stderr)
    );
    String::from_utf8_lossy(&out.stdout).lines().count()
}
