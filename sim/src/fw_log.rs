//! The firmware's log, readable (`rnic-sim run --fw-log`).
//!
//! * The image on the RISC-V core logs with defmt into an RTT up channel
//!   (`firmware/src/rtt.rs`): [`FwLog`], built from the image's ELF,
//!   turns the channel's octets into [`Line`]s, whatever brings them: the
//!   core's retired stores ([`RttSnoop`], what `CpuFw::rtt_snoop` keeps),
//!   or a reader on the debug port.
//! * The firmware built for the host logs through the `log` facade
//!   (`rnic-fw` feature `log`): [`init_host`] installs a logger that prints
//!   its lines with the node they came from ([`set_node`]).
//!
//! Both print as `fw A: INFO  conn 0: established with …` on stderr.

use std::cell::Cell;
use std::fmt;

use defmt_decoder::{DecodeError, Encoding, Locations, Table};

/// A node's name in the log: A, B, … by its index in the world.
pub fn node_name(n: usize) -> char {
    (b'A' + (n % 26) as u8) as char
}

/// One decoded log message.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Line {
    /// The image's timestamp (core clocks since reset), as formatted.
    pub timestamp: Option<String>,
    /// `ERROR`, `WARN`, `INFO`, `DEBUG` or `TRACE`; `None` for a
    /// `println`-style frame.
    pub level: Option<&'static str>,
    pub message: String,
    /// `file:line` of the statement, when the ELF has debug information.
    pub location: Option<String>,
}

impl fmt::Display for Line {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(f, "{:<5} {}", self.level.unwrap_or(""), self.message)?;
        if let Some(t) = &self.timestamp {
            write!(f, " [clk {t}]")?;
        }
        if let Some(l) = &self.location {
            write!(f, " ({l})")?;
        }
        Ok(())
    }
}

/// A defmt stream decoder for one image: the format strings from its ELF,
/// the octets of frames not complete yet.
pub struct FwLog {
    table: Table,
    locations: Option<Locations>,
    pending: Vec<u8>,
    /// Frames that did not decode (octets lost or foreign).
    pub malformed: u64,
}

impl FwLog {
    /// The decoder for the image `elf` (the file's bytes).
    pub fn from_elf(elf: &[u8]) -> Result<Self, String> {
        let table = Table::parse(elf)
            .map_err(|e| format!("defmt table: {e}"))?
            .ok_or("the ELF has no .defmt section")?;
        // Only with DWARF line information (not in the release image).
        let locations = table
            .get_locations(elf)
            .ok()
            .filter(|l| !l.is_empty() && table.indices().all(|i| l.contains_key(&(i as u64))));
        Ok(FwLog {
            table,
            locations,
            pending: Vec::new(),
            malformed: 0,
        })
    }

    /// Takes octets of the up channel, in order, and returns the messages
    /// they complete.
    pub fn push(&mut self, bytes: &[u8]) -> Vec<Line> {
        self.pending.extend_from_slice(bytes);
        let mut out = Vec::new();
        match self.table.encoding() {
            Encoding::Rzcobs => {
                // Frames end with a 0 octet; each is decoded on its own,
                // so one damaged frame costs only itself.
                while let Some(end) = self.pending.iter().position(|&b| b == 0) {
                    let frame: Vec<u8> = self.pending.drain(..=end).collect();
                    if frame.len() == 1 {
                        continue;
                    }
                    let mut d = self.table.new_stream_decoder();
                    d.received(&frame);
                    match d.decode() {
                        Ok(f) => out.push(line(&f, self.locations.as_ref())),
                        Err(_) => self.malformed += 1,
                    }
                }
            }
            // (`Encoding` is non-exhaustive: a later one decodes as raw
            // frames until it fails.)
            _ => loop {
                match self.table.decode(&self.pending) {
                    Ok((f, n)) => {
                        out.push(line(&f, self.locations.as_ref()));
                        self.pending.drain(..n);
                    }
                    Err(DecodeError::UnexpectedEof) => break,
                    Err(DecodeError::Malformed) => {
                        // No frame boundaries to resynchronise on.
                        self.malformed += 1;
                        self.pending.clear();
                        break;
                    }
                }
            },
        }
        out
    }
}

fn line(f: &defmt_decoder::Frame<'_>, locs: Option<&Locations>) -> Line {
    let level = f.level().map(|l| match l.as_str() {
        "error" => "ERROR",
        "warn" => "WARN",
        "info" => "INFO",
        "debug" => "DEBUG",
        _ => "TRACE",
    });
    Line {
        timestamp: f.display_timestamp().map(|t| t.to_string()),
        level,
        message: f.display_message().to_string(),
        location: locs
            .and_then(|l| l.get(&f.index()))
            .map(|l| format!("{}:{}", l.file.display(), l.line)),
    }
}

/// Where the image's RTT control block and up buffer are, from its ELF:
/// `_SEGGER_RTT`'s address and the initial value of its up channel
/// (buffer pointer and size, in `.data`'s load image), and the drop
/// counter `RTT_DROPPED` if the image has it.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct RttLayout {
    pub control: u32,
    pub buffer: u32,
    pub size: u32,
    pub dropped: Option<u32>,
}

/// Offsets in the control block (SEGGER's layout, one up channel): id 16,
/// max up 4, max down 4, then the channel: name, buffer, size, write, read,
/// flags.
const CB_BUFFER: u32 = 28;
const CB_SIZE: u32 = 32;
const CB_WRITE: u32 = 36;

impl RttLayout {
    pub fn from_elf(elf: &[u8]) -> Result<Self, String> {
        use object::{Object, ObjectSection, ObjectSymbol};
        let file = object::File::parse(elf).map_err(|e| format!("ELF: {e}"))?;
        let sym = |name: &str| {
            file.symbols()
                .find(|s| s.name() == Ok(name))
                .map(|s| s.address() as u32)
        };
        let control = sym("_SEGGER_RTT").ok_or("no _SEGGER_RTT in the ELF")?;
        let word = |addr: u32| -> Result<u32, String> {
            for s in file.sections() {
                let (a, n) = (s.address() as u32, s.size() as u32);
                if addr >= a && addr + 4 <= a + n {
                    let d = s.data().map_err(|e| format!("ELF: {e}"))?;
                    let o = (addr - a) as usize;
                    if let Some(b) = d.get(o..o + 4) {
                        return Ok(u32::from_le_bytes([b[0], b[1], b[2], b[3]]));
                    }
                }
            }
            Err(format!("no initial value at {addr:#x} in the ELF"))
        };
        let id_ok = (0..4)
            .map(|k| word(control + 4 * k))
            .collect::<Result<Vec<_>, _>>()?
            .iter()
            .flat_map(|w| w.to_le_bytes())
            .take(10)
            .eq(*b"SEGGER RTT");
        if !id_ok {
            return Err("_SEGGER_RTT does not start with the id \"SEGGER RTT\"".into());
        }
        Ok(RttLayout {
            control,
            buffer: word(control + CB_BUFFER)?,
            size: word(control + CB_SIZE)?,
            dropped: sym("RTT_DROPPED"),
        })
    }
}

/// The up channel as the core's stores show it: a copy of the buffer kept
/// from every store into it, and the octets between the write positions
/// the firmware publishes. It never moves the read position (it cannot
/// write the core's memory): a firmware in NoBlockSkip mode stops writing
/// once the buffer holds `size - 1` unread octets.
pub struct RttSnoop {
    pub layout: RttLayout,
    shadow: Vec<u8>,
    write: u32,
    out: Vec<u8>,
    /// The image's count of dropped frames, as last stored.
    pub dropped: u32,
    /// Octets published so far.
    pub octets: u64,
}

impl RttSnoop {
    pub fn new(layout: RttLayout) -> Self {
        RttSnoop {
            layout,
            shadow: vec![0; layout.size as usize],
            write: 0,
            out: Vec::new(),
            dropped: 0,
            octets: 0,
        }
    }

    /// One retired store: `addr` the word's byte address, `strb` its byte
    /// lanes, `wdata` the word (lanes in place).
    pub fn store(&mut self, addr: u32, strb: u32, wdata: u32) {
        let l = self.layout;
        let bytes = wdata.to_le_bytes();
        if addr.wrapping_sub(l.buffer) < l.size {
            for (k, b) in bytes.iter().enumerate() {
                let o = (addr - l.buffer) as usize + k;
                if strb >> k & 1 == 1 && o < self.shadow.len() {
                    self.shadow[o] = *b;
                }
            }
        } else if addr == l.control + CB_WRITE && strb == 0xF {
            let w = wdata % l.size.max(1);
            let mut r = self.write;
            while r != w {
                self.out.push(self.shadow[r as usize]);
                self.octets += 1;
                r = (r + 1) % l.size;
            }
            self.write = w;
        } else if Some(addr) == l.dropped && strb == 0xF {
            self.dropped = wdata;
        }
    }

    /// The octets published since the last call.
    pub fn take(&mut self) -> Vec<u8> {
        std::mem::take(&mut self.out)
    }
}

thread_local! {
    static NODE: Cell<Option<usize>> = const { Cell::new(None) };
}

/// The node whose firmware runs now on this thread (its log lines carry
/// its name), or none.
pub fn set_node(n: Option<usize>) {
    NODE.with(|c| c.set(n));
}

/// Prints `line` as node `n`'s.
pub fn print_line(n: usize, line: &Line) {
    eprintln!("fw {}: {line}", node_name(n));
}

/// The logger of the firmware built for the host: its `log` records
/// (target `rnic_fw`) at `level` or above, on stderr, with the node's
/// name. Other crates' records are not printed.
struct HostLogger {
    level: log::LevelFilter,
}

impl log::Log for HostLogger {
    fn enabled(&self, m: &log::Metadata<'_>) -> bool {
        m.level() <= self.level && m.target().starts_with("rnic_fw")
    }

    fn log(&self, r: &log::Record<'_>) {
        if !self.enabled(r.metadata()) {
            return;
        }
        let node = NODE.with(|c| c.get()).map_or('?', node_name);
        eprintln!("fw {node}: {:<5} {}", r.level().as_str(), r.args());
    }

    fn flush(&self) {}
}

/// Prints the host-built firmware's log at `level` and above (once per
/// process: a later call changes the level only).
pub fn init_host(level: log::LevelFilter) {
    let _ = log::set_boxed_logger(Box::new(HostLogger { level }));
    log::set_max_level(level);
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn snoop_follows_published_writes_and_wraps() {
        let layout = RttLayout {
            control: 0x1000_0008,
            buffer: 0x1000_0100,
            size: 8,
            dropped: Some(0x1000_0200),
        };
        let mut s = RttSnoop::new(layout);
        s.store(0x1000_0100, 0b0011, u32::from_le_bytes([b'x', b'y', 0, 0]));
        // not published yet
        assert!(s.take().is_empty());
        s.store(0x1000_0008 + CB_WRITE, 0xF, 2);
        assert_eq!(s.take(), b"xy");
        s.store(0x1000_0104, 0b1100, u32::from_le_bytes([0, 0, b'a', b'b']));
        s.store(0x1000_0100, 0b0001, b'c' as u32);
        s.store(0x1000_0008 + CB_WRITE, 0xF, 1);
        assert_eq!(s.take(), b"\0\0\0\0abc");
        s.store(0x1000_0200, 0xF, 3);
        assert_eq!(s.dropped, 3);
    }

    #[test]
    fn node_names() {
        assert_eq!((node_name(0), node_name(1)), ('A', 'B'));
    }
}
