//! ICMP Echo (RFC 792): the firmware answers `ping`, at a bounded rate.
//!
//! The RTL takes only TCP on its fast path: `rx_check` checks an IPv4
//! frame's header (version, lengths, header checksum; a bad one is dropped
//! there) and hands every IPv4 datagram that is not TCP, or is a fragment,
//! to the exception queue (`TAG_EXC_IPV4`, reason `NoMatch`, no
//! connection); so an Echo Request reaches [`Echo::on_frame`] through
//! `Firmware::on_exception_of`. It is answered when:
//! * the frame is whole (a frame longer than the octets the firmware has of
//!   it is never answered with part of its data);
//! * it is IPv4 with a valid header checksum, not a fragment (the firmware
//!   does not reassemble), protocol ICMP;
//! * it is addressed to the interface: Ethernet destination our MAC (RFC
//!   1122 §3.3.6: a unicast datagram received as a link-layer broadcast is
//!   discarded) and IPv4 destination the interface address (so no reply to
//!   a broadcast or multicast Echo Request, which RFC 1122 §3.2.2.6 allows
//!   to discard);
//! * the source is a unicast host (RFC 1122 §3.2.1.3: a datagram from
//!   0.0.0.0, a loopback, broadcast, multicast or reserved address, or from
//!   a link-layer group address, is discarded);
//! * the ICMP checksum is valid and it is type 8 (Echo Request), code 0;
//! * the [`RateLimit`] has a token.
//!
//! The Echo Reply (type 0, code 0) carries the request's identifier,
//! sequence number and data unchanged (RFC 792; RFC 1122 §3.2.2.6), goes to
//! the request's Ethernet source (the previous hop: no ARP lookup), with a
//! fresh IPv4 header (no options, TTL [`REPLY_TTL`], DF, identification 0)
//! and a fresh ICMP checksum. IP options of the request (Record Route,
//! Timestamp, source routes) are not carried over into the reply, which
//! RFC 1122 §3.2.2.6 asks for (SHOULD). The reply is never longer than the
//! request, so it fits the raw TX window whenever the request fitted the
//! exception window.

use crate::frame::{self, MIN_FRAME};
use crate::hal::{Hal, IfConfig};
use crate::Micros;
use rnic_wire::net::{
    ChecksumCapabilities, EthernetAddress, EthernetFrame, EthernetProtocol, EthernetRepr,
    Icmpv4Message, Icmpv4Packet, IpProtocol, Ipv4Packet, Ipv4Repr,
};

/// Echo Replies per second at most (the token bucket's rate). Linux limits
/// ICMP output to 1000 a second per host (`icmp_msgs_per_sec`); a node of
/// this device answers `ping`, not floods.
pub const ECHO_RATE: u32 = 100;
/// Echo Replies the bucket holds: a burst of this many is answered at once.
pub const ECHO_BURST: u32 = 10;
/// TTL of an Echo Reply: the default TTL of RFC 1700 ("Assigned Numbers",
/// as RFC 1122 §3.2.1.7 asks a host to use).
pub const REPLY_TTL: u8 = 64;
/// ICMP Echo Request and Echo Reply codes (RFC 792).
pub const ECHO_CODE: u8 = 0;
/// Ethernet + IPv4 header octets of a reply (no IP options).
pub const REPLY_HEADERS: usize = 14 + 20;

/// The rate limit of Echo Replies (`Config::icmp_echo`).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct EchoLimit {
    /// Replies per second; 0 answers nothing.
    pub per_second: u32,
    /// Replies in one burst (the bucket's depth); 0 answers nothing.
    pub burst: u32,
}

impl Default for EchoLimit {
    fn default() -> Self {
        EchoLimit {
            per_second: ECHO_RATE,
            burst: ECHO_BURST,
        }
    }
}

/// Counters of the Echo responder.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default)]
pub struct IcmpStats {
    /// Echo Replies sent.
    pub echo_replies: u64,
    /// Valid Echo Requests not answered because the bucket was empty.
    pub rate_limited: u64,
    /// ICMP datagrams dropped by a check above: cut short, bad IPv4 or ICMP
    /// checksum, fragment, not addressed to the interface, invalid source.
    pub dropped: u64,
    /// Valid ICMP messages to the interface that are not Echo Requests.
    pub other: u64,
}

/// A token bucket in firmware time: [`EchoLimit::burst`] tokens, one more
/// every `1 s / per_second`. Full at the first use.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default)]
pub struct RateLimit {
    /// Credit in µs of refill time, at `last`.
    credit: Micros,
    /// The last time a token was asked for (`None`: never, the bucket is full).
    last: Option<Micros>,
}

impl RateLimit {
    /// A full bucket.
    pub const fn new() -> Self {
        RateLimit {
            credit: 0,
            last: None,
        }
    }

    /// Takes a token at `now` if there is one.
    pub fn take(&mut self, now: Micros, limit: &EchoLimit) -> bool {
        if limit.per_second == 0 || limit.burst == 0 {
            return false;
        }
        let cost = (1_000_000 / limit.per_second as Micros).max(1);
        let cap = cost * limit.burst as Micros;
        let credit = match self.last {
            None => cap,
            Some(last) => self
                .credit
                .saturating_add(now.saturating_sub(last))
                .min(cap),
        };
        self.last = Some(now);
        if credit >= cost {
            self.credit = credit - cost;
            true
        } else {
            self.credit = credit;
            false
        }
    }
}

/// Why a frame is not answered.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Refusal {
    /// Not IPv4 ICMP: not the Echo responder's.
    NotIcmp,
    /// ICMP, but refused by a check (counted in [`IcmpStats::dropped`]).
    Dropped,
    /// A valid ICMP message, not an Echo Request.
    Other,
}

/// A valid Echo Request to the interface.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct EchoRequest<'a> {
    /// Ethernet source: where the reply goes.
    pub src_mac: [u8; 6],
    /// IPv4 source.
    pub src_ip: u32,
    /// The ICMP message (header, identifier, sequence number, data).
    pub icmp: &'a [u8],
}

/// Whether `ip` can be the source of a datagram a host answers (RFC 1122
/// §3.2.1.3): not 0.0.0.0/8, loopback 127.0.0.0/8, multicast or reserved
/// (224.0.0.0 and up, which includes the limited broadcast), nor the
/// directed broadcast of the interface's subnet.
fn unicast_source(ip: u32, ifc: &IfConfig) -> bool {
    let first = ip >> 24;
    let subnet_broadcast = ifc.netmask != 0 && ip == (ifc.ip & ifc.netmask) | !ifc.netmask;
    first != 0 && first != 127 && first < 224 && !subnet_broadcast
}

/// Parses an exception-queue frame of which `buf` holds the first octets
/// and the device received `frame_len` in all: an Echo Request the
/// interface `ifc` answers, or why not. Never panics on malformed input.
pub fn parse_echo_request<'a>(
    buf: &'a [u8],
    frame_len: usize,
    ifc: &IfConfig,
) -> Result<EchoRequest<'a>, Refusal> {
    let buf = &buf[..frame_len.min(buf.len())];
    let Ok(eth) = EthernetFrame::new_checked(buf) else {
        return Err(Refusal::NotIcmp);
    };
    if eth.ethertype() != EthernetProtocol::Ipv4 {
        return Err(Refusal::NotIcmp);
    }
    let payload: &[u8] = &buf[14..];
    // The fixed header must be here to see the protocol.
    if payload.len() < 20 || Ipv4Packet::new_unchecked(payload).next_header() != IpProtocol::Icmp {
        return Err(Refusal::NotIcmp);
    }
    if frame_len > buf.len() {
        // Cut short by the exception window: never answered with part of it.
        return Err(Refusal::Dropped);
    }
    let Ok(ip) = Ipv4Packet::new_checked(payload) else {
        return Err(Refusal::Dropped);
    };
    if ip.version() != 4
        || ip.header_len() < 20
        || !ip.verify_checksum()
        || ip.more_frags()
        || ip.frag_offset() != 0
        || eth.dst_addr().0 != ifc.mac
        || !eth.src_addr().is_unicast()
        || u32::from(ip.dst_addr()) != ifc.ip
        || !unicast_source(u32::from(ip.src_addr()), ifc)
    {
        return Err(Refusal::Dropped);
    }
    let icmp = &payload[ip.header_len() as usize..ip.total_len() as usize];
    let Ok(p) = Icmpv4Packet::new_checked(icmp) else {
        return Err(Refusal::Dropped);
    };
    if !p.verify_checksum() {
        return Err(Refusal::Dropped);
    }
    if p.msg_type() != Icmpv4Message::EchoRequest || p.msg_code() != ECHO_CODE {
        return Err(Refusal::Other);
    }
    Ok(EchoRequest {
        src_mac: eth.src_addr().0,
        src_ip: u32::from(ip.src_addr()),
        icmp,
    })
}

/// The length of the Echo Reply to `req` (before padding to the Ethernet
/// minimum), if it fits the interface's MTU and the firmware's frame
/// buffer ([`frame::MAX_FRAME`]).
pub fn reply_len(ifc: &IfConfig, req: &EchoRequest) -> Option<usize> {
    let ip_len = 20 + req.icmp.len();
    let len = 14 + ip_len;
    (ip_len <= ifc.mtu as usize && len <= frame::MAX_FRAME).then_some(len)
}

/// Builds the Echo Reply to `req` from the interface `ifc` into `buf`;
/// returns the frame length (padded to the Ethernet minimum), or `None` if
/// it does not fit `buf` ([`reply_len`]).
pub fn build_echo_reply(buf: &mut [u8], ifc: &IfConfig, req: &EchoRequest) -> Option<usize> {
    let len = reply_len(ifc, req)?;
    let buf = buf.get_mut(..len.max(MIN_FRAME))?;
    buf.fill(0);
    EthernetRepr {
        src_addr: EthernetAddress(ifc.mac),
        dst_addr: EthernetAddress(req.src_mac),
        ethertype: EthernetProtocol::Ipv4,
    }
    .emit(&mut EthernetFrame::new_unchecked(&mut buf[..]));
    let ipr = Ipv4Repr {
        src_addr: frame::ip4(ifc.ip),
        dst_addr: frame::ip4(req.src_ip),
        next_header: IpProtocol::Icmp,
        payload_len: req.icmp.len(),
        hop_limit: REPLY_TTL,
    };
    ipr.emit(
        &mut Ipv4Packet::new_unchecked(&mut buf[14..len]),
        &ChecksumCapabilities::default(),
    );
    let icmp = &mut buf[REPLY_HEADERS..len];
    icmp.copy_from_slice(req.icmp);
    let mut p = Icmpv4Packet::new_unchecked(icmp);
    p.set_msg_type(Icmpv4Message::EchoReply);
    p.set_msg_code(ECHO_CODE);
    p.fill_checksum();
    Some(len.max(MIN_FRAME))
}

/// The Echo responder: its rate limit and counters.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default)]
pub struct Echo {
    bucket: RateLimit,
    stats: IcmpStats,
}

impl Echo {
    /// A responder with a full bucket.
    pub const fn new() -> Self {
        Echo {
            bucket: RateLimit::new(),
            stats: IcmpStats {
                echo_replies: 0,
                rate_limited: 0,
                dropped: 0,
                other: 0,
            },
        }
    }

    /// The counters.
    pub fn stats(&self) -> IcmpStats {
        self.stats
    }

    /// Handles an exception-queue frame (`buf` its first octets, `frame_len`
    /// its length on the wire) at `now`: answers it if it is an Echo
    /// Request for `ifc` and `limit` allows. Returns whether it was ICMP.
    pub fn on_frame<H: Hal>(
        &mut self,
        hal: &mut H,
        ifc: &IfConfig,
        limit: &EchoLimit,
        buf: &[u8],
        frame_len: usize,
        now: Micros,
    ) -> bool {
        let req = match parse_echo_request(buf, frame_len, ifc) {
            Ok(req) => req,
            Err(Refusal::NotIcmp) => return false,
            Err(Refusal::Dropped) => {
                self.stats.dropped += 1;
                return true;
            }
            Err(Refusal::Other) => {
                self.stats.other += 1;
                return true;
            }
        };
        if reply_len(ifc, &req).is_none() {
            self.stats.dropped += 1;
            return true;
        }
        if !self.bucket.take(now, limit) {
            self.stats.rate_limited += 1;
            return true;
        }
        let mut out = [0u8; frame::MAX_FRAME];
        let sent = build_echo_reply(&mut out, ifc, &req).map(|n| hal.send_frame(&out[..n]));
        if let Some(Ok(())) = sent {
            self.stats.echo_replies += 1;
        } else {
            self.stats.dropped += 1;
        }
        true
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    const LIMIT: EchoLimit = EchoLimit {
        per_second: 100,
        burst: 10,
    };

    #[test]
    fn bucket_gives_the_burst_then_one_per_interval() {
        let mut b = RateLimit::new();
        let t0 = 5_000_000;
        assert_eq!((0..50).filter(|_| b.take(t0, &LIMIT)).count(), 10);
        // 10 ms per token
        assert!(!b.take(t0 + 9_999, &LIMIT));
        assert!(b.take(t0 + 10_000, &LIMIT));
        assert!(!b.take(t0 + 10_000, &LIMIT));
        // a long pause refills only up to the burst
        assert_eq!(
            (0..50).filter(|_| b.take(t0 + 10_000_000, &LIMIT)).count(),
            10
        );
        // off
        let off = EchoLimit {
            per_second: 0,
            ..LIMIT
        };
        assert!(!RateLimit::new().take(t0, &off));
    }

    #[test]
    fn sources_a_host_does_not_answer() {
        let ifc = IfConfig {
            mac: [2, 0, 0, 0, 0, 1],
            ip: 0x0A00_0001,
            netmask: 0xFFFF_FF00,
            gateway: 0,
            mtu: 1500,
        };
        for ip in [0x0A00_0002, 0x0B01_0203, 0xC0A8_0001] {
            assert!(unicast_source(ip, &ifc), "{ip:08x}");
        }
        for ip in [
            0,
            0x00FF_0001,
            0x7F00_0001,
            0xE000_0001,
            0xF000_0001,
            0xFFFF_FFFF,
            0x0A00_00FF,
        ] {
            assert!(!unicast_source(ip, &ifc), "{ip:08x}");
        }
    }
}
