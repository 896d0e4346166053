//! The host command mailbox, firmware side: every
//! [`rnic_wire::abi::mailbox::Command`] is parsed, checked and dispatched to
//! the part that owns it; the result goes back as `MboxStatus` plus result
//! words (see [`rnic_wire::abi::mailbox::CommandResult`]). Malformed or
//! out-of-range input gets `BadOpcode`/`BadParam`, never a panic.
//!
//! Result words beyond the ABI's list: `RouteUpdate` → number of contexts
//! rewritten; `Connect` → the connection id (also in the `status` field of
//! the `Established`/`Rejected`/`ConnectionLost` events of an active
//! connection, for `GetEventData`).

use crate::fw::Firmware;
use crate::hal::Hal;
use crate::mpa::{self, Offer};
use crate::qp::{Qp, QpEvent};
use crate::retx::RetxConfig;
use crate::Micros;
use rnic_wire::abi::context::RtrKind;
use rnic_wire::abi::csr::MBOX_DATA_SIZE;
use rnic_wire::abi::mailbox::{Command, MboxStatus, Opcode, QpState, PRIVATE_DATA_MAX};

/// Largest result (private data of `GetEventData`).
pub const RESULT_MAX: usize = PRIVATE_DATA_MAX;

type Res = Result<usize, MboxStatus>;

fn words(out: &mut [u8], w: &[u32]) -> usize {
    for (k, v) in w.iter().enumerate() {
        out[4 * k..4 * k + 4].copy_from_slice(&v.to_le_bytes());
    }
    4 * w.len()
}

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
    /// Serves the waiting host command, if any. Not inlined into
    /// [`Firmware::poll`]: its 1 KiB parameter buffer is prepared only when
    /// a command may wait ([`crate::hal::Hal::mailbox_waiting`]).
    #[inline(never)]
    pub fn poll_mailbox(&mut self) {
        let mut buf = [0u8; MBOX_DATA_SIZE as usize];
        let Some((op, len)) = self.hal.mailbox_poll(&mut buf) else {
            return;
        };
        let mut out = [0u8; RESULT_MAX];
        let (status, n) = self.execute(op, &buf[..len.min(buf.len())], &mut out);
        self.hal.mailbox_done(status, &out[..n]);
    }

    /// Executes one command; returns its status and the result length in `out`.
    pub fn execute(
        &mut self,
        opcode: u16,
        data: &[u8],
        out: &mut [u8; RESULT_MAX],
    ) -> (MboxStatus, usize) {
        let Ok(op) = Opcode::from_u16(opcode) else {
            return (MboxStatus::BadOpcode, 0);
        };
        let Ok(cmd) = Command::parse(op, data) else {
            return (MboxStatus::BadParam, 0);
        };
        match self.dispatch(cmd, out) {
            Ok(n) => (MboxStatus::Ok, n),
            Err(s) => (s, 0),
        }
    }

    fn dispatch(&mut self, cmd: Command, out: &mut [u8; RESULT_MAX]) -> Res {
        use MboxStatus as S;
        let now = self.hal.now_us();
        match cmd {
            Command::Nop => Ok(0),
            Command::CreateCq { ring, entries } => {
                let cqn = self.res.create_cq(&mut self.hal, ring, entries)?;
                Ok(words(out, &[cqn]))
            }
            Command::DestroyCq { cqn } => {
                if !self.res.cq_exists(cqn) {
                    return Err(S::NotFound);
                }
                if self
                    .qps
                    .iter()
                    .any(|(_, q)| q.send_cqn == cqn || q.recv_cqn == cqn)
                {
                    return Err(S::Busy);
                }
                self.res.destroy_cq(&mut self.hal, cqn)?;
                Ok(0)
            }
            Command::AllocStag { pd, npages } => {
                let (stag, base) = self.res.alloc_stag(pd, npages)?;
                Ok(words(out, &[stag.0, base]))
            }
            Command::WritePbl {
                stag,
                offset,
                addrs,
            } => {
                self.res.write_pbl(&mut self.hal, stag, offset, addrs)?;
                Ok(0)
            }
            Command::RegMr {
                stag,
                pd,
                access,
                page_shift,
                va,
                length,
            } => {
                self.res
                    .reg_mr(&mut self.hal, stag, pd, access, page_shift, va, length)?;
                Ok(0)
            }
            Command::DeregMr { stag } => {
                self.res.dereg_mr(&mut self.hal, stag)?;
                Ok(0)
            }
            Command::CreateQp {
                pd,
                send_cqn,
                recv_cqn,
                sq_ring,
                sq_entries,
                rq_ring,
                rq_entries,
            } => {
                if !self.res.cq_exists(send_cqn) || !self.res.cq_exists(recv_cqn) {
                    return Err(S::NotFound);
                }
                let ok = |e: u32| e.is_power_of_two();
                if !ok(sq_entries)
                    || !ok(rq_entries)
                    || sq_ring == 0
                    || rq_ring == 0
                    || sq_ring & 63 != 0
                    || rq_ring & 63 != 0
                {
                    return Err(S::BadParam);
                }
                let qp = Qp {
                    state: QpState::Idle,
                    pd,
                    send_cqn,
                    recv_cqn,
                    sq_ring,
                    sq_log2: sq_entries.trailing_zeros() as u8,
                    rq_ring,
                    rq_log2: rq_entries.trailing_zeros() as u8,
                    conn: None,
                    ird: 0,
                    ord: 0,
                    rtr: RtrKind::None,
                    flags: 0,
                };
                let qpn = self.qps.create(&mut self.hal, qp).ok_or(S::NoResources)?;
                Ok(words(out, &[qpn]))
            }
            Command::ModifyQp { qpn, state } => {
                let q = self.qps.get(qpn).ok_or(S::NotFound)?;
                let conn = q.conn.map(|c| c as usize);
                match (state, conn) {
                    (QpState::Error, Some(i)) => self.disconnect(i, true, now),
                    (QpState::Closing, Some(i)) if q.state == QpState::Rts => {
                        self.disconnect(i, false, now)
                    }
                    (QpState::Terminate, Some(i)) if q.state == QpState::Rts => {
                        self.host_terminate(i, now)
                    }
                    (QpState::Idle, Some(_)) => return Err(S::BadState),
                    _ => {
                        self.qps
                            .apply(&mut self.hal, qpn, QpEvent::Modify(state))
                            .ok_or(S::BadState)?;
                    }
                }
                Ok(0)
            }
            Command::QueryQp { qpn } => {
                let q = self.qps.get(qpn).ok_or(S::NotFound)?;
                Ok(words(out, &[q.state as u32]))
            }
            Command::DestroyQp { qpn } => {
                let q = self.qps.get(qpn).ok_or(S::NotFound)?;
                if let Some(i) = q.conn {
                    self.disconnect(i as usize, true, now);
                }
                self.qps.destroy(&mut self.hal, qpn);
                Ok(0)
            }
            Command::Listen { port, backlog } => {
                if port == 0 {
                    return Err(S::BadParam);
                }
                if self.listeners.iter().any(|l| l.port == port) {
                    return Err(S::Busy);
                }
                let id = self.next_listen_id();
                self.listeners
                    .push(crate::fw::Listener { id, port, backlog })
                    .map_err(|_| S::NoResources)?;
                Ok(words(out, &[id]))
            }
            Command::Unlisten { listen_id } => {
                let k = self
                    .listeners
                    .iter()
                    .position(|l| l.id == listen_id)
                    .ok_or(S::NotFound)?;
                self.listeners.swap_remove(k);
                self.backlog.drop_listener(listen_id);
                Ok(0)
            }
            Command::Connect {
                qpn,
                peer_ip,
                peer_port,
                local_port,
                ird,
                ord,
                mpa,
                private_data,
            } => {
                let offer = Offer {
                    revision: mpa.revision,
                    crc: mpa.crc,
                    markers: mpa.markers,
                    ird,
                    ord,
                    p2p: self.config.p2p,
                    rtr: self.config.rtr_types,
                };
                let i = self.connect(
                    qpn,
                    peer_ip,
                    peer_port,
                    local_port,
                    offer,
                    private_data,
                    now,
                )?;
                Ok(words(out, &[self.conn_id(i)]))
            }
            Command::Accept {
                conn_id,
                qpn,
                ird,
                ord,
                private_data,
            } => {
                self.accept(conn_id, qpn, ird, ord, private_data, now)?;
                Ok(0)
            }
            Command::Reject {
                conn_id,
                private_data,
            } => {
                self.reject(conn_id, private_data, now)?;
                Ok(0)
            }
            Command::Disconnect { qpn, abortive } => {
                let q = self.qps.get(qpn).ok_or(S::NotFound)?;
                let i = q.conn.ok_or(S::BadState)?;
                self.disconnect(i as usize, abortive, now);
                Ok(0)
            }
            Command::GetEventData { conn_id } => {
                let i = self.slot_of(conn_id).ok_or(S::NotFound)?;
                let pd = self.conns[i]
                    .as_ref()
                    .map(|c| c.mpa_rx.private_data())
                    .unwrap_or(&[]);
                let n = pd.len().min(RESULT_MAX);
                out[..n].copy_from_slice(&pd[..n]);
                Ok(n)
            }
            Command::FilterSet { index, rule } => {
                self.filter.set(index, rule)?;
                Ok(0)
            }
            Command::FilterClear => {
                self.filter.clear();
                Ok(0)
            }
            Command::FilterDefault { action } => {
                self.filter.set_default(action);
                Ok(0)
            }
            Command::FilterStats { index } => {
                let h = self.filter.stats(index)?;
                Ok(words(out, &[h as u32, (h >> 32) as u32]))
            }
            Command::RouteUpdate { ip, mac } => {
                if ip == 0 || mac[0] & 1 != 0 {
                    return Err(S::BadParam);
                }
                let n = self.route_update(ip, mac);
                Ok(words(out, &[n as u32]))
            }
            Command::SetRetx {
                rto_init_us,
                rto_min_us,
                rto_max_us,
                max_retries,
            } => {
                let ordered =
                    0 < rto_min_us && rto_min_us <= rto_init_us && rto_init_us <= rto_max_us;
                if !ordered || max_retries == 0 {
                    return Err(S::BadParam);
                }
                // Connections entering RDMA mode from now on start from
                // `rto`; every RDMA-mode timer takes the bounds and the
                // retry limit at its next sample (`Firmware::retx_poll`).
                self.config.rdma_retx = RetxConfig {
                    rto: rto_init_us as Micros,
                    rto_min: rto_min_us as Micros,
                    rto_max: rto_max_us as Micros,
                    max_retries,
                };
                Ok(0)
            }
        }
    }

    fn accept(
        &mut self,
        conn_id: u32,
        qpn: u32,
        ird: u16,
        ord: u16,
        private_data: &[u8],
        now: u64,
    ) -> Result<(), MboxStatus> {
        use MboxStatus as S;
        let i = self.slot_of(conn_id).ok_or(S::NotFound)?;
        let q = self.qps.get(qpn).ok_or(S::NotFound)?;
        if q.state != QpState::Idle || q.conn.is_some() {
            return Err(S::BadState);
        }
        let mut ours = Offer {
            revision: self.config.mpa_revision,
            crc: self.config.crc,
            markers: self.config.markers,
            ird,
            ord,
            p2p: self.config.p2p,
            rtr: self.config.rtr_types,
        };
        let c = self.conns[i].as_mut().ok_or(S::NotFound)?;
        if !matches!(c.phase, crate::fw::Phase::MpaAwaitAccept(_)) {
            return Err(S::BadState);
        }
        let req = mpa::parse(c.mpa_rx.frame()).map_err(|_| S::BadState)?;
        let enhanced = req.revision.enhanced().is_some();
        if private_data.len() + if enhanced { mpa::IRD_ORD_LEN } else { 0 } > PRIVATE_DATA_MAX {
            return Err(S::BadParam);
        }
        let a = mpa::respond(&req, &ours).map_err(|_| S::BadState)?;
        ours.markers = a.markers_rx;
        let mut b = [0u8; mpa::MAX_FRAME];
        let n = mpa::build_reply(&a, enhanced, false, &ours, private_data, &mut b)
            .map_err(|_| S::BadParam)?;
        crate::fw::log_agreement(i, &a);
        c.agreement = Some(a);
        c.offer = ours;
        c.qpn = Some(qpn);
        c.phase = crate::fw::Phase::MpaDone;
        let ok = {
            let ifc = self.ifc;
            let c = self.conns[i].as_mut().ok_or(S::NotFound)?;
            let mut tx = crate::fw::Tx {
                src_mac: ifc.mac,
                dst_mac: c.peer_mac,
                src_ip: ifc.ip,
                dst_ip: c.tcb.tuple.peer_ip,
                hal: &mut self.hal,
            };
            c.tcb.write(&b[..n], now, &mut tx)
        };
        if !ok {
            if let Some(c) = self.conns[i].as_mut() {
                c.qpn = None;
                c.agreement = None;
            }
            return Err(S::BadState);
        }
        if let Some(q) = self.qps.get_mut(qpn) {
            q.conn = Some(i as u32);
        }
        Ok(())
    }

    fn reject(&mut self, conn_id: u32, private_data: &[u8], now: u64) -> Result<(), MboxStatus> {
        use MboxStatus as S;
        let i = self.slot_of(conn_id).ok_or(S::NotFound)?;
        let ours = Offer {
            revision: self.config.mpa_revision,
            crc: self.config.crc,
            markers: self.config.markers,
            ird: 0,
            ord: 0,
            p2p: false,
            rtr: rnic_wire::mpa::RtrTypes::NONE,
        };
        let ifc = self.ifc;
        let c = self.conns[i].as_mut().ok_or(S::NotFound)?;
        if !matches!(c.phase, crate::fw::Phase::MpaAwaitAccept(_)) {
            return Err(S::BadState);
        }
        let req = mpa::parse(c.mpa_rx.frame()).map_err(|_| S::BadState)?;
        let enhanced = req.revision.enhanced().is_some();
        if private_data.len() + if enhanced { mpa::IRD_ORD_LEN } else { 0 } > PRIVATE_DATA_MAX {
            return Err(S::BadParam);
        }
        let a = mpa::respond(&req, &ours).map_err(|_| S::BadState)?;
        let mut b = [0u8; mpa::MAX_FRAME];
        let n = mpa::build_reply(&a, enhanced, true, &ours, private_data, &mut b)
            .map_err(|_| S::BadParam)?;
        let mut tx = crate::fw::Tx {
            src_mac: ifc.mac,
            dst_mac: c.peer_mac,
            src_ip: ifc.ip,
            dst_ip: c.tcb.tuple.peer_ip,
            hal: &mut self.hal,
        };
        c.tcb.write(&b[..n], now, &mut tx);
        c.tcb.close(now, &mut tx);
        c.rejected = true;
        c.phase = crate::fw::Phase::Closing;
        Ok(())
    }
}
