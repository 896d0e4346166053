//! Writing frames to a pcap file (LINKTYPE_ETHERNET, frames without FCS) that
//! Wireshark/tshark decode as iWARP.

use std::fs::File;
use std::io::BufWriter;
use std::path::Path;
use std::time::Duration;

use pcap_file::pcap::{PcapHeader, PcapPacket, PcapWriter};
use pcap_file::DataLink;

/// Ethernet wire overhead per frame (preamble+SFD 8, FCS 4, gap 12).
const WIRE_OVERHEAD: u64 = 24;
/// Picoseconds per octet at 10 Gb/s.
const PS_PER_OCTET_10G: u64 = 800;

/// A pcap being written. Timestamps, unless given, advance as if each frame
/// were serialised back to back on a 10 Gb/s line.
pub struct PcapSink {
    writer: PcapWriter<BufWriter<File>>,
    clock_ps: u64,
}

impl PcapSink {
    /// Creates (truncates) the file, creating its folder.
    pub fn create(path: &Path) -> std::io::Result<PcapSink> {
        if let Some(dir) = path.parent() {
            std::fs::create_dir_all(dir)?;
        }
        let header = PcapHeader {
            datalink: DataLink::ETHERNET,
            ..Default::default()
        };
        let writer =
            PcapWriter::with_header(BufWriter::new(File::create(path)?), header).map_err(to_io)?;
        Ok(PcapSink {
            writer,
            clock_ps: 0,
        })
    }

    /// Writes a frame at the running line-rate clock.
    pub fn write(&mut self, frame: &[u8]) -> std::io::Result<()> {
        let at = Duration::from_nanos(self.clock_ps / 1000);
        self.clock_ps += (frame.len() as u64 + WIRE_OVERHEAD) * PS_PER_OCTET_10G;
        self.write_at(frame, at)
    }

    /// Writes a frame with an explicit timestamp.
    pub fn write_at(&mut self, frame: &[u8], at: Duration) -> std::io::Result<()> {
        let packet = PcapPacket::new(at, frame.len() as u32, frame);
        self.writer.write_packet(&packet).map(|_| ()).map_err(to_io)
    }

    /// Flushes and closes the file.
    pub fn finish(self) -> std::io::Result<()> {
        use std::io::Write;
        self.writer.into_writer().flush()
    }
}

fn to_io(e: pcap_file::PcapError) -> std::io::Error {
    std::io::Error::other(e.to_string())
}
