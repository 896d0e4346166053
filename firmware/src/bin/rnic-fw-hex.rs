//! `rnic-fw-hex ELF OUT.hex [IMEM_BYTES]`: the firmware ELF as the board's
//! instruction memory holds it, for `ecpbram` (scripts/bitstream.sh): one
//! 32-bit word per line, the whole memory (default 131072 octets, the
//! `Rv32Fw` core's). Refuses an image the core cannot run (compressed
//! instructions, a segment outside instruction memory, an entry point other
//! than 0) with a message and exit status 1.

fn main() {
    let args: Vec<String> = std::env::args().skip(1).collect();
    if !(2..=3).contains(&args.len()) {
        die("usage: rnic-fw-hex ELF OUT.hex [IMEM_BYTES]");
    }
    let imem_bytes = match args.get(2) {
        Some(n) => n
            .parse()
            .unwrap_or_else(|_| die(&format!("IMEM_BYTES: not a number: {n}"))),
        None => 128 << 10,
    };
    let elf = std::fs::read(&args[0]).unwrap_or_else(|e| die(&format!("{}: {e}", args[0])));
    let (words, entry) = rnic_fw::image::load_elf(&elf, imem_bytes)
        .unwrap_or_else(|e| die(&format!("{}: {e}", args[0])));
    if entry != 0 {
        die(&format!(
            "{}: entry {entry:#x}, the core starts at 0",
            args[0]
        ));
    }
    let hex = rnic_fw::image::imem_hex(&words, imem_bytes)
        .unwrap_or_else(|e| die(&format!("{}: {e}", args[0])));
    std::fs::write(&args[1], hex).unwrap_or_else(|e| die(&format!("{}: {e}", args[1])));
    println!(
        "rnic-fw-hex: {} ({} octets of {imem_bytes}) -> {}",
        args[0],
        words.len() * 4,
        args[1]
    );
}

fn die(msg: &str) -> ! {
    eprintln!("rnic-fw-hex: {msg}");
    std::process::exit(1)
}
