//! ARP (RFC 826): answer requests for our IPv4 address and resolve next hops.
//!
//! The cache holds at most `N` entries. Resolving an address not in the cache
//! sends a broadcast request and makes a pending entry; [`ArpCache::poll`]
//! repeats the request every [`RETRY`] up to [`TRIES`] times, then marks the
//! entry failed: from then on [`ArpCache::resolve`] says
//! [`Resolve::Unreachable`] until the failure ages out ([`NEGATIVE_TTL`]).
//! Resolved entries live [`TTL`]; connections keep the MAC they were opened
//! with in their context, and only a route update (from the host) changes it.
//!
//! A reply or request from an address we have an entry for refreshes that
//! entry (RFC 826's merge); a request for our address adds its sender if
//! there is a free slot (never by evicting, so a flood of requests cannot
//! push out the entries connections use). A full cache evicts its oldest
//! entry for a new resolution.

use crate::frame;
use crate::hal::{Hal, IfConfig};
use crate::{Micros, MS};
use rnic_wire::net::{ArpOperation, ArpRepr, EthernetAddress};

/// Interval between requests for one address.
pub const RETRY: Micros = 1000 * MS;
/// Requests sent before an address is unreachable.
pub const TRIES: u8 = 3;
/// Lifetime of a resolved entry.
pub const TTL: Micros = 300_000 * MS;
/// Lifetime of a failed entry.
pub const NEGATIVE_TTL: Micros = 3000 * MS;
/// The broadcast address.
pub const BROADCAST: [u8; 6] = [0xFF; 6];

/// The answer to a resolution.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Resolve {
    /// The next hop's MAC address.
    Mac([u8; 6]),
    /// A request is out; ask again later.
    Pending,
    /// Nobody answered (or off-subnet without a gateway).
    Unreachable,
}

#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum State {
    Resolved { mac: [u8; 6], expires: Micros },
    Pending { tries: u8, next: Micros },
    Failed { until: Micros },
}

#[derive(Debug, Clone, Copy)]
struct Entry {
    ip: u32,
    state: State,
    born: Micros,
}

/// The ARP cache.
#[derive(Debug)]
pub struct ArpCache<const N: usize> {
    entries: heapless::Vec<Entry, N>,
}

impl<const N: usize> Default for ArpCache<N> {
    fn default() -> Self {
        Self::new()
    }
}

impl<const N: usize> ArpCache<N> {
    /// An empty cache.
    pub const fn new() -> Self {
        ArpCache {
            entries: heapless::Vec::new(),
        }
    }

    /// Empty.
    pub fn clear(&mut self) {
        self.entries.clear();
    }

    /// Number of entries.
    pub fn len(&self) -> usize {
        self.entries.len()
    }

    /// Whether the cache is empty.
    pub fn is_empty(&self) -> bool {
        self.entries.is_empty()
    }

    /// The resolved MAC of `ip`, if any (expired entries included: the
    /// caller may prefer a stale MAC to none).
    pub fn lookup(&self, ip: u32) -> Option<[u8; 6]> {
        self.entries
            .iter()
            .find(|e| e.ip == ip)
            .and_then(|e| match e.state {
                State::Resolved { mac, .. } => Some(mac),
                _ => None,
            })
    }

    fn find(&mut self, ip: u32) -> Option<&mut Entry> {
        self.entries.iter_mut().find(|e| e.ip == ip)
    }

    /// Sets `ip` → `mac` (a learned or host-given binding).
    pub fn set(&mut self, ip: u32, mac: [u8; 6], now: Micros) {
        let state = State::Resolved {
            mac,
            expires: now + TTL,
        };
        if let Some(e) = self.find(ip) {
            e.state = state;
            return;
        }
        self.insert(Entry {
            ip,
            state,
            born: now,
        });
    }

    fn insert(&mut self, e: Entry) {
        if self.entries.is_full() {
            // Evict the oldest entry.
            if let Some((i, _)) = self.entries.iter().enumerate().min_by_key(|(_, e)| e.born) {
                self.entries.swap_remove(i);
            }
        }
        let _ = self.entries.push(e);
    }

    /// Resolves the next hop toward `dst` (the gateway when `dst` is
    /// off-subnet), sending a request if needed.
    pub fn resolve_dst<H: Hal>(
        &mut self,
        hal: &mut H,
        cfg: &IfConfig,
        dst: u32,
        now: Micros,
    ) -> (Option<u32>, Resolve) {
        match cfg.next_hop(dst) {
            Some(nh) => (Some(nh), self.resolve(hal, cfg, nh, now)),
            None => (None, Resolve::Unreachable),
        }
    }

    /// Resolves next hop `ip`, sending a request if it is not in the cache.
    pub fn resolve<H: Hal>(
        &mut self,
        hal: &mut H,
        cfg: &IfConfig,
        ip: u32,
        now: Micros,
    ) -> Resolve {
        if ip == 0 || ip == u32::MAX || ip == cfg.ip {
            return Resolve::Unreachable;
        }
        if let Some(e) = self.find(ip) {
            return match e.state {
                State::Resolved { mac, .. } => Resolve::Mac(mac),
                State::Pending { .. } => Resolve::Pending,
                State::Failed { .. } => Resolve::Unreachable,
            };
        }
        send_request(hal, cfg, ip);
        self.insert(Entry {
            ip,
            state: State::Pending {
                tries: 1,
                next: now + RETRY,
            },
            born: now,
        });
        Resolve::Pending
    }

    /// Handles a received ARP packet: answers requests for our address and
    /// learns bindings. Returns the address whose entry became resolved.
    pub fn on_arp<H: Hal>(
        &mut self,
        hal: &mut H,
        cfg: &IfConfig,
        arp: &ArpRepr,
        now: Micros,
    ) -> Option<u32> {
        let ArpRepr::EthernetIpv4 {
            operation,
            source_hardware_addr,
            source_protocol_addr,
            target_protocol_addr,
            ..
        } = *arp
        else {
            return None;
        };
        let sip = frame::ipu32(source_protocol_addr);
        let tip = frame::ipu32(target_protocol_addr);
        let smac = source_hardware_addr.0;
        if sip == 0 || smac[0] & 1 != 0 || sip == cfg.ip {
            return None; // probes, multicast senders, conflicts: learn nothing
        }
        let mut learned = None;
        let was_waiting = matches!(
            self.find(sip).map(|e| e.state),
            Some(State::Pending { .. }) | Some(State::Failed { .. })
        );
        if let Some(e) = self.find(sip) {
            e.state = State::Resolved {
                mac: smac,
                expires: now + TTL,
            };
            if was_waiting {
                learned = Some(sip);
            }
        } else if tip == cfg.ip && !self.entries.is_full() {
            let _ = self.entries.push(Entry {
                ip: sip,
                state: State::Resolved {
                    mac: smac,
                    expires: now + TTL,
                },
                born: now,
            });
        }
        if operation == ArpOperation::Request && tip == cfg.ip {
            let reply = ArpRepr::EthernetIpv4 {
                operation: ArpOperation::Reply,
                source_hardware_addr: EthernetAddress(cfg.mac),
                source_protocol_addr: frame::ip4(cfg.ip),
                target_hardware_addr: source_hardware_addr,
                target_protocol_addr: source_protocol_addr,
            };
            let mut b = [0u8; frame::MIN_FRAME];
            if let Some(n) = frame::build_arp(&mut b, cfg.mac, smac, &reply) {
                let _ = hal.send_frame(&b[..n]);
            }
        }
        learned
    }

    /// Retries pending requests, fails exhausted ones, ages out old entries.
    pub fn poll<H: Hal>(&mut self, hal: &mut H, cfg: &IfConfig, now: Micros) {
        let mut i = 0;
        while i < self.entries.len() {
            let e = &mut self.entries[i];
            match e.state {
                State::Pending { tries, next } if now >= next => {
                    if tries >= TRIES {
                        log!(warn, "arp: {} unreachable", crate::log::Ip(e.ip));
                        e.state = State::Failed {
                            until: now + NEGATIVE_TTL,
                        };
                    } else {
                        e.state = State::Pending {
                            tries: tries + 1,
                            next: now + RETRY,
                        };
                        let ip = e.ip;
                        send_request(hal, cfg, ip);
                    }
                }
                State::Failed { until } if now >= until => {
                    self.entries.swap_remove(i);
                    continue;
                }
                State::Resolved { expires, .. } if now >= expires => {
                    self.entries.swap_remove(i);
                    continue;
                }
                _ => {}
            }
            i += 1;
        }
    }

    /// The earliest time `poll` has work.
    pub fn next_deadline(&self) -> Option<Micros> {
        self.entries
            .iter()
            .map(|e| match e.state {
                State::Pending { next, .. } => next,
                State::Failed { until } => until,
                State::Resolved { expires, .. } => expires,
            })
            .min()
    }
}

fn send_request<H: Hal>(hal: &mut H, cfg: &IfConfig, ip: u32) {
    let req = ArpRepr::EthernetIpv4 {
        operation: ArpOperation::Request,
        source_hardware_addr: EthernetAddress(cfg.mac),
        source_protocol_addr: frame::ip4(cfg.ip),
        target_hardware_addr: EthernetAddress([0; 6]),
        target_protocol_addr: frame::ip4(ip),
    };
    let mut b = [0u8; frame::MIN_FRAME];
    if let Some(n) = frame::build_arp(&mut b, cfg.mac, BROADCAST, &req) {
        let _ = hal.send_frame(&b[..n]);
    }
}
