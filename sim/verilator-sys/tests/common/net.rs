//! Ethernet/IPv4/TCP frames built with smoltcp's emitters, the reference
//! classification of a frame (from smoltcp's parsers plus the RFC rules the
//! RTL applies), and an RX harness around `rnic_core`: MAC driver, `rx_pay`
//! sink with the header sideband, a firmware-like exception-queue reader,
//! and the connection-table write port.
#![allow(dead_code)]

use super::Rng;
use smoltcp::wire::{
    EthernetAddress, EthernetFrame, EthernetProtocol, IpAddress, IpProtocol, Ipv4Address,
    Ipv4Packet, TcpPacket, TcpSeqNumber,
};
use std::collections::VecDeque;
use verilator_sys::Model;

pub const ETH_LEN: usize = 14;
/// Ethernet minimum frame without FCS: shorter frames are padded.
pub const ETH_MIN: usize = 60;
pub const FLAG_FIN: u8 = 0x01;
pub const FLAG_SYN: u8 = 0x02;
pub const FLAG_RST: u8 = 0x04;
pub const FLAG_PSH: u8 = 0x08;
pub const FLAG_ACK: u8 = 0x10;

/// `ExceptionReason` codes (rnic_wire::abi::context).
pub const R_NO_MATCH: u8 = 0;
pub const R_FIRMWARE_MODE: u8 = 1;
pub const R_FIN: u8 = 2;
pub const R_RST: u8 = 3;
pub const R_SYN: u8 = 4;
pub const R_OUT_OF_WINDOW: u8 = 5;
pub const CONN_NONE: u32 = 0xFFFF_FFFF;

/// A TCP/IPv4 segment to build.
#[derive(Clone, Debug)]
pub struct Seg {
    pub dst_mac: [u8; 6],
    pub src_mac: [u8; 6],
    pub src_ip: [u8; 4],
    pub dst_ip: [u8; 4],
    pub sport: u16,
    pub dport: u16,
    pub seq: u32,
    pub ack: u32,
    pub flags: u8,
    pub window: u16,
    /// IPv4 options (length a multiple of 4, at most 40).
    pub ip_opts: Vec<u8>,
    /// TCP options (length a multiple of 4, at most 40).
    pub tcp_opts: Vec<u8>,
    pub payload: Vec<u8>,
    pub proto: u8,
    pub more_frags: bool,
    pub frag_off: u16,
}

impl Seg {
    pub fn new(src_ip: [u8; 4], dst_ip: [u8; 4], sport: u16, dport: u16) -> Seg {
        Seg {
            dst_mac: [2, 0, 0, 0, 0, 1],
            src_mac: [2, 0, 0, 0, 0, 2],
            src_ip,
            dst_ip,
            sport,
            dport,
            seq: 0,
            ack: 0,
            flags: FLAG_ACK,
            window: 65535,
            ip_opts: vec![],
            tcp_opts: vec![],
            payload: vec![],
            proto: 6,
            more_frags: false,
            frag_off: 0,
        }
    }

    /// The Ethernet frame (no FCS), padded to 60 bytes with `pad` bytes.
    pub fn build(&self, pad: u8) -> Vec<u8> {
        let src = Ipv4Address::from(self.src_ip);
        let dst = Ipv4Address::from(self.dst_ip);
        let thl = 20 + self.tcp_opts.len();
        let mut tcp = vec![0u8; thl + self.payload.len()];
        {
            let mut t = TcpPacket::new_unchecked(&mut tcp[..]);
            t.set_src_port(self.sport);
            t.set_dst_port(self.dport);
            t.set_seq_number(TcpSeqNumber(self.seq as i32));
            t.set_ack_number(TcpSeqNumber(self.ack as i32));
            t.set_header_len(thl as u8);
            t.clear_flags();
            t.set_fin(self.flags & FLAG_FIN != 0);
            t.set_syn(self.flags & FLAG_SYN != 0);
            t.set_rst(self.flags & FLAG_RST != 0);
            t.set_psh(self.flags & FLAG_PSH != 0);
            t.set_ack(self.flags & FLAG_ACK != 0);
            t.set_urg(self.flags & 0x20 != 0);
            t.set_ece(self.flags & 0x40 != 0);
            t.set_cwr(self.flags & 0x80 != 0);
            t.set_window_len(self.window);
            t.set_urgent_at(0);
            t.options_mut().copy_from_slice(&self.tcp_opts);
            t.payload_mut().copy_from_slice(&self.payload);
            if self.proto == 6 {
                t.fill_checksum(&IpAddress::Ipv4(src), &IpAddress::Ipv4(dst));
            }
        }
        let ihl = 20 + self.ip_opts.len();
        let mut ip = vec![0u8; ihl + tcp.len()];
        {
            let mut p = Ipv4Packet::new_unchecked(&mut ip[..]);
            p.set_version(4);
            p.set_header_len(ihl as u8);
            p.set_dscp(0);
            p.set_ecn(0);
            p.set_total_len((ihl + tcp.len()) as u16);
            p.set_ident(0x1234);
            p.clear_flags();
            p.set_more_frags(self.more_frags);
            p.set_frag_offset(self.frag_off);
            p.set_hop_limit(64);
            p.set_next_header(IpProtocol::from(self.proto));
            p.set_src_addr(src);
            p.set_dst_addr(dst);
            p.fill_checksum();
        }
        ip[20..ihl].copy_from_slice(&self.ip_opts);
        Ipv4Packet::new_unchecked(&mut ip[..]).fill_checksum();
        ip[ihl..].copy_from_slice(&tcp);
        eth_frame(self.dst_mac, self.src_mac, EthernetProtocol::Ipv4, &ip, pad)
    }
}

pub fn eth_frame(
    dst: [u8; 6],
    src: [u8; 6],
    ty: EthernetProtocol,
    payload: &[u8],
    pad: u8,
) -> Vec<u8> {
    let mut f = vec![0u8; ETH_LEN + payload.len()];
    {
        let mut e = EthernetFrame::new_unchecked(&mut f[..]);
        e.set_dst_addr(EthernetAddress(dst));
        e.set_src_addr(EthernetAddress(src));
        e.set_ethertype(ty);
        e.payload_mut().copy_from_slice(payload);
    }
    while f.len() < ETH_MIN {
        f.push(pad);
    }
    f
}

/// Recomputes the IPv4 header checksum of a frame (after a deliberate edit).
pub fn refill_ip_checksum(frame: &mut [u8]) {
    Ipv4Packet::new_unchecked(&mut frame[ETH_LEN..]).fill_checksum();
}

/// The header fields of a TCP segment, as smoltcp parses them.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Hdr {
    pub eth_dst: u64,
    pub eth_src: u64,
    pub ip_src: u32,
    pub ip_dst: u32,
    pub sport: u16,
    pub dport: u16,
    pub seq: u32,
    pub ack: u32,
    pub flags: u8,
    pub window: u16,
    pub pay_len: u16,
    pub hdr_len: u8,
}

/// What the RX path must do with a frame (before the connection split).
#[derive(Clone, Debug, PartialEq, Eq)]
pub enum Class {
    BadLen,
    BadIpCsum,
    BadTcpCsum,
    /// To the firmware, reason NoMatch, no connection.
    ExcNoMatch,
    /// A good TCP segment: header and payload.
    Tcp(Hdr, Vec<u8>),
}

fn mac48(b: &[u8]) -> u64 {
    b.iter().fold(0u64, |a, &x| a << 8 | x as u64)
}

/// Reference classification, from smoltcp's parsers and checksum routines
/// plus the RFC 791 / RFC 9293 header rules (version 4, IHL >= 5, data
/// offset >= 5, fragments and non-TCP to the firmware).
pub fn classify(frame: &[u8]) -> Class {
    let Ok(eth) = EthernetFrame::new_checked(frame) else {
        return Class::BadLen;
    };
    if eth.ethertype() != EthernetProtocol::Ipv4 {
        return Class::ExcNoMatch;
    }
    let ip = match Ipv4Packet::new_checked(eth.payload()) {
        Ok(ip) if ip.version() == 4 && ip.header_len() >= 20 => ip,
        _ => return Class::BadLen,
    };
    if !ip.verify_checksum() {
        return Class::BadIpCsum;
    }
    if ip.more_frags() || ip.frag_offset() != 0 || ip.next_header() != IpProtocol::Tcp {
        return Class::ExcNoMatch;
    }
    let tcp = match TcpPacket::new_checked(ip.payload()) {
        Ok(t) if t.header_len() >= 20 => t,
        _ => return Class::BadLen,
    };
    let (src, dst) = (ip.src_addr(), ip.dst_addr());
    if !tcp.verify_checksum(&IpAddress::Ipv4(src), &IpAddress::Ipv4(dst)) {
        return Class::BadTcpCsum;
    }
    let ihl = ip.header_len() as usize;
    let flags = ip.payload()[13];
    let hdr = Hdr {
        eth_dst: mac48(eth.dst_addr().as_bytes()),
        eth_src: mac48(eth.src_addr().as_bytes()),
        ip_src: u32::from(src),
        ip_dst: u32::from(dst),
        sport: tcp.src_port(),
        dport: tcp.dst_port(),
        seq: tcp.seq_number().0 as u32,
        ack: tcp.ack_number().0 as u32,
        flags,
        window: tcp.window_len(),
        pay_len: tcp.payload().len() as u16,
        hdr_len: (ETH_LEN + ihl + tcp.header_len() as usize) as u8,
    };
    Class::Tcp(hdr, tcp.payload().to_vec())
}

/// One connection-table entry, as written through `ct_wr_*`.
#[derive(Clone, Debug, Default)]
pub struct Conn {
    pub used: bool,
    pub local_ip: u32,
    pub peer_ip: u32,
    pub local_port: u16,
    pub peer_port: u16,
    pub mode: u8,
    pub mpa: u8,
    pub rcv_nxt: u32,
    pub rcv_wnd: u32,
    pub snd_una: u32,
    pub snd_nxt: u32,
}

/// Reference fast/slow split (rx_split's table, written from the brief and
/// RFC 9293 §3.10.7.4): `Ok(conn)` = fast path, `Err((reason, conn))`.
/// Updates the model connection on the fast path.
pub fn split(conns: &mut [Conn], h: &Hdr) -> Result<usize, (u8, u32)> {
    let Some(i) = conns.iter().position(|c| {
        c.used
            && c.local_ip == h.ip_dst
            && c.peer_ip == h.ip_src
            && c.local_port == h.dport
            && c.peer_port == h.sport
    }) else {
        return Err((R_NO_MATCH, CONN_NONE));
    };
    let c = &mut conns[i];
    if c.mode == 0 {
        return Err((R_NO_MATCH, CONN_NONE));
    }
    if c.mode != 2 {
        return Err((R_FIRMWARE_MODE, i as u32));
    }
    if h.flags & FLAG_RST != 0 {
        return Err((R_RST, i as u32));
    }
    if h.flags & FLAG_SYN != 0 {
        return Err((R_SYN, i as u32));
    }
    if h.flags & FLAG_FIN != 0 {
        return Err((R_FIN, i as u32));
    }
    if h.seq != c.rcv_nxt || h.pay_len as u32 > c.rcv_wnd {
        return Err((R_OUT_OF_WINDOW, i as u32));
    }
    c.rcv_nxt = c.rcv_nxt.wrapping_add(h.pay_len as u32);
    let d_una = h.ack.wrapping_sub(c.snd_una);
    let d_nxt = c.snd_nxt.wrapping_sub(h.ack);
    if h.flags & FLAG_ACK != 0 && d_una != 0 && d_una < 1 << 31 && d_nxt < 1 << 31 {
        c.snd_una = h.ack;
    }
    Ok(i)
}

/// A payload delivered on `rx_pay`, with its sideband.
#[derive(Clone, Debug)]
pub struct Delivered {
    pub hdr: Hdr,
    pub conn: u8,
    pub mpa: u8,
    pub payload: Vec<u8>,
}

/// A frame read from the exception queue.
#[derive(Clone, Debug)]
pub struct ExcFrame {
    pub reason: u8,
    pub conn: u32,
    pub len: usize,
    pub bytes: Vec<u8>,
}

/// The RX harness.
pub struct Rx {
    pub m: Model,
    pub rng: Rng,
    pub cycle: u64,
    /// Percentage of cycles `rx_pay_ready` is high.
    pub ready_pct: usize,
    /// Percentage of cycles without a MAC beat inside a frame.
    pub gap_pct: usize,
    /// Whether the exception reader runs.
    pub read_exc: bool,
    pending: VecDeque<(u64, u64, bool, bool)>,
    cur: Vec<u8>,
    pub delivered: Vec<Delivered>,
    pub crcs: Vec<u32>,
    pub acks: Vec<(u8, u32)>,
    pub excs: Vec<ExcFrame>,
    exc_rd: Option<(ExcFrame, usize)>,
    exc_pop: bool,
    /// Cycle at which each payload's first beat left (for throughput).
    pub pay_start: Vec<u64>,
}

impl Rx {
    pub fn new(seed: u64) -> Rx {
        let mut m = Model::new();
        m.reset(4);
        Rx {
            m,
            rng: Rng::new(seed),
            cycle: 0,
            ready_pct: 100,
            gap_pct: 0,
            read_exc: true,
            pending: VecDeque::new(),
            cur: Vec::new(),
            delivered: Vec::new(),
            crcs: Vec::new(),
            acks: Vec::new(),
            excs: Vec::new(),
            exc_rd: None,
            exc_pop: false,
            pay_start: Vec::new(),
        }
    }

    /// Writes a connection-table entry (one clock).
    pub fn write_conn(&mut self, idx: u8, c: &Conn) {
        let m = &mut self.m;
        m.set_ct_wr_valid(1);
        m.set_ct_wr_idx(idx as u64);
        m.set_ct_wr_used(c.used as u64);
        m.set_ct_wr_local_ip(c.local_ip as u64);
        m.set_ct_wr_peer_ip(c.peer_ip as u64);
        m.set_ct_wr_local_port(c.local_port as u64);
        m.set_ct_wr_peer_port(c.peer_port as u64);
        m.set_ct_wr_mode(c.mode as u64);
        m.set_ct_wr_mpa(c.mpa as u64);
        m.set_ct_wr_rcv_nxt(c.rcv_nxt as u64);
        m.set_ct_wr_rcv_wnd(c.rcv_wnd as u64);
        m.set_ct_wr_snd_una(c.snd_una as u64);
        m.set_ct_wr_snd_nxt(c.snd_nxt as u64);
        self.step();
        self.m.set_ct_wr_valid(0);
    }

    /// Reads `(used, mode, rcv_nxt, snd_una)` of an entry (one clock).
    pub fn read_conn(&mut self, idx: u8) -> (bool, u8, u32, u32) {
        self.m.set_ct_rd_idx(idx as u64);
        self.step();
        (
            self.m.get_ct_rd_used() != 0,
            self.m.get_ct_rd_mode() as u8,
            self.m.get_ct_rd_rcv_nxt() as u32,
            self.m.get_ct_rd_snd_una() as u32,
        )
    }

    /// Queues a frame's beats for the MAC.
    pub fn send(&mut self, frame: &[u8]) {
        self.send_fcs(frame, false);
    }

    /// Queues a frame, with `mac_rx_fcs_bad` on its last beat if `fcs_bad`.
    pub fn send_fcs(&mut self, frame: &[u8], fcs_bad: bool) {
        self.pending.extend(
            super::beats(frame)
                .into_iter()
                .map(|(d, k, last)| (d, k, last, fcs_bad && last)),
        );
    }

    pub fn idle(&self) -> bool {
        self.pending.is_empty()
    }

    /// Frames the RX path has classified so far (dropped, fast, queued or
    /// lost for a full exception queue).
    pub fn resolved(&self) -> u64 {
        let m = &self.m;
        m.get_cnt_rx_bad_len()
            + m.get_cnt_rx_bad_ip_csum()
            + m.get_cnt_rx_bad_tcp_csum()
            + m.get_cnt_rx_fast()
            + m.get_cnt_rx_exc()
            + m.get_cnt_rx_exc_full()
    }

    /// One clock.
    pub fn step(&mut self) {
        let ready = self.rng.percent(self.ready_pct);
        let gap = self.rng.percent(self.gap_pct);
        let m = &mut self.m;
        m.set_rx_pay_ready(ready as u64);
        // MAC
        if !gap && !self.pending.is_empty() {
            let (d, k, last, fcs_bad) = self.pending.pop_front().unwrap();
            let garbage = if k == 8 {
                0
            } else {
                self.rng.next_u64() << (8 * k)
            };
            m.set_mac_rx_data(d | garbage);
            m.set_mac_rx_keep(if last { k } else { 8 });
            m.set_mac_rx_last(last as u64);
            m.set_mac_rx_fcs_bad(fcs_bad as u64);
            m.set_mac_rx_valid(1);
        } else {
            m.set_mac_rx_valid(0);
            m.set_mac_rx_data(self.rng.next_u64());
            m.set_mac_rx_fcs_bad(self.rng.below(2) as u64);
        }
        // exception reader
        m.set_exc_pop(self.exc_pop as u64);
        if let Some((_, w)) = &self.exc_rd {
            m.set_exc_rd_word(*w as u64);
        }
        m.eval();
        // rx_pay sink
        if m.get_rx_pay_valid() != 0 && ready {
            if self.cur.is_empty() {
                self.pay_start.push(self.cycle);
            }
            let d = m.get_rx_pay_data().to_le_bytes();
            let last = m.get_rx_pay_last() != 0;
            let k = if last {
                m.get_rx_pay_keep() as usize
            } else {
                8
            };
            assert!(k <= 8, "keep {k}");
            assert!(
                last || m.get_rx_pay_keep() == 8,
                "keep != 8 on a non-last beat"
            );
            self.cur.extend_from_slice(&d[..k]);
            if last {
                let hdr = Hdr {
                    eth_dst: m.get_rx_hdr_eth_dst(),
                    eth_src: m.get_rx_hdr_eth_src(),
                    ip_src: m.get_rx_hdr_ip_src() as u32,
                    ip_dst: m.get_rx_hdr_ip_dst() as u32,
                    sport: m.get_rx_hdr_sport() as u16,
                    dport: m.get_rx_hdr_dport() as u16,
                    seq: m.get_rx_hdr_seq() as u32,
                    ack: m.get_rx_hdr_ack() as u32,
                    flags: m.get_rx_hdr_flags() as u8,
                    window: m.get_rx_hdr_window() as u16,
                    pay_len: m.get_rx_hdr_pay_len() as u16,
                    hdr_len: m.get_rx_hdr_hdr_len() as u8,
                };
                self.delivered.push(Delivered {
                    hdr,
                    conn: m.get_rx_seg_conn() as u8,
                    mpa: m.get_rx_seg_mpa() as u8,
                    payload: std::mem::take(&mut self.cur),
                });
                // an empty segment is one beat with keep 0
                if k == 0 {
                    self.pay_start.pop();
                    self.pay_start.push(self.cycle);
                }
            }
        }
        if m.get_rx_pay_crc_valid() != 0 {
            self.crcs.push(m.get_rx_pay_crc() as u32);
        }
        if m.get_ack_req_valid() != 0 {
            self.acks
                .push((m.get_ack_req_conn() as u8, m.get_ack_req_ack() as u32));
        }
        m.tick();
        self.cycle += 1;
        // exception reader, after the edge
        if self.exc_pop {
            self.exc_pop = false;
        } else if let Some((f, w)) = &mut self.exc_rd {
            let d = (self.m.get_exc_rd_data() as u32).to_le_bytes();
            let stored = f.len.min(2048);
            for (i, b) in d.iter().enumerate() {
                if 4 * *w + i < stored {
                    f.bytes.push(*b);
                }
            }
            *w += 1;
            if 4 * *w >= stored {
                let (f, _) = self.exc_rd.take().unwrap();
                self.excs.push(f);
                self.exc_pop = true;
            }
        } else if self.read_exc && self.m.get_exc_valid() != 0 {
            let f = ExcFrame {
                reason: self.m.get_exc_reason() as u8,
                conn: self.m.get_exc_conn() as u32,
                len: self.m.get_exc_len() as usize,
                bytes: Vec::new(),
            };
            self.exc_rd = Some((f, 0));
        }
    }

    /// Runs until the MAC queue is empty, then `n` more clocks.
    pub fn drain(&mut self, n: usize) {
        while !self.pending.is_empty() {
            self.step();
        }
        for _ in 0..n {
            self.step();
        }
    }
}
