//! Interop through the external port (issue 5 item 9): the rnic node — the
//! Verilated `rnic_core`, its firmware and the driver — has its MAC on a
//! socket ([`World::external`], QEMU's stream framing), and is the `rping`
//! server of `testdata/captures/siw-rping-default.pcap`. On the other end of
//! the socket a scripted peer plays the Linux siw client of that capture.
//!
//! The peer sends siw's own frames where they do not depend on the node: the
//! ARP request and the SYN verbatim (MSS 1460, SACK permitted, timestamps,
//! window scale 7, as Linux offered), then siw's MPA Request (Rev 2,
//! enhanced, IRD/ORD 1/1, CRC and markers off) and siw's FPDUs (Sends with
//! rping's buffer advertisements, Read Responses with siw's data) in fresh
//! TCP headers: the ACK numbers follow the node's sequence space, and — as
//! Linux does when the SYN-ACK offers no timestamps or SACK — no options.
//! The one field rewritten inside an FPDU is what the node chose: the Read
//! Response's sink STag/TO is the node's Read Request's (RFC 5040 §4.5).
//!
//! A second test turns the roles round: the node is rping's client and
//! connects to a scripted siw server (its captured ARP reply, siw's MPA
//! Reply verbatim, its Read Requests' sink STag/TO, its Sends and Writes);
//! the node's RTL answers the Read Requests.
//!
//! The node's side is rping itself, as `rnic-sim rping` runs it against a
//! live Linux host (`rnic_sim::apps::rping`, on the driver): as server it
//! reads the client's buffer advertisement from each Send, RDMA Reads that
//! buffer, Sends "go ahead", RDMA Writes what it read into the client's
//! second buffer, and Sends again — five times, as `rping -C 5`; as client
//! it fills its start buffer as rping does and checks the echo.
//!
//! Checked against independent references: every node frame parses with
//! smoltcp (checksums verified) and `rnic_wire` (MPA Reply, FPDUs, RDMAP);
//! the node's FPDU kinds come in the capture's order; its Read Requests name
//! exactly the buffers siw advertised; its Writes carry the octets siw's
//! server wrote in the capture; its TCP stream has no gap and no
//! retransmission; tshark decodes the peer's capture of the session with no
//! malformed frame (without tshark: skipped outside CI, a failure under
//! CI). `sim/tests/linux_peer.rs` runs the same application against a live
//! siw host in QEMU.

use std::io::{Read, Write};
use std::net::TcpStream;
use std::path::PathBuf;
use std::sync::mpsc;
use std::time::Duration;

#[path = "../../testdata/support.rs"]
mod support;

use pcap_file::pcap::PcapReader;
use rnic_driver::{Context, NetConfig};
use rnic_fw::retx::RetxConfig;
use rnic_sim::apps::rping;
use rnic_sim::external::ExternalPort;
use rnic_sim::node::{World, COSIM_RDMA_RETX};
use rnic_sim::pcap::PcapSink;
use rnic_sim::sim_bus::{driver_options, SimBus};
use rnic_wire::ddp::DdpSegment;
use rnic_wire::mpa::fpdu::{Fpdu, FpduRepr};
use rnic_wire::mpa::frame::{MpaFrameKind, MpaRequestReply, MpaRequestReplyRepr, Revision};
use rnic_wire::net::{
    ArpOperation, ArpPacket, ArpRepr, ChecksumCapabilities, EthernetAddress, EthernetFrame,
    EthernetProtocol, EthernetRepr, IpAddress, IpProtocol, Ipv4Address, Ipv4Packet, Ipv4Repr,
    TcpControl, TcpPacket, TcpRepr, TcpSeqNumber,
};
use rnic_wire::rdmap::RdmapRepr;

const CAPTURE: &str = "siw-rping-default.pcap";
/// The rping server (the node) and client (the scripted siw peer).
const SERVER_IP: [u8; 4] = [10, 0, 0, 1];
const SERVER_MAC: [u8; 6] = [0x52, 0x54, 0x00, 0x5e, 0x00, 0x01];
const CLIENT_IP: [u8; 4] = [10, 0, 0, 2];
const CLIENT_MAC: [u8; 6] = [0x52, 0x54, 0x00, 0x5e, 0x00, 0x02];
const SERVER_PORT: u16 = 7174;
/// The largest ping this test's captures hold (rping's default size).
const PING_SIZE: usize = 64;
/// Simulated-clock budget for one step of the application.
const STEP_BUDGET: u64 = 2_000_000;
/// Wall-clock bound on any wait of the peer for the node.
const PEER_WAIT: Duration = Duration::from_secs(300);
/// The peer's retransmission timeout, in wall-clock time (the node's
/// simulation runs at about 50 k clocks/s, so 200 ms is about 64 us of
/// simulated time: a Linux RTO scaled down with the simulation).
const PEER_RTO: Duration = Duration::from_millis(200);
/// The node's RDMA-mode RTO against the wall-clock peer: 100 ms of
/// simulated time, about 15.6 M clocks (Session::start).
const PEER_WAIT_RTO_US: u64 = 100_000;

/// The node's rping: rping's -C 5 of the capture, each step within
/// [`STEP_BUDGET`] clocks.
fn rping_config() -> rping::Config {
    rping::Config {
        size: PING_SIZE,
        count: 5,
        step_clocks: Some(STEP_BUDGET),
        step_wall: PEER_WAIT,
        ..rping::Config::default()
    }
}

/// One FPDU of the capture, by kind.
#[derive(Debug, Clone, PartialEq, Eq)]
enum CapFpdu {
    Send(Vec<u8>),
    ReadRequest {
        size: u32,
        sink_stag: u32,
        sink_to: u64,
    },
    ReadResponse(Vec<u8>),
    Write(Vec<u8>),
}

impl CapFpdu {
    fn kind(&self) -> &'static str {
        match self {
            CapFpdu::Send(_) => "Send",
            CapFpdu::ReadRequest { .. } => "ReadRequest",
            CapFpdu::ReadResponse(_) => "ReadResponse",
            CapFpdu::Write(_) => "Write",
        }
    }
}

/// What the capture holds for the peer to play and to expect.
struct Script {
    arp_request: Vec<u8>,
    syn: Vec<u8>,
    client_mac: [u8; 6],
    client_port: u16,
    client_isn: u32,
    mpa_request: Vec<u8>,
    arp_reply: Vec<u8>,
    server_isn: u32,
    mpa_reply: Vec<u8>,
    /// The client's FPDUs, in order.
    client: Vec<CapFpdu>,
    /// The server's FPDUs, in order.
    server: Vec<CapFpdu>,
}

/// Parses one TCP payload holding whole FPDUs (CRC off, no markers: the
/// capture's negotiation) into their RDMAP messages.
fn fpdus(payload: &[u8]) -> Vec<CapFpdu> {
    let mut out = vec![];
    let mut rest = payload;
    while !rest.is_empty() {
        let f = Fpdu::new_checked(rest).expect("capture: whole FPDU");
        let len = f.total_len();
        let ulpdu = FpduRepr::parse(&f, false).unwrap().ulpdu;
        let seg = DdpSegment::new_checked(ulpdu).unwrap();
        out.push(match RdmapRepr::parse(&seg).expect("capture: RDMAP") {
            RdmapRepr::Send { payload, .. } => CapFpdu::Send(payload.to_vec()),
            RdmapRepr::ReadRequest { request, .. } => CapFpdu::ReadRequest {
                size: request.size,
                sink_stag: request.sink_stag,
                sink_to: request.sink_to,
            },
            RdmapRepr::ReadResponse { payload, .. } => CapFpdu::ReadResponse(payload.to_vec()),
            RdmapRepr::RdmaWrite { payload, .. } => CapFpdu::Write(payload.to_vec()),
            other => panic!("capture: unexpected {other:?}"),
        });
        rest = &rest[len..];
    }
    out
}

fn script() -> Script {
    let path = support::capture(CAPTURE);
    let mut r = PcapReader::new(std::fs::File::open(path).unwrap()).unwrap();
    let caps = ChecksumCapabilities::ignored();
    let (mut arp_request, mut syn, mut mpa_request) = (None, None, None);
    let (mut arp_reply, mut server_isn, mut mpa_reply) = (None, 0, None);
    let (mut client_mac, mut client_port, mut client_isn) = ([0u8; 6], 0, 0);
    let (mut client, mut server, mut seen_reply) = (vec![], vec![], false);
    while let Some(p) = r.next_packet() {
        let d = p.unwrap().data.to_vec();
        let eth = EthernetFrame::new_checked(&d[..]).unwrap();
        if eth.ethertype() == EthernetProtocol::Arp {
            let arp = ArpPacket::new_checked(eth.payload()).unwrap();
            if let Ok(ArpRepr::EthernetIpv4 {
                operation,
                source_protocol_addr,
                target_protocol_addr,
                ..
            }) = ArpRepr::parse(&arp)
            {
                let ends = (source_protocol_addr.octets(), target_protocol_addr.octets());
                if operation == ArpOperation::Request && ends == (CLIENT_IP, SERVER_IP) {
                    arp_request.get_or_insert(d.clone());
                }
                if operation == ArpOperation::Reply && ends == (SERVER_IP, CLIENT_IP) {
                    arp_reply.get_or_insert(d.clone());
                }
            }
            continue;
        }
        if eth.ethertype() != EthernetProtocol::Ipv4 {
            continue;
        }
        let ip = Ipv4Packet::new_checked(eth.payload()).unwrap();
        if ip.next_header() != IpProtocol::Tcp {
            continue;
        }
        let ipr = Ipv4Repr::parse(&ip, &caps).unwrap();
        let tp = TcpPacket::new_checked(ip.payload()).unwrap();
        let t = TcpRepr::parse(
            &tp,
            &IpAddress::Ipv4(ipr.src_addr),
            &IpAddress::Ipv4(ipr.dst_addr),
            &caps,
        )
        .unwrap();
        let from_client = ipr.src_addr.octets() == CLIENT_IP && t.dst_port == SERVER_PORT;
        let from_server = ipr.src_addr.octets() == SERVER_IP && t.src_port == SERVER_PORT;
        if from_client && t.control == TcpControl::Syn && t.ack_number.is_none() {
            client_mac = eth.src_addr().0;
            client_port = t.src_port;
            client_isn = t.seq_number.0 as u32;
            syn = Some(d.clone());
        } else if from_server && t.control == TcpControl::Syn {
            server_isn = t.seq_number.0 as u32;
        } else if t.payload.is_empty() {
        } else if from_client && mpa_request.is_none() {
            mpa_request = Some(t.payload.to_vec());
        } else if from_server && !seen_reply {
            seen_reply = true;
            mpa_reply = Some(t.payload.to_vec());
        } else if from_client {
            client.extend(fpdus(t.payload));
        } else if from_server {
            server.extend(fpdus(t.payload));
        }
    }
    Script {
        arp_request: arp_request.expect("capture: ARP request"),
        syn: syn.expect("capture: SYN"),
        client_mac,
        client_port,
        client_isn,
        mpa_request: mpa_request.expect("capture: MPA Request"),
        arp_reply: arp_reply.expect("capture: ARP reply"),
        server_isn,
        mpa_reply: mpa_reply.expect("capture: MPA Reply"),
        client,
        server,
    }
}

/// Addresses of a TCP connection between the scripted peer and the node.
#[derive(Debug, Clone, Copy)]
struct Ends {
    my_mac: [u8; 6],
    my_ip: [u8; 4],
    my_port: u16,
    node_mac: [u8; 6],
    node_ip: [u8; 4],
    node_port: u16,
}

/// The scripted siw host on the socket.
struct Peer {
    sock: TcpStream,
    pcap: PcapSink,
    ends: Ends,
    /// Our SND.NXT and the node's octets received in order (RCV.NXT).
    snd_nxt: u32,
    rcv_nxt: u32,
    /// The window field we send (scaled by the shift we offered when the
    /// node agreed to window scaling: RFC 7323 §2.2).
    window_field: u16,
    /// Node data segments that arrived out of order or again.
    out_of_order: u32,
    /// The node's frames: all, and those carrying data.
    frames_in: u32,
    data_in: u32,
    /// The node's FPDUs waiting to be taken.
    fpdus: std::collections::VecDeque<Vec<u8>>,
    /// Our segments not yet acknowledged (seq, control, payload), for
    /// go-back-N after a retransmission timeout, as a Linux sender does.
    unacked: std::collections::VecDeque<(u32, TcpControl, Vec<u8>)>,
    /// Segments sent again after a timeout.
    retransmissions: u32,
    /// Whether to send again after [`PEER_RTO`] at all (off: the node must
    /// take every segment the first time; a loss then stalls the session
    /// and fails the test).
    retransmit: bool,
}

impl Peer {
    /// A peer whose first octet after the SYN is `isn + 1`.
    fn new(sock: TcpStream, pcap: &std::path::Path, ends: Ends, isn: u32) -> Peer {
        sock.set_read_timeout(Some(PEER_RTO)).unwrap();
        Peer {
            sock,
            pcap: PcapSink::create(pcap).unwrap(),
            ends,
            snd_nxt: isn.wrapping_add(1),
            rcv_nxt: 0,
            window_field: 64256,
            out_of_order: 0,
            frames_in: 0,
            data_in: 0,
            fpdus: Default::default(),
            unacked: Default::default(),
            retransmissions: 0,
            retransmit: true,
        }
    }

    /// Parses the node's next FPDU as an RDMAP message and hands it to `f`.
    fn expect_rdmap<R>(
        &mut self,
        f: impl FnOnce(RdmapRepr) -> Result<R, String>,
    ) -> Result<R, String> {
        let m = self.recv_fpdu()?;
        let seg = DdpSegment::new_checked(&m[..]).map_err(|e| format!("node DDP: {e:?}"))?;
        f(RdmapRepr::parse(&seg).map_err(|e| format!("node RDMAP: {e:?}"))?)
    }

    /// A whole Send message (one FPDU) with MSN `msn` (RFC 5040 §4.1).
    fn send_message(&mut self, msn: u32, payload: &[u8]) {
        self.send_fpdu(&RdmapRepr::Send {
            solicited: false,
            invalidate_stag: None,
            last: true,
            msn,
            mo: 0,
            payload,
        });
    }

    /// The node's next FPDU must be a whole Send of an rping advertisement.
    fn expect_rping_info(&mut self) -> Result<rping::Info, String> {
        self.expect_rdmap(|m| match m {
            RdmapRepr::Send {
                payload,
                last: true,
                mo: 0,
                ..
            } if payload.len() == rping::INFO_LEN => Ok(rping::Info::parse(payload).unwrap()),
            other => Err(format!(
                "expected an rping advertisement Send, got {other:?}"
            )),
        })
    }

    fn send_frame(&mut self, f: &[u8]) {
        self.sock
            .write_all(&(f.len() as u32).to_be_bytes())
            .and_then(|_| self.sock.write_all(f))
            .expect("peer: socket write");
        self.pcap.write(f).unwrap();
    }

    /// The node's next frame. While waiting, unacknowledged data is sent
    /// again every [`PEER_RTO`] (go-back-N from SND.UNA, RFC 6298 §5.4).
    fn recv_frame(&mut self) -> Result<Vec<u8>, String> {
        let start = std::time::Instant::now();
        let mut len = [0u8; 4];
        loop {
            match self.sock.peek(&mut len) {
                Ok(n) if n == len.len() => break,
                Ok(0) => return Err("peer: the node's port closed".into()),
                Ok(_) => continue,
                Err(e)
                    if matches!(
                        e.kind(),
                        std::io::ErrorKind::WouldBlock | std::io::ErrorKind::TimedOut
                    ) =>
                {
                    if start.elapsed() > PEER_WAIT {
                        return Err(format!("peer: no frame from the node in {PEER_WAIT:?}"));
                    }
                    let resend: Vec<_> = match self.retransmit {
                        true => self.unacked.iter().cloned().collect(),
                        false => Vec::new(),
                    };
                    for (seq, control, payload) in resend {
                        self.retransmissions += 1;
                        self.emit_tcp(seq, control, &payload);
                    }
                }
                Err(e) => return Err(format!("peer: socket: {e}")),
            }
        }
        self.sock.read_exact(&mut len).unwrap();
        let mut f = vec![0u8; u32::from_be_bytes(len) as usize];
        self.sock
            .read_exact(&mut f)
            .map_err(|e| format!("peer: short frame: {e}"))?;
        self.pcap.write(&f).unwrap();
        self.frames_in += 1;
        Ok(f)
    }

    /// A segment from us at SND.NXT, acknowledging RCV.NXT.
    fn send_tcp(&mut self, control: TcpControl, payload: &[u8]) {
        let seq = self.snd_nxt;
        self.emit_tcp(seq, control, payload);
        let len = payload.len() as u32 + (control == TcpControl::Fin) as u32;
        if len > 0 {
            self.unacked.push_back((seq, control, payload.to_vec()));
        }
        self.snd_nxt = self.snd_nxt.wrapping_add(len);
    }

    fn emit_tcp(&mut self, seq: u32, control: TcpControl, payload: &[u8]) {
        let tcp = TcpRepr {
            src_port: self.ends.my_port,
            dst_port: self.ends.node_port,
            control,
            seq_number: TcpSeqNumber(seq as i32),
            ack_number: Some(TcpSeqNumber(self.rcv_nxt as i32)),
            window_len: self.window_field,
            window_scale: None,
            max_seg_size: None,
            sack_permitted: false,
            sack_ranges: [None; 3],
            timestamp: None,
            payload,
        };
        let f = frame(&self.ends, &tcp);
        self.send_frame(&f);
    }

    /// Takes the node's next TCP segment to us (ARP and others are
    /// refused); checks its checksums with smoltcp.
    fn recv_tcp(&mut self) -> Result<(TcpControl, u32, Vec<u8>), String> {
        let f = self.recv_frame()?;
        let eth = EthernetFrame::new_checked(&f[..]).map_err(|e| format!("{e}"))?;
        if eth.src_addr().0 != self.ends.node_mac || eth.dst_addr().0 != self.ends.my_mac {
            return Err(format!(
                "node frame with MACs {} → {}",
                eth.src_addr(),
                eth.dst_addr()
            ));
        }
        if eth.ethertype() != EthernetProtocol::Ipv4 {
            return Err(format!("node sent {:?} mid-session", eth.ethertype()));
        }
        let caps = ChecksumCapabilities::default();
        let ip = Ipv4Packet::new_checked(eth.payload()).map_err(|e| format!("{e}"))?;
        let ipr = Ipv4Repr::parse(&ip, &caps).map_err(|e| format!("node IPv4: {e}"))?;
        if (ipr.src_addr.octets(), ipr.dst_addr.octets()) != (self.ends.node_ip, self.ends.my_ip) {
            return Err(format!("node IPv4 {} → {}", ipr.src_addr, ipr.dst_addr));
        }
        let tp = TcpPacket::new_checked(ip.payload()).map_err(|e| format!("{e}"))?;
        let t = TcpRepr::parse(
            &tp,
            &IpAddress::Ipv4(ipr.src_addr),
            &IpAddress::Ipv4(ipr.dst_addr),
            &caps,
        )
        .map_err(|e| format!("node TCP (checksum?): {e}"))?;
        if (t.src_port, t.dst_port) != (self.ends.node_port, self.ends.my_port) {
            return Err(format!("node ports {} → {}", t.src_port, t.dst_port));
        }
        if let Some(a) = t.ack_number {
            let a = a.0 as u32;
            // drop every segment the ACK covers (sequence-space compare)
            while let Some((seq, control, payload)) = self.unacked.front() {
                let end =
                    seq.wrapping_add(payload.len() as u32 + (*control == TcpControl::Fin) as u32);
                if (a.wrapping_sub(end) as i32) >= 0 {
                    self.unacked.pop_front();
                } else {
                    break;
                }
            }
        }
        Ok((t.control, t.seq_number.0 as u32, t.payload.to_vec()))
    }

    /// The node's next in-order data (or FIN); pure ACKs are skipped, and
    /// every data segment is acknowledged at once.
    fn recv_data(&mut self) -> Result<(TcpControl, Vec<u8>), String> {
        loop {
            let (control, seq, payload) = self.recv_tcp()?;
            if payload.is_empty() && control != TcpControl::Fin {
                continue;
            }
            if seq != self.rcv_nxt {
                self.out_of_order += 1;
                return Err(format!(
                    "node segment at {seq}, expected {} (gap or retransmission)",
                    self.rcv_nxt
                ));
            }
            self.data_in += 1;
            self.rcv_nxt = self
                .rcv_nxt
                .wrapping_add(payload.len() as u32 + (control == TcpControl::Fin) as u32);
            self.send_tcp(TcpControl::None, &[]);
            return Ok((control, payload));
        }
    }

    /// The node's next FPDU, parsed (CRC off, as negotiated).
    fn recv_fpdu(&mut self) -> Result<Vec<u8>, String> {
        while self.fpdus.is_empty() {
            let (control, payload) = self.recv_data()?;
            if control == TcpControl::Fin {
                return Err("node FIN while an FPDU was expected".into());
            }
            let mut rest = &payload[..];
            while !rest.is_empty() {
                let f = Fpdu::new_checked(rest).map_err(|e| format!("node FPDU: {e:?}"))?;
                let len = f.total_len();
                let ulpdu = FpduRepr::parse(&f, false)
                    .map_err(|e| format!("node FPDU: {e:?}"))?
                    .ulpdu;
                self.fpdus.push_back(ulpdu.to_vec());
                rest = &rest[len..];
            }
        }
        Ok(self.fpdus.pop_front().unwrap())
    }

    fn send_fpdu(&mut self, m: &RdmapRepr) {
        let mut ulpdu = vec![0u8; m.buffer_len()];
        m.emit(&mut ulpdu).unwrap();
        let repr = FpduRepr { ulpdu: &ulpdu };
        let mut buf = vec![0u8; repr.buffer_len()];
        repr.emit(&mut Fpdu::new_unchecked(&mut buf[..]), false)
            .unwrap();
        self.send_tcp(TcpControl::Psh, &buf);
    }
}

fn frame(ends: &Ends, tcp: &TcpRepr) -> Vec<u8> {
    let (src, dst) = (
        Ipv4Address::from(ends.my_ip),
        Ipv4Address::from(ends.node_ip),
    );
    let ip = Ipv4Repr {
        src_addr: src,
        dst_addr: dst,
        next_header: IpProtocol::Tcp,
        payload_len: tcp.buffer_len(),
        hop_limit: 64,
    };
    let eth = EthernetRepr {
        src_addr: EthernetAddress(ends.my_mac),
        dst_addr: EthernetAddress(ends.node_mac),
        ethertype: EthernetProtocol::Ipv4,
    };
    let mut f = vec![0u8; eth.buffer_len() + ip.buffer_len() + tcp.buffer_len()];
    let caps = ChecksumCapabilities::default();
    let mut e = EthernetFrame::new_unchecked(&mut f[..]);
    eth.emit(&mut e);
    let mut p = Ipv4Packet::new_unchecked(e.payload_mut());
    ip.emit(&mut p, &caps);
    let mut t = TcpPacket::new_unchecked(p.payload_mut());
    tcp.emit(&mut t, &IpAddress::Ipv4(src), &IpAddress::Ipv4(dst), &caps);
    f
}

/// What the peer saw.
#[derive(Debug, Default)]
struct PeerReport {
    node_isn: u32,
    syn_ack_options: String,
    mpa_reply: String,
    node_kinds: Vec<&'static str>,
    frames_in: u32,
    data_in: u32,
    iterations: usize,
    retransmissions: u32,
}

/// The siw client's side of the session.
fn run_peer(
    s: Script,
    sock: TcpStream,
    pcap: PathBuf,
    go: mpsc::Receiver<()>,
) -> Result<PeerReport, String> {
    let ends = Ends {
        my_mac: s.client_mac,
        my_ip: CLIENT_IP,
        my_port: s.client_port,
        node_mac: SERVER_MAC,
        node_ip: SERVER_IP,
        node_port: SERVER_PORT,
    };
    let mut p = Peer::new(sock, &pcap, ends, s.client_isn);
    // Nothing is lost on this link: the node must take every segment the
    // first time, the Send right behind the ACK of the MPA Reply included
    // (the firmware hands it back to the fast path by RX_INJECT). A
    // retransmission would hide a loss there.
    p.retransmit = false;
    let mut rep = PeerReport::default();
    go.recv_timeout(PEER_WAIT)
        .map_err(|_| "the node never got ready".to_string())?;

    // ARP: siw's request verbatim; the firmware answers for its address.
    p.send_frame(&s.arp_request);
    let f = p.recv_frame()?;
    let eth = EthernetFrame::new_checked(&f[..]).map_err(|e| format!("{e}"))?;
    let arp = ArpPacket::new_checked(eth.payload()).map_err(|e| format!("ARP reply: {e}"))?;
    match ArpRepr::parse(&arp).map_err(|e| format!("ARP reply: {e}"))? {
        ArpRepr::EthernetIpv4 {
            operation: ArpOperation::Reply,
            source_hardware_addr,
            source_protocol_addr,
            target_hardware_addr,
            ..
        } if source_hardware_addr.0 == SERVER_MAC
            && source_protocol_addr.octets() == SERVER_IP
            && target_hardware_addr.0 == p.ends.my_mac => {}
        other => return Err(format!("not our ARP reply: {other:?}")),
    }

    // SYN verbatim (Linux's options); the node's SYN-ACK.
    p.send_frame(&s.syn);
    let f = p.recv_frame()?;
    let eth = EthernetFrame::new_checked(&f[..]).unwrap();
    let ip = Ipv4Packet::new_checked(eth.payload()).unwrap();
    let caps = ChecksumCapabilities::default();
    let ipr = Ipv4Repr::parse(&ip, &caps).map_err(|e| format!("SYN-ACK IPv4: {e}"))?;
    let tp = TcpPacket::new_checked(ip.payload()).unwrap();
    let t = TcpRepr::parse(
        &tp,
        &IpAddress::Ipv4(ipr.src_addr),
        &IpAddress::Ipv4(ipr.dst_addr),
        &caps,
    )
    .map_err(|e| format!("SYN-ACK TCP: {e}"))?;
    if t.control != TcpControl::Syn || t.ack_number != Some(TcpSeqNumber(p.snd_nxt as i32)) {
        return Err(format!("not a SYN-ACK for our SYN: {t}"));
    }
    // The node offers neither timestamps nor SACK (issue 5: "no
    // timestamps/SACK offered"), and answers window scaling (RFC 7323 §2.2)
    // since the SYN offered it.
    if t.timestamp.is_some() || t.sack_permitted {
        return Err(format!("node offered timestamps or SACK: {t}"));
    }
    let Some(node_shift) = t.window_scale else {
        return Err(format!("node ignored the window scale option: {t}"));
    };
    // Linux offered shift 7: our window field is in units of 128 octets.
    p.window_field = (64256u32 >> 7) as u16;
    rep.node_isn = t.seq_number.0 as u32;
    rep.syn_ack_options = format!(
        "MSS {:?}, window scale {node_shift}, window {}",
        t.max_seg_size, t.window_len
    );
    p.rcv_nxt = rep.node_isn.wrapping_add(1);

    // Handshake ACK, then siw's MPA Request.
    p.send_tcp(TcpControl::None, &[]);
    p.send_tcp(TcpControl::Psh, &s.mpa_request);
    let (_, reply) = p.recv_data()?;
    let frame =
        MpaRequestReply::new_checked(&reply[..]).map_err(|e| format!("MPA Reply: {e:?}"))?;
    let r = MpaRequestReplyRepr::parse(&frame).map_err(|e| format!("MPA Reply: {e:?}"))?;
    if frame.frame_len() != reply.len() {
        return Err("data after the MPA Reply in its segment".into());
    }
    match (r.kind, r.revision) {
        (
            MpaFrameKind::Reply { rejected: false },
            Revision::V2 {
                enhanced: Some(block),
            },
        ) if !r.crc && !r.markers => {
            // RFC 6581 §2: the responder's IRD/ORD answer the initiator's.
            if block.ird.get() != rping::DEPTH || block.ord.get() != rping::DEPTH {
                return Err(format!("IRD/ORD {block:?}"));
            }
            rep.mpa_reply = format!("{r:?}");
        }
        _ => return Err(format!("MPA Reply {r:?}")),
    }

    // rping: per iteration, Send(start buffer) → server Read → Send(go) →
    // Send(rdma buffer) → server Write → Send(go).
    let mut client = s.client.iter();
    let mut server_kinds = s.server.iter().map(CapFpdu::kind);
    let mut msn_send = 1u32;
    while let Some(CapFpdu::Send(start)) = client.next() {
        let start_info = rping::Info::parse(start).ok_or("capture: not an advertisement")?;
        p.send_message(msn_send, start);
        msn_send += 1;
        // The node's Read Request names exactly the advertised buffer.
        let req = p.expect_rdmap(|m| match m {
            RdmapRepr::ReadRequest { request, .. }
                if (request.src_stag, request.src_to, request.size)
                    == (start_info.rkey, start_info.buf, start_info.size) =>
            {
                Ok(request)
            }
            other => Err(format!(
                "expected a Read Request of the advertised {start_info:?}, got {other:?}"
            )),
        })?;
        rep.node_kinds.push("ReadRequest");
        let Some(CapFpdu::ReadResponse(data)) = client.next() else {
            return Err("capture: no Read Response".into());
        };
        if data.len() != req.size as usize {
            return Err(format!(
                "capture's response is {} octets, request {}",
                data.len(),
                req.size
            ));
        }
        p.send_fpdu(&RdmapRepr::ReadResponse {
            last: true,
            stag: req.sink_stag,
            to: req.sink_to,
            payload: data,
        });
        // The node's "go ahead" Send: its own buffer advertisement.
        p.expect_rping_info()?;
        rep.node_kinds.push("Send");
        let Some(CapFpdu::Send(rdma)) = client.next() else {
            return Err("capture: no second Send".into());
        };
        let rdma_info = rping::Info::parse(rdma).ok_or("capture: not an advertisement")?;
        p.send_message(msn_send, rdma);
        msn_send += 1;
        // The node's Write: what it read, into the second buffer.
        p.expect_rdmap(|m| match m {
            RdmapRepr::RdmaWrite {
                stag,
                to,
                payload,
                last: true,
            } if stag == rdma_info.rkey && to == rdma_info.buf && payload == &data[..] => Ok(()),
            other => Err(format!(
                "expected the Write of the read data to {rdma_info:?}, got {other:?}"
            )),
        })?;
        rep.node_kinds.push("Write");
        p.expect_rping_info()?;
        rep.node_kinds.push("Send");
        rep.iterations += 1;
    }
    // The node's FPDU kinds are siw's server's, in order.
    let want: Vec<&str> = server_kinds.by_ref().take(rep.node_kinds.len()).collect();
    if want != rep.node_kinds {
        return Err(format!("node kinds {:?}, capture {want:?}", rep.node_kinds));
    }

    // rping's client closes: FIN; the node's FIN follows (graceful close).
    p.send_tcp(TcpControl::Fin, &[]);
    let (control, payload) = p.recv_data()?;
    if control != TcpControl::Fin || !payload.is_empty() {
        return Err(format!(
            "expected the node's FIN, got {control:?} with {} octets",
            payload.len()
        ));
    }
    rep.retransmissions = p.retransmissions;
    rep.frames_in = p.frames_in;
    rep.data_in = p.data_in;
    p.pcap.flush().unwrap();
    Ok(rep)
}

/// The payloads of `list`'s FPDUs that `pick` selects.
fn payloads<T>(list: &[CapFpdu], pick: impl Fn(&CapFpdu) -> Option<T>) -> Vec<T> {
    list.iter().filter_map(pick).collect()
}

/// One node on the external port and the scripted siw host on the other
/// end of its socket, in its own thread (waiting for `go`).
struct Session {
    world: std::rc::Rc<std::cell::RefCell<World>>,
    peer: std::cell::RefCell<Option<std::thread::JoinHandle<Result<PeerReport, String>>>>,
    pcap: PathBuf,
    go: mpsc::Sender<()>,
}

type PeerFn = fn(Script, TcpStream, PathBuf, mpsc::Receiver<()>) -> Result<PeerReport, String>;

impl Session {
    fn start(s: Script, pcap: &str, peer: PeerFn) -> Session {
        let port = ExternalPort::listen_tcp("127.0.0.1:0").unwrap();
        let addr = port.local_addr().unwrap();
        let world = World::external(port).shared();
        // The scripted peer is a thread answering in wall-clock time while
        // the node's clock is simulated: at ~100 k clocks per second a peer
        // that takes 50 ms to answer looks 320 µs late to the node. The
        // node's RDMA-mode RTO (50 µs in co-simulation) would then replay
        // segments the peer has already taken; this strict peer (no
        // retransmission expected) gets an RTO far beyond its answer time.
        world.borrow_mut().nodes[0].fw.config.rdma_retx = RetxConfig {
            rto: PEER_WAIT_RTO_US,
            rto_min: PEER_WAIT_RTO_US,
            rto_max: 4 * PEER_WAIT_RTO_US,
            ..COSIM_RDMA_RETX
        };
        let pcap = PathBuf::from(env!("CARGO_TARGET_TMPDIR")).join(pcap);
        let (go, go_rx) = mpsc::channel();
        let sock = TcpStream::connect(addr).unwrap();
        let path = pcap.clone();
        let handle = std::thread::spawn(move || peer(s, sock, path, go_rx));
        Session {
            world,
            peer: std::cell::RefCell::new(Some(handle)),
            pcap,
            go,
        }
    }

    /// Fails the test with the node's side of the story and the peer's.
    fn fail(&self, what: &str) -> ! {
        let peer = self.peer.borrow_mut().take().unwrap();
        let why = if peer.is_finished() {
            format!("{:?}", peer.join().unwrap())
        } else {
            "peer still waiting".into()
        };
        panic!("{what}; peer: {why}")
    }

    /// The node's driver, configured with the capture's address.
    fn open(&self, mac: [u8; 6], ip: [u8; 4]) -> Context<SimBus> {
        let ctx = Context::open_with(SimBus::new(self.world.clone(), 0), driver_options()).unwrap();
        ctx.configure(&NetConfig {
            mac,
            ip: ip.into(),
            netmask: [255, 255, 255, 0].into(),
            gateway: None,
            mtu: 1500,
        })
        .unwrap();
        ctx
    }

    /// The peer's report once it is done.
    fn finish(&self, node_event: impl std::fmt::Debug) -> PeerReport {
        match self.peer.borrow_mut().take().unwrap().join().unwrap() {
            Ok(r) => r,
            Err(e) => panic!("peer: {e}; node event {node_event:?}"),
        }
    }
}

#[test]
fn rping_server_against_siw_client_over_the_external_port() {
    let s = script();
    let server_writes = payloads(&s.server, |f| match f {
        CapFpdu::Write(d) => Some(d.clone()),
        _ => None,
    });
    let read_sizes = payloads(&s.server, |f| match f {
        CapFpdu::ReadRequest { size, .. } => Some(*size as usize),
        _ => None,
    });
    let iterations = server_writes.len();
    assert_eq!(
        (iterations, read_sizes),
        (5, vec![PING_SIZE; 5]),
        "rping -C 5 -S 64 in the capture"
    );
    let t = Session::start(s, "siw_external.pcap", run_peer);

    // The node: rping's server (sim/src/apps/rping.rs) on the driver; the
    // peer starts once the node listens with its receives posted, as
    // rping's server does.
    let ctx = t.open(SERVER_MAC, SERVER_IP);
    let r = rping::server(&t.world, &ctx, &rping_config(), || t.go.send(()).unwrap())
        .unwrap_or_else(|e| t.fail(&format!("node: {e}")));
    let req = &r.connection;
    println!(
        "node: connect request from {}:{} ird/ord {}/{} rev {} crc {}",
        req.peer_ip, req.peer_port, req.ird, req.ord, req.mpa_revision, req.crc
    );
    assert_eq!(
        (req.ird, req.ord, req.mpa_revision, req.crc),
        (rping::DEPTH, rping::DEPTH, 2, false)
    );
    // what the node Read is what siw's server wrote back in the capture
    assert_eq!(r.data, server_writes, "read data");
    let rep = t.finish("closed");
    println!("peer: {rep:#?}");
    let injects = t.world.borrow().nodes[0].hw.borrow().rx_injects.clone();
    println!("node RX_INJECT writes (clock, octets): {injects:?}");
    assert_eq!(rep.retransmissions, 0);
    assert_eq!(rep.iterations, iterations);
    assert_eq!(rep.node_kinds.len(), 4 * iterations);
    tshark_clean(&t.pcap, 7 * iterations);
}

/// Parses a node frame as TCP (checksums verified) and gives the whole
/// segment to `f` (for the SYN, whose options matter).
fn node_tcp<R>(f: &[u8], g: impl FnOnce(&TcpRepr) -> R) -> Result<R, String> {
    let eth = EthernetFrame::new_checked(f).map_err(|e| format!("{e}"))?;
    let caps = ChecksumCapabilities::default();
    let ip = Ipv4Packet::new_checked(eth.payload()).map_err(|e| format!("{e}"))?;
    let ipr = Ipv4Repr::parse(&ip, &caps).map_err(|e| format!("node IPv4: {e}"))?;
    let tp = TcpPacket::new_checked(ip.payload()).map_err(|e| format!("{e}"))?;
    let t = TcpRepr::parse(
        &tp,
        &IpAddress::Ipv4(ipr.src_addr),
        &IpAddress::Ipv4(ipr.dst_addr),
        &caps,
    )
    .map_err(|e| format!("node TCP: {e}"))?;
    Ok(g(&t))
}

/// The siw server's side of the session (the node is rping's client).
fn run_siw_server(
    s: Script,
    sock: TcpStream,
    pcap: PathBuf,
    go: mpsc::Receiver<()>,
) -> Result<PeerReport, String> {
    let ends = Ends {
        my_mac: SERVER_MAC,
        my_ip: SERVER_IP,
        my_port: SERVER_PORT,
        node_mac: s.client_mac,
        node_ip: CLIENT_IP,
        node_port: s.client_port,
    };
    let mut p = Peer::new(sock, &pcap, ends, s.server_isn);
    let mut rep = PeerReport::default();
    go.recv_timeout(PEER_WAIT)
        .map_err(|_| "the node never got ready".to_string())?;

    // The node resolves us: siw's host answers with its captured reply
    // (its target is the capture's client, which the node is).
    let f = p.recv_frame()?;
    let eth = EthernetFrame::new_checked(&f[..]).map_err(|e| format!("{e}"))?;
    let arp = ArpPacket::new_checked(eth.payload()).map_err(|e| format!("ARP: {e}"))?;
    match ArpRepr::parse(&arp).map_err(|e| format!("ARP: {e}"))? {
        ArpRepr::EthernetIpv4 {
            operation: ArpOperation::Request,
            source_hardware_addr,
            source_protocol_addr,
            target_protocol_addr,
            ..
        } if source_hardware_addr.0 == ends.node_mac
            && source_protocol_addr.octets() == CLIENT_IP
            && target_protocol_addr.octets() == SERVER_IP => {}
        other => return Err(format!("not the node's ARP request: {other:?}")),
    }
    p.send_frame(&s.arp_reply);

    // The node's SYN: MSS and window scale offered, no timestamps or SACK.
    let f = p.recv_frame()?;
    let (node_isn, offers) = node_tcp(&f, |t| {
        (
            (t.control == TcpControl::Syn && t.ack_number.is_none())
                .then_some(t.seq_number.0 as u32),
            (
                t.max_seg_size,
                t.window_scale,
                t.sack_permitted,
                t.timestamp.is_some(),
            ),
        )
    })?;
    let Some(node_isn) = node_isn else {
        return Err("the node's first segment is not a SYN".into());
    };
    let (mss, ws, sack, ts) = offers;
    if mss.is_none() || ws.is_none() || sack || ts {
        return Err(format!(
            "node SYN options: MSS {mss:?} WS {ws:?} SACK {sack} TS {ts}"
        ));
    }
    rep.syn_ack_options = format!("node SYN: MSS {mss:?}, window scale {ws:?}");
    rep.node_isn = node_isn;
    p.rcv_nxt = node_isn.wrapping_add(1);
    // Linux answers what was offered: MSS and window scale only.
    let syn_ack = TcpRepr {
        src_port: SERVER_PORT,
        dst_port: ends.node_port,
        control: TcpControl::Syn,
        seq_number: TcpSeqNumber(s.server_isn as i32),
        ack_number: Some(TcpSeqNumber(p.rcv_nxt as i32)),
        window_len: 65160,
        window_scale: Some(7),
        max_seg_size: Some(1460),
        sack_permitted: false,
        sack_ranges: [None; 3],
        timestamp: None,
        payload: &[],
    };
    p.send_frame(&frame(&ends, &syn_ack));
    p.window_field = (64256u32 >> 7) as u16;

    // The node's MPA Request: the same key, flags and revision as siw's
    // (RFC 5044 §7.1, RFC 6581 §2); then siw's captured Reply.
    let (_, req) = p.recv_data()?;
    let frame_req =
        MpaRequestReply::new_checked(&req[..]).map_err(|e| format!("MPA Request: {e:?}"))?;
    let r = MpaRequestReplyRepr::parse(&frame_req).map_err(|e| format!("MPA Request: {e:?}"))?;
    if req[..18] != s.mpa_request[..18] || frame_req.frame_len() != req.len() {
        return Err(format!("node MPA Request {r:?} differs from siw's header"));
    }
    rep.mpa_reply = format!("node request {r:?}");
    p.send_tcp(TcpControl::Psh, &s.mpa_reply);

    // rping, server side: Read the client's start buffer, Send "go",
    // Write the client's sink buffer, Send "go".
    let mut server = s.server.iter();
    let client_reads: Vec<&Vec<u8>> = s
        .client
        .iter()
        .filter_map(|f| match f {
            CapFpdu::ReadResponse(d) => Some(d),
            _ => None,
        })
        .collect();
    let (mut msn_send, mut msn_read) = (1u32, 1u32);
    for (i, read_data) in client_reads.iter().enumerate() {
        let start = p.expect_rping_info()?;
        rep.node_kinds.push("Send");
        let Some(CapFpdu::ReadRequest {
            sink_stag, sink_to, ..
        }) = server.next()
        else {
            return Err("capture: no Read Request".into());
        };
        p.send_fpdu(&RdmapRepr::ReadRequest {
            msn: msn_read,
            request: rnic_wire::rdmap::ReadRequestRepr {
                sink_stag: *sink_stag,
                sink_to: *sink_to,
                size: start.size,
                src_stag: start.rkey,
                src_to: start.buf,
            },
        });
        msn_read += 1;
        // The node's RTL answers with the Read Response (RFC 5040 §4.5).
        p.expect_rdmap(|m| match m {
            RdmapRepr::ReadResponse {
                stag,
                to,
                payload,
                last: true,
            } if stag == *sink_stag && to == *sink_to && payload == &read_data[..] => Ok(()),
            other => Err(format!(
                "expected the Read Response of iteration {i}, got {other:?}"
            )),
        })?;
        rep.node_kinds.push("ReadResponse");
        let Some(CapFpdu::Send(go1)) = server.next() else {
            return Err("capture: no server Send".into());
        };
        p.send_message(msn_send, go1);
        msn_send += 1;
        let sink = p.expect_rping_info()?;
        rep.node_kinds.push("Send");
        let Some(CapFpdu::Write(data)) = server.next() else {
            return Err("capture: no Write".into());
        };
        if data.len() != sink.size as usize {
            return Err(format!(
                "sink of {} octets for a {}-octet Write",
                sink.size,
                data.len()
            ));
        }
        p.send_fpdu(&RdmapRepr::RdmaWrite {
            last: true,
            stag: sink.rkey,
            to: sink.buf,
            payload: data,
        });
        let Some(CapFpdu::Send(go2)) = server.next() else {
            return Err("capture: no second server Send".into());
        };
        p.send_message(msn_send, go2);
        msn_send += 1;
        rep.iterations += 1;
    }

    // The client (the node) closes: its FIN, our FIN, its ACK.
    let (control, payload) = p.recv_data()?;
    if control != TcpControl::Fin || !payload.is_empty() {
        return Err(format!(
            "expected the node's FIN, got {control:?} with {} octets",
            payload.len()
        ));
    }
    p.send_tcp(TcpControl::Fin, &[]);
    while !p.unacked.is_empty() {
        p.recv_tcp()?;
    }
    rep.retransmissions = p.retransmissions;
    rep.frames_in = p.frames_in;
    rep.data_in = p.data_in;
    p.pcap.flush().unwrap();
    Ok(rep)
}

/// The node as rping's client, connecting to a scripted Linux siw server
/// (the server's side of the same capture: its ARP reply, siw's MPA Reply
/// verbatim, its Read Requests' sink STag/TO, its Sends and Writes). The
/// scripted server checks that the node's Read Responses carry what the
/// real rping client's did: the node's start buffers are rping's.
#[test]
fn rping_client_against_siw_server_over_the_external_port() {
    let s = script();
    assert_eq!(s.client_mac, CLIENT_MAC, "capture's client");
    let client_port = s.client_port;
    let reads = payloads(&s.client, |f| match f {
        CapFpdu::ReadResponse(d) => Some(d.clone()),
        _ => None,
    });
    let writes = payloads(&s.server, |f| match f {
        CapFpdu::Write(d) => Some(d.clone()),
        _ => None,
    });
    assert_eq!((reads.len(), writes.len()), (5, 5), "rping -C 5");
    let t = Session::start(s, "siw_external_client.pcap", run_siw_server);

    let ctx = t.open(CLIENT_MAC, CLIENT_IP);
    t.go.send(()).unwrap();
    let r = rping::client(
        &t.world,
        &ctx,
        SERVER_IP.into(),
        client_port,
        &rping_config(),
    )
    .unwrap_or_else(|e| t.fail(&format!("node: {e}")));
    let est = &r.connection;
    println!(
        "node: established, peer IRD/ORD {}/{} rev {} crc {}",
        est.ird, est.ord, est.mpa_revision, est.crc
    );
    assert_eq!((est.mpa_revision, est.crc, r.attempts), (2, false, 1));
    // what siw's server wrote is what the node's buffers hold
    assert_eq!(r.data, writes, "siw's Writes placed");
    let rep = t.finish("closed");
    println!("peer: {rep:#?}");
    assert_eq!(rep.iterations, reads.len());
    assert_eq!(rep.node_kinds.len(), 3 * reads.len());
    // per iteration: the node's 2 Sends and Read Response, siw's Read
    // Request, 2 Sends and Write
    tshark_clean(&t.pcap, 7 * reads.len());
}

/// tshark decodes the peer's capture with no malformed or error frame and
/// finds at least `fpdus` iWARP DDP/RDMAP frames (see
/// [`support::have_tool`] for a missing tshark).
fn tshark_clean(pcap: &std::path::Path, fpdus: usize) {
    if !support::have_tool("tshark") {
        return;
    }
    let out = std::process::Command::new("tshark")
        .arg("-r")
        .arg(pcap)
        .args([
            "--disable-protocol",
            "rpcordma",
            "-Y",
            "_ws.malformed || _ws.expert.severity == error",
        ])
        .output()
        .expect("run tshark");
    assert!(
        out.status.success(),
        "tshark failed: {}",
        String::from_utf8_lossy(&out.stderr)
    );
    let bad = String::from_utf8_lossy(&out.stdout);
    assert!(bad.trim().is_empty(), "tshark: {bad}");
    let out = std::process::Command::new("tshark")
        .arg("-r")
        .arg(pcap)
        .args(["--disable-protocol", "rpcordma", "-Y", "iwarp_ddp_rdmap"])
        .output()
        .unwrap();
    let n = String::from_utf8_lossy(&out.stdout).lines().count();
    println!("tshark: {n} iWARP DDP/RDMAP frames in {}", pcap.display());
    assert!(n >= fpdus, "tshark sees the FPDUs ({n} < {fpdus})");
}
