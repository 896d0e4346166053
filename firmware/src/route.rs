//! Route updates: the host says next hop `ip` is now at `mac` (a neighbour
//! changed its MAC, or traffic moves to another gateway with the same IP).
//!
//! Every live connection whose next hop is `ip` gets the new MAC, in the
//! firmware's state and in its device context. The context is rewritten
//! with one whole-entry table write, which the device applies atomically;
//! for an entry that is in RDMA mode before and after the write, the device
//! keeps its own current values of the fields it updates (`rcv_nxt`,
//! `snd_nxt`, `snd_una`, `snd_wnd`), so the read-modify-write cannot undo
//! the fast path's progress. Half-open backlog entries and the ARP cache
//! are updated too.

use crate::fw::Firmware;
use crate::hal::{Hal, HalExt};

impl<
        H: Hal,
        const C: usize,
        const Q: usize,
        const L: usize,
        const P: usize,
        const A: usize,
        const R: usize,
        const NCQ: usize,
        const NTPT: usize,
        const E: usize,
        const EV: usize,
    > Firmware<H, C, Q, L, P, A, R, NCQ, NTPT, E, EV>
{
    /// Applies a route update; returns how many device contexts were rewritten.
    pub fn route_update(&mut self, ip: u32, mac: [u8; 6]) -> usize {
        let now = self.hal.now_us();
        self.arp.set(ip, mac, now);
        let mut n = 0;
        for i in 0..C {
            let Some(c) = self.conns[i].as_mut() else {
                continue;
            };
            if c.next_hop != ip {
                continue;
            }
            c.peer_mac = mac;
            if c.ctx {
                if let Ok(mut ctx) = self.hal.read_conn(i as u32) {
                    ctx.peer_mac = mac;
                    if self.hal.write_conn(i as u32, &ctx).is_ok() {
                        n += 1;
                    }
                }
            }
        }
        let ifc = self.ifc;
        self.backlog.for_each(|p| {
            if ifc.next_hop(p.tcb.tuple.peer_ip) == Some(ip) {
                p.peer_mac = mac;
            }
        });
        n
    }
}
