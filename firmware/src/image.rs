//! The firmware image as a host handles it (feature `image`, std): built
//! for the RISC-V core with the cargo that runs the caller, and loaded from
//! its ELF into the core's instruction memory. The co-simulation (`rnic-sim
//! --fw cpu`) and the core's lock-step tests (`rnic-hw`, `cpu::firmware`)
//! load the same file the board's block RAM is initialised from.

use std::format;
use std::path::PathBuf;
use std::string::String;
use std::vec;
use std::vec::Vec;

/// The target the image is built for: the core is RV32IM, machine mode
/// (docs/cpu.md).
pub const TARGET: &str = "riscv32im-unknown-none-elf";

/// `e_machine` of a RISC-V ELF.
const EM_RISCV: u16 = 243;
/// `e_flags` bit: the image uses compressed instructions.
const EF_RISCV_RVC: u32 = 1;
/// `p_type` of a loadable segment.
const PT_LOAD: u32 = 1;

/// Builds the image (`cargo build -p rnic-fw --release --target`
/// [`TARGET`], what `make firmware-elf` runs; quick when it is current)
/// with the cargo of the calling build, and returns the ELF's path or why
/// it could not be built (e.g. the target is not installed).
pub fn build_elf() -> Result<PathBuf, String> {
    let root = PathBuf::from(env!("CARGO_MANIFEST_DIR")).join("..");
    let out = std::process::Command::new(env!("CARGO"))
        .current_dir(&root)
        .args([
            "build",
            "-q",
            "-p",
            "rnic-fw",
            "--release",
            "--target",
            TARGET,
            "--message-format=json",
        ])
        .output()
        .map_err(|e| format!("cargo: {e}"))?;
    if !out.status.success() {
        return Err(format!(
            "cargo build -p rnic-fw --target {TARGET} failed: {}",
            String::from_utf8_lossy(&out.stderr)
        ));
    }
    let stdout = String::from_utf8_lossy(&out.stdout);
    for line in stdout.lines() {
        if !line.contains("\"reason\":\"compiler-artifact\"") {
            continue;
        }
        if let Some(i) = line.find("\"executable\":\"") {
            let rest = &line[i + 14..];
            let path = &rest[..rest.find('"').ok_or("bad cargo message")?];
            if path.ends_with("/rnic-fw") {
                return Ok(PathBuf::from(path));
            }
        }
    }
    Err("cargo built no rnic-fw executable".into())
}

/// The image as the core's instruction memory holds it: the `PT_LOAD`
/// segments of a 32-bit little-endian RISC-V ELF at their load addresses,
/// which must lie in the first `imem_bytes` (`.data` is loaded there and
/// copied to data memory by the startup code). Returns the words up to the
/// last loaded one, and the entry point. A malformed or foreign file, an
/// image with compressed instructions (the core has no C extension) and a
/// segment outside instruction memory are errors.
pub fn load_elf(d: &[u8], imem_bytes: usize) -> Result<(Vec<u32>, u32), String> {
    let bytes = |o: usize, n: usize| {
        d.get(o..o + n)
            .ok_or_else(|| format!("truncated ELF (offset {o:#x})"))
    };
    let u16_at = |o: usize| bytes(o, 2).map(|b| u16::from_le_bytes([b[0], b[1]]));
    let u32_at = |o: usize| bytes(o, 4).map(|b| u32::from_le_bytes([b[0], b[1], b[2], b[3]]));
    if d.len() < 52 || &d[..4] != b"\x7fELF" || d[4] != 1 || d[5] != 1 {
        return Err("not a 32-bit little-endian ELF".into());
    }
    if u16_at(0x12)? != EM_RISCV {
        return Err("not a RISC-V ELF".into());
    }
    if u32_at(0x24)? & EF_RISCV_RVC != 0 {
        return Err("ELF uses compressed instructions (RVC)".into());
    }
    let entry = u32_at(0x18)?;
    let (phoff, phentsize, phnum) = (u32_at(0x1C)? as usize, u16_at(0x2A)?, u16_at(0x2C)?);
    let mut imem = vec![0u8; imem_bytes];
    let mut end = 0;
    for k in 0..phnum as usize {
        let p = phoff + k * phentsize as usize;
        let (typ, off, paddr, filesz) =
            (u32_at(p)?, u32_at(p + 4)?, u32_at(p + 12)?, u32_at(p + 16)?);
        if typ != PT_LOAD || filesz == 0 {
            continue;
        }
        let (a, n) = (paddr as usize, filesz as usize);
        if a + n > imem_bytes {
            return Err(format!(
                "segment at {paddr:#x} ({n} B) outside instruction memory ({imem_bytes} B)"
            ));
        }
        imem[a..a + n].copy_from_slice(bytes(off as usize, n)?);
        end = end.max(a + n);
    }
    let words = imem[..end.next_multiple_of(4)]
        .chunks(4)
        .map(|c| u32::from_le_bytes([c[0], c[1], c[2], c[3]]))
        .collect();
    Ok((words, entry))
}

/// The whole instruction memory as `$readmemh` / `ecpbram` read it: one
/// 32-bit word per line, 8 lowercase hex digits, `imem_bytes / 4` lines
/// (the words past the image are 0). `words` is what [`load_elf`] returns.
pub fn imem_hex(words: &[u32], imem_bytes: usize) -> Result<String, String> {
    let depth = imem_bytes / 4;
    if words.len() > depth {
        return Err(format!(
            "image of {} octets is larger than the {imem_bytes}-octet instruction memory",
            words.len() * 4
        ));
    }
    let mut out = String::with_capacity(depth * 9);
    for k in 0..depth {
        out.push_str(&format!("{:08x}\n", words.get(k).copied().unwrap_or(0)));
    }
    Ok(out)
}

#[cfg(test)]
mod tests {
    use super::*;

    fn header() -> Vec<u8> {
        let mut h = vec![0u8; 52];
        h[..4].copy_from_slice(b"\x7fELF");
        h[4] = 1;
        h[5] = 1;
        h[0x12] = EM_RISCV as u8;
        h
    }

    /// The loader refuses what the core cannot run.
    #[test]
    fn refuses_compressed_and_foreign_images() {
        let mut h = header();
        assert!(load_elf(&h, 4096).is_ok());
        h[0x24] = 1;
        assert!(load_elf(&h, 4096).unwrap_err().contains("RVC"));
        h[0x24] = 0;
        h[0x12] = 62;
        assert!(load_elf(&h, 4096).is_err());
    }

    /// A segment is placed at its load address; one past the memory, or
    /// whose bytes the file does not hold, is an error, not a panic.
    #[test]
    fn places_segments_and_refuses_bad_ones() {
        let mut h = header();
        h[0x1C] = 52; // e_phoff
        h[0x2A] = 32; // e_phentsize
        h[0x2C] = 1; // e_phnum
        let mut ph = vec![0u8; 32];
        ph[0] = PT_LOAD as u8;
        ph[4] = 84; // p_offset
        ph[12] = 8; // p_paddr
        ph[16] = 4; // p_filesz
        h.extend_from_slice(&ph);
        h.extend_from_slice(&0x1234_5678u32.to_le_bytes());
        let (words, entry) = load_elf(&h, 4096).unwrap();
        assert_eq!((words, entry), (vec![0, 0, 0x1234_5678], 0));
        assert!(load_elf(&h, 8).unwrap_err().contains("outside"));
        h[52 + 16] = 40; // p_filesz past the file's end
        assert!(load_elf(&h, 4096).unwrap_err().contains("truncated"));
    }

    #[test]
    fn hex_fills_the_memory_one_word_per_line() {
        let hex = imem_hex(&[0x0000_0013, 0xDEAD_BEEF], 16).unwrap();
        assert_eq!(hex, "00000013\ndeadbeef\n00000000\n00000000\n");
        assert!(imem_hex(&[1, 2, 3], 8).unwrap_err().contains("larger"));
    }
}
