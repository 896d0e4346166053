//! The default scenario run on `rnic-wire`'s software reference model alone:
//! two endpoints set up TCP and MPA, register memory, then RDMA Write, RDMA
//! Read and Send/Receive over a size sweep, each verified byte-exact, with
//! every frame written to a pcap.
//!
//! `rnic-sim model` (or `rnic-sim run --model`) runs it; `rnic-sim run` runs
//! the same scenario over the RTL (`crate::rtl_run`). It exercises the
//! protocol model (the reference the RTL, firmware and driver are checked
//! against), not the RTL. It measures what
//! a model can: frames, octets on the wire and the protocol efficiency
//! (payload octets per wire octet) — not cycles or latency.

use std::fmt::Write as _;
use std::path::PathBuf;

use rnic_wire::abi::tpt::{ACCESS_LOCAL_WRITE, ACCESS_REMOTE_READ, ACCESS_REMOTE_WRITE};
use rnic_wire::model::{
    Endpoint, Event, Message, MpaSettings, Receiver, RxConfig, TcpPair, Tpt, TxStream,
};
use rnic_wire::mpa::{
    IrdOrd, MpaFrameKind, MpaRequestReply, MpaRequestReplyRepr, ReadDepth, Revision, RtrTypes,
};
use rnic_wire::rdmap::ReadRequestRepr;

use crate::pcap::PcapSink;
use crate::rng::Rng;

/// Octets an Ethernet frame costs on the wire beyond its header and payload:
/// preamble and SFD (8), FCS (4), inter-frame gap (12) — IEEE 802.3.
pub const ETHERNET_WIRE_OVERHEAD: usize = 8 + 4 + 12;
/// IPv4 (20) and TCP (20) headers without options: the MSS is MTU − 40.
pub const IPV4_TCP_HEADERS: u16 = 40;
/// The notional line rate of the 64-bit core at 156.25 MHz (DESIGN.md §4).
pub const LINE_RATE_GBPS: f64 = 10.0;

/// What to run.
#[derive(Debug, Clone)]
pub struct RunConfig {
    /// IP MTU of the link.
    pub mtu: u16,
    /// Ask for MPA CRC32c.
    pub crc: bool,
    /// Ask for MPA markers (both directions).
    pub markers: bool,
    /// Seed for data, offsets and initial sequence numbers.
    pub seed: u64,
    /// Operations of each kind per size.
    pub ops: usize,
    /// Largest message (the sweep doubles from 1 octet up to this).
    pub max_size: usize,
    /// Where to write the pcap (none: no capture).
    pub pcap: Option<PathBuf>,
}

impl Default for RunConfig {
    fn default() -> Self {
        RunConfig {
            mtu: 1500,
            crc: true,
            markers: false,
            seed: 1,
            ops: 2,
            max_size: 1 << 20,
            pcap: None,
        }
    }
}

/// The three operations of the scenario.
#[derive(Debug, Clone, Copy, PartialEq, Eq, PartialOrd, Ord)]
pub enum Op {
    /// RDMA Write A → B.
    Write,
    /// RDMA Read by A of B's memory.
    Read,
    /// Send A → B into a posted receive.
    Send,
}

impl Op {
    fn name(self) -> &'static str {
        match self {
            Op::Write => "RDMA Write",
            Op::Read => "RDMA Read",
            Op::Send => "Send/Recv",
        }
    }
}

/// Totals of one operation at one size.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct OpStats {
    /// Messages completed and verified.
    pub messages: u64,
    /// Payload octets moved.
    pub payload: u64,
    /// Data-carrying frames (the direction the payload travels).
    pub frames: u64,
    /// Octets those frames occupy on the wire, Ethernet overhead included.
    pub wire_octets: u64,
}

impl OpStats {
    /// Payload octets per wire octet.
    pub fn efficiency(&self) -> f64 {
        if self.wire_octets == 0 {
            0.0
        } else {
            self.payload as f64 / self.wire_octets as f64
        }
    }
}

/// The outcome of a run.
#[derive(Debug, Clone)]
pub struct Report {
    /// The configuration run.
    pub config: RunConfig,
    /// MULPDU of the A → B direction.
    pub mulpdu: u16,
    /// Per operation and size.
    pub rows: Vec<(Op, usize, OpStats)>,
    /// Every frame of the session.
    pub total_frames: u64,
    /// FPDUs the two receivers decoded.
    pub fpdus: u64,
}

/// Why a run failed.
#[derive(Debug)]
pub enum RunError {
    /// The receiver's bytes differ from what was sent.
    Mismatch(String),
    /// The model refused or terminated something it should not have.
    Protocol(String),
    /// The pcap could not be written.
    Io(std::io::Error),
}

impl std::fmt::Display for RunError {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        match self {
            RunError::Mismatch(s) => write!(f, "data mismatch: {s}"),
            RunError::Protocol(s) => write!(f, "protocol error: {s}"),
            RunError::Io(e) => write!(f, "pcap: {e}"),
        }
    }
}

impl std::error::Error for RunError {}

impl From<std::io::Error> for RunError {
    fn from(e: std::io::Error) -> Self {
        RunError::Io(e)
    }
}

fn protocol<E: std::fmt::Debug>(what: &str) -> impl FnOnce(E) -> RunError + '_ {
    move |e| RunError::Protocol(format!("{what}: {e:?}"))
}

/// STags of the scenario's regions (index << 8 | key).
const STAG_B_SINK: u32 = (1 << 8) | 0x11;
const STAG_B_SOURCE: u32 = (2 << 8) | 0x22;
const STAG_A_READ_SINK: u32 = (3 << 8) | 0x33;
const PD: u32 = 1;
const REGION_VA: u64 = 0x7f00_0000_1000;
/// RFC 6581 IRD/ORD both sides offer.
const READ_DEPTH: u16 = 16;

/// Both directions of the session: TCP frames, MPA transmitters, receivers.
struct Session {
    tcp: TcpPair,
    a_to_b: TxStream,
    b_to_a: TxStream,
    rx_b: Receiver,
    rx_a: Receiver,
    pcap: Option<PcapSink>,
    frames: u64,
}

impl Session {
    /// Sends `msg` from A (or B) as frames, feeds them to the other side's
    /// receiver and returns (events, frames, wire octets).
    fn carry(
        &mut self,
        from_a: bool,
        msg: &Message<'_>,
    ) -> Result<(Vec<Event>, u64, u64), RunError> {
        let tx = if from_a {
            &mut self.a_to_b
        } else {
            &mut self.b_to_a
        };
        let segments = tx.send(msg).map_err(protocol("transmit"))?;
        let mut events = Vec::new();
        let (mut frames, mut wire) = (0u64, 0u64);
        for seg in &segments {
            let frame = self.tcp.segment(from_a, seg.seq, &seg.payload);
            frames += 1;
            wire += (frame.len() + ETHERNET_WIRE_OVERHEAD) as u64;
            self.record(&frame)?;
            let rx = if from_a {
                &mut self.rx_b
            } else {
                &mut self.rx_a
            };
            events.extend(
                rx.receive(seg.seq, &seg.payload)
                    .map_err(protocol("receive"))?,
            );
        }
        // The receiver acknowledges the message.
        let ack = self.tcp.ack(!from_a);
        self.record(&ack)?;
        for e in &events {
            if let Event::SendTerminate(t) | Event::TerminateReceived(t) = e {
                return Err(RunError::Protocol(format!(
                    "unexpected Terminate {:?}",
                    t.cause
                )));
            }
        }
        Ok((events, frames, wire))
    }

    fn record(&mut self, frame: &[u8]) -> Result<(), RunError> {
        self.frames += 1;
        if let Some(p) = &mut self.pcap {
            p.write(frame)?;
        }
        Ok(())
    }
}

fn mpa_frame(kind: MpaFrameKind, cfg: &RunConfig) -> Vec<u8> {
    let depth = ReadDepth::new(READ_DEPTH).expect("16 fits 14 bits");
    let repr = MpaRequestReplyRepr {
        kind,
        markers: cfg.markers,
        crc: cfg.crc,
        revision: Revision::V2 {
            enhanced: Some(IrdOrd {
                ird: depth,
                ord: depth,
                peer_to_peer: false,
                rtr: RtrTypes::NONE,
            }),
        },
        private_data: b"rnic-sim",
    };
    let mut buf = vec![0u8; repr.buffer_len()];
    repr.emit(&mut MpaRequestReply::new_unchecked(&mut buf[..]))
        .expect("buffer sized by buffer_len");
    buf
}

/// Runs the scenario.
pub fn run(cfg: &RunConfig) -> Result<Report, RunError> {
    let mut rng = Rng::new(cfg.seed);
    let a = Endpoint {
        mac: [0x02, 0, 0, 0, 0, 0x01],
        ip: [10, 0, 0, 1],
        port: 40000,
    };
    let b = Endpoint {
        mac: [0x02, 0, 0, 0, 0, 0x02],
        ip: [10, 0, 0, 2],
        port: 7174,
    };
    let mss = cfg.mtu.saturating_sub(IPV4_TCP_HEADERS);
    let mut tcp = TcpPair::new(a, rng.next_u32(), b, rng.next_u32());
    let mut pcap = cfg.pcap.as_deref().map(PcapSink::create).transpose()?;
    let mut frames = 0u64;
    let mut early = Vec::new();
    early.extend(tcp.handshake(mss));
    // MPA Request (A) and Reply (B), RFC 5044 §7.1 with the RFC 6581 block.
    early.push(tcp.send(true, &mpa_frame(MpaFrameKind::Request, cfg)));
    early.push(tcp.send(
        false,
        &mpa_frame(MpaFrameKind::Reply { rejected: false }, cfg),
    ));
    early.push(tcp.ack(true));
    for f in &early {
        frames += 1;
        if let Some(p) = &mut pcap {
            p.write(f)?;
        }
    }
    // Both asked for the same options, so both directions use them.
    let ab = MpaSettings {
        crc: cfg.crc,
        markers: cfg.markers,
        seq_start: tcp.a_next,
    };
    let ba = MpaSettings {
        crc: cfg.crc,
        markers: cfg.markers,
        seq_start: tcp.b_next,
    };

    let region = cfg.max_size.max(1) * 2;
    let mut tpt_b = Tpt::new();
    tpt_b.register(
        STAG_B_SINK,
        PD,
        ACCESS_REMOTE_WRITE | ACCESS_LOCAL_WRITE,
        REGION_VA,
        vec![0; region],
    );
    let source: Vec<u8> = (0..region).map(|_| rng.next_u32() as u8).collect();
    tpt_b.register(
        STAG_B_SOURCE,
        PD,
        ACCESS_REMOTE_READ,
        REGION_VA + (1 << 32),
        source,
    );
    let mut tpt_a = Tpt::new();
    tpt_a.register(
        STAG_A_READ_SINK,
        PD,
        ACCESS_LOCAL_WRITE,
        REGION_VA,
        vec![0; region],
    );

    let mut s = Session {
        tcp,
        a_to_b: TxStream::new(ab, mss),
        b_to_a: TxStream::new(ba, mss),
        rx_b: Receiver::new(
            RxConfig {
                mpa: ab,
                pd: PD,
                ird: READ_DEPTH,
            },
            tpt_b,
        ),
        rx_a: Receiver::new(
            RxConfig {
                mpa: ba,
                pd: PD,
                ird: READ_DEPTH,
            },
            tpt_a,
        ),
        pcap,
        frames,
    };
    let mulpdu = s.a_to_b.mulpdu();

    let mut sizes = vec![];
    let mut size = 1usize;
    while size <= cfg.max_size {
        sizes.push(size);
        size *= 2;
    }
    let mut rows = Vec::new();
    let mut next_wr_id = 1u64;
    for &size in &sizes {
        let mut write = OpStats::default();
        let mut read = OpStats::default();
        let mut send = OpStats::default();
        for _ in 0..cfg.ops {
            // RDMA Write at a random offset of B's sink region.
            let data: Vec<u8> = (0..size).map(|_| rng.next_u32() as u8).collect();
            let off = rng.below((region - size + 1) as u64);
            let to = REGION_VA + off;
            let (events, f, w) = s.carry(
                true,
                &Message::Write {
                    stag: STAG_B_SINK,
                    to,
                    data: &data,
                },
            )?;
            if !events
                .iter()
                .any(|e| matches!(e, Event::WriteCompleted { len, .. } if *len == size as u64))
            {
                return Err(RunError::Protocol(format!(
                    "RDMA Write of {size} octets did not complete"
                )));
            }
            let placed = &s.rx_b.tpt().region(STAG_B_SINK).expect("registered").bytes
                [off as usize..off as usize + size];
            if placed != &data[..] {
                return Err(RunError::Mismatch(format!(
                    "RDMA Write of {size} octets at offset {off}"
                )));
            }
            write.add(size, f, w);

            // RDMA Read: A reads `size` octets of B's source into its sink.
            let src_off = rng.below((region - size + 1) as u64);
            let sink_off = rng.below((region - size + 1) as u64);
            let request = ReadRequestRepr {
                sink_stag: STAG_A_READ_SINK,
                sink_to: REGION_VA + sink_off,
                size: size as u32,
                src_stag: STAG_B_SOURCE,
                src_to: REGION_VA + (1 << 32) + src_off,
            };
            s.rx_a.expect_read_response(request);
            let (events, _, _) = s.carry(true, &Message::ReadRequest(request))?;
            let Some(Event::ReadRequest(got)) =
                events.iter().find(|e| matches!(e, Event::ReadRequest(_)))
            else {
                return Err(RunError::Protocol("Read Request not delivered".into()));
            };
            let got = *got;
            let data = s
                .rx_b
                .tpt()
                .read(got.src_stag, PD, got.src_to, got.size as u64)
                .map_err(protocol("responder TPT"))?
                .to_vec();
            let (events, f, w) = s.carry(
                false,
                &Message::ReadResponse {
                    stag: got.sink_stag,
                    to: got.sink_to,
                    data: &data,
                },
            )?;
            s.rx_b.read_response_sent();
            if !events
                .iter()
                .any(|e| matches!(e, Event::ReadResponseCompleted { .. }))
            {
                return Err(RunError::Protocol(format!(
                    "RDMA Read of {size} octets did not complete"
                )));
            }
            let expect = &s
                .rx_b
                .tpt()
                .region(STAG_B_SOURCE)
                .expect("registered")
                .bytes[src_off as usize..src_off as usize + size];
            let got_bytes = &s
                .rx_a
                .tpt()
                .region(STAG_A_READ_SINK)
                .expect("registered")
                .bytes[sink_off as usize..sink_off as usize + size];
            if expect != got_bytes {
                return Err(RunError::Mismatch(format!("RDMA Read of {size} octets")));
            }
            read.add(size, f, w);

            // Send into a posted receive buffer of exactly the message size.
            let wr_id = next_wr_id;
            next_wr_id += 1;
            s.rx_b.post_recv(wr_id, size);
            let data: Vec<u8> = (0..size).map(|_| rng.next_u32() as u8).collect();
            let (events, f, w) = s.carry(
                true,
                &Message::Send {
                    data: &data,
                    solicited: false,
                    invalidate: None,
                },
            )?;
            if !events.iter().any(|e| matches!(e, Event::RecvCompleted { wr_id: id, len, .. } if *id == wr_id && *len as usize == size)) {
                return Err(RunError::Protocol(format!("Send of {size} octets did not complete")));
            }
            if s.rx_b.completed_recv(wr_id).map(|b| &b.bytes[..size]) != Some(&data[..]) {
                return Err(RunError::Mismatch(format!("Send of {size} octets")));
            }
            send.add(size, f, w);
        }
        rows.push((Op::Write, size, write));
        rows.push((Op::Read, size, read));
        rows.push((Op::Send, size, send));
    }
    if let Some(p) = s.pcap.take() {
        p.finish()?;
    }
    Ok(Report {
        config: cfg.clone(),
        mulpdu,
        rows,
        total_frames: s.frames,
        fpdus: s.rx_a.fpdus() + s.rx_b.fpdus(),
    })
}

impl OpStats {
    fn add(&mut self, size: usize, frames: u64, wire: u64) {
        self.messages += 1;
        self.payload += size as u64;
        self.frames += frames;
        self.wire_octets += wire;
    }
}

impl Report {
    /// The human-readable report.
    pub fn render(&self) -> String {
        let c = &self.config;
        let mut out = String::new();
        let _ = writeln!(
            out,
            "MTU {} (MSS {}), MPA CRC {}, markers {}, MULPDU {}, seed {}, {} ops per size",
            c.mtu,
            c.mtu.saturating_sub(IPV4_TCP_HEADERS),
            on_off(c.crc),
            on_off(c.markers),
            self.mulpdu,
            c.seed,
            c.ops
        );
        let _ = writeln!(
            out,
            "\n{:<11} {:>9} {:>5} {:>11} {:>7} {:>12} {:>10} {:>12}",
            "operation", "size", "msgs", "payload B", "frames", "wire B", "payload %", "Gb/s @10G"
        );
        for (op, size, st) in &self.rows {
            let _ = writeln!(
                out,
                "{:<11} {:>9} {:>5} {:>11} {:>7} {:>12} {:>9.1}% {:>12.2}",
                op.name(),
                human(*size),
                st.messages,
                st.payload,
                st.frames,
                st.wire_octets,
                st.efficiency() * 100.0,
                st.efficiency() * LINE_RATE_GBPS
            );
        }
        let messages: u64 = self.rows.iter().map(|r| r.2.messages).sum();
        let payload: u64 = self.rows.iter().map(|r| r.2.payload).sum();
        let _ = writeln!(
            out,
            "\n{messages} messages, {payload} payload octets, {} frames, {} FPDUs decoded: every message verified byte-exact",
            self.total_frames, self.fpdus
        );
        let _ = writeln!(
            out,
            "payload % = payload octets / wire octets (Ethernet preamble, FCS and gap included); Gb/s @10G = that share of a 10 Gb/s line: the ceiling set by headers"
        );
        out
    }
}

fn on_off(b: bool) -> &'static str {
    if b {
        "on"
    } else {
        "off"
    }
}

fn human(n: usize) -> String {
    match n {
        n if n >= 1 << 20 && n % (1 << 20) == 0 => format!("{} MiB", n >> 20),
        n if n >= 1 << 10 && n % (1 << 10) == 0 => format!("{} KiB", n >> 10),
        n => format!("{n} B"),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn small(crc: bool, markers: bool, mtu: u16) -> RunConfig {
        RunConfig {
            mtu,
            crc,
            markers,
            seed: 7,
            ops: 1,
            max_size: 64 << 10,
            pcap: None,
        }
    }

    #[test]
    fn every_mpa_mode_runs_clean() {
        for (crc, markers) in [(false, false), (true, false), (false, true), (true, true)] {
            for mtu in [1500, 9000] {
                let r = run(&small(crc, markers, mtu)).unwrap();
                assert_eq!(r.rows.len(), 17 * 3);
                assert!(r.rows.iter().all(|(_, _, s)| s.messages == 1));
            }
        }
    }

    /// The efficiency of a large Write at MTU 1500 without markers follows
    /// from the headers alone: per 1518-octet frame (+24 wire overhead),
    /// MULPDU 1454 minus the 14-octet tagged DDP header is payload.
    #[test]
    fn large_write_efficiency_matches_header_arithmetic() {
        let r = run(&RunConfig {
            max_size: 1 << 20,
            ops: 1,
            crc: true,
            ..RunConfig::default()
        })
        .unwrap();
        let (_, _, w) = r
            .rows
            .iter()
            .find(|(op, size, _)| *op == Op::Write && *size == 1 << 20)
            .unwrap();
        assert_eq!(r.mulpdu, 1454);
        let per_frame_payload = 1454.0 - 14.0;
        let per_frame_wire = (1500 + 14 + ETHERNET_WIRE_OVERHEAD) as f64;
        let expect = per_frame_payload / per_frame_wire;
        assert!(
            (w.efficiency() - expect).abs() < 0.002,
            "{} vs {}",
            w.efficiency(),
            expect
        );
    }

    #[test]
    fn pcap_has_every_frame() {
        let dir = std::env::temp_dir().join(format!("rnic-sim-test-{}", std::process::id()));
        std::fs::create_dir_all(&dir).unwrap();
        let path = dir.join("s.pcap");
        let r = run(&RunConfig {
            pcap: Some(path.clone()),
            ..small(true, false, 1500)
        })
        .unwrap();
        let data = std::fs::read(&path).unwrap();
        let mut reader = pcap_file::pcap::PcapReader::new(&data[..]).unwrap();
        let mut n = 0;
        while let Some(p) = reader.next_packet() {
            rnic_wire::model::parse_frame(&p.unwrap().data).unwrap();
            n += 1;
        }
        assert_eq!(n, r.total_frames);
        std::fs::remove_dir_all(&dir).unwrap();
    }
}
