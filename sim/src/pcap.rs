//! Writing frames to a pcap file (LINKTYPE_ETHERNET, frames without FCS) that
//! Wireshark/tshark decode as iWARP. Used by the single-model runner
//! (`model_run`, line-rate timestamps in microseconds) and by the link model
//! (`link`, cycle timestamps in nanoseconds, flushed while still in use).

use std::fs::File;
use std::io::{BufWriter, Write};
use std::path::Path;
use std::sync::{Arc, Mutex};
use std::time::Duration;

use pcap_file::pcap::{PcapHeader, PcapPacket, PcapWriter};
use pcap_file::{DataLink, Endianness, TsResolution};

use crate::link::WIRE_OVERHEAD;

/// Picoseconds per octet at 10 Gb/s.
const PS_PER_OCTET_10G: u64 = 800;

/// The file, shared between the pcap writer and the sink, so the sink can
/// flush it while the writer keeps it (`PcapWriter` does not lend its inner
/// writer).
#[derive(Clone)]
struct SharedFile(Arc<Mutex<BufWriter<File>>>);

impl Write for SharedFile {
    fn write(&mut self, buf: &[u8]) -> std::io::Result<usize> {
        self.0.lock().unwrap().write(buf)
    }
    fn flush(&mut self) -> std::io::Result<()> {
        self.0.lock().unwrap().flush()
    }
}

/// A pcap being written. Timestamps, unless given, advance as if each frame
/// were serialised back to back on a 10 Gb/s line.
pub struct PcapSink {
    writer: PcapWriter<SharedFile>,
    file: SharedFile,
    clock_ps: u64,
}

impl PcapSink {
    /// Creates (truncates) the file, creating its folder; microsecond
    /// timestamps.
    pub fn create(path: &Path) -> std::io::Result<PcapSink> {
        Self::create_with(path, TsResolution::MicroSecond)
    }

    /// [`PcapSink::create`] with the given timestamp resolution
    /// (`NanoSecond` for cycle-exact times: a 156.25 MHz cycle is 6.4 ns).
    pub fn create_with(path: &Path, resolution: TsResolution) -> std::io::Result<PcapSink> {
        if let Some(dir) = path.parent() {
            std::fs::create_dir_all(dir)?;
        }
        let header = PcapHeader {
            datalink: DataLink::ETHERNET,
            ts_resolution: resolution,
            endianness: Endianness::native(),
            ..Default::default()
        };
        let file = SharedFile(Arc::new(Mutex::new(BufWriter::new(File::create(path)?))));
        let writer = PcapWriter::with_header(file.clone(), header).map_err(to_io)?;
        Ok(PcapSink {
            writer,
            file,
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

    /// Flushes what was written so far to the file (it stays open).
    pub fn flush(&mut self) -> std::io::Result<()> {
        self.file.flush()
    }

    /// Flushes and closes the file.
    pub fn finish(mut self) -> std::io::Result<()> {
        self.flush()
    }
}

/// Every frame of the pcap file at `path`: (timestamp, octets), in file
/// order.
pub fn read_frames(path: &Path) -> std::io::Result<Vec<(Duration, Vec<u8>)>> {
    let mut r = pcap_file::pcap::PcapReader::new(File::open(path)?).map_err(to_io)?;
    let mut v = Vec::new();
    while let Some(p) = r.next_packet() {
        let p = p.map_err(to_io)?;
        v.push((p.timestamp, p.data.into_owned()));
    }
    Ok(v)
}

fn to_io(e: pcap_file::PcapError) -> std::io::Error {
    std::io::Error::other(e.to_string())
}

#[cfg(test)]
mod tests {
    use super::*;
    use pcap_file::pcap::PcapReader;

    fn read(path: &Path) -> (PcapHeader, Vec<(Duration, Vec<u8>)>) {
        let mut r = PcapReader::new(File::open(path).unwrap()).unwrap();
        while let Some(p) = r.next_packet() {
            let p = p.unwrap();
            assert_eq!(p.orig_len as usize, p.data.len(), "frames kept whole");
        }
        (r.header(), read_frames(path).unwrap())
    }

    fn tmp(name: &str) -> std::path::PathBuf {
        std::env::temp_dir()
            .join(format!("rnic-pcap-{}", std::process::id()))
            .join(name)
    }

    /// Line-rate clock: frame n starts (len + 24) x 0.8 ns after frame n-1;
    /// the folder is created; microsecond resolution by default.
    #[test]
    fn line_rate_timestamps() {
        let path = tmp("line/a/line.pcap");
        let mut s = PcapSink::create(&path).unwrap();
        s.write(&[1; 1226]).unwrap(); // (1226 + 24) x 0.8 ns = 1 µs
        s.write(&[2; 60]).unwrap();
        s.finish().unwrap();
        let (h, v) = read(&path);
        assert_eq!(h.datalink, DataLink::ETHERNET);
        assert_eq!(h.ts_resolution, TsResolution::MicroSecond);
        assert_eq!(v[0], (Duration::ZERO, vec![1; 1226]));
        assert_eq!(v[1], (Duration::from_micros(1), vec![2; 60]));
        std::fs::remove_dir_all(tmp("line")).unwrap();
    }

    /// Nanosecond timestamps survive exactly, and `flush` makes every frame
    /// so far readable while the sink stays open.
    #[test]
    fn nanoseconds_and_flush_while_open() {
        let path = tmp("ns/ns.pcap");
        let mut s = PcapSink::create_with(&path, TsResolution::NanoSecond).unwrap();
        let times = [6_400u64, 12_806, 1_000_000_007];
        for (i, t) in times.iter().enumerate() {
            s.write_at(&[i as u8; 64], Duration::from_nanos(*t))
                .unwrap();
        }
        s.flush().unwrap();
        let (h, v) = read(&path);
        assert_eq!(h.ts_resolution, TsResolution::NanoSecond);
        let got: Vec<u64> = v.iter().map(|p| p.0.as_nanos() as u64).collect();
        assert_eq!(got, times);
        assert!(v.iter().enumerate().all(|(i, p)| p.1 == [i as u8; 64]));
        s.write_at(&[9; 60], Duration::from_nanos(2)).unwrap();
        s.finish().unwrap();
        assert_eq!(read(&path).1.len(), 4);
        std::fs::remove_dir_all(tmp("ns")).unwrap();
    }
}
