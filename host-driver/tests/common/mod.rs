//! A test-only `Bus` that plays the device with `rnic_wire`'s independent
//! parsers and emitters: it parses every mailbox command the driver writes
//! (`Command::parse`) and answers like the firmware would; on a doorbell it
//! reads the new WQEs out of the rings in "host memory" and parses them
//! (`SendWqe::parse`, `RecvWqe::parse`); it writes CQEs and events with
//! `Cqe::emit` / `Event::emit` at the ring positions and phases the ABI
//! prescribes. Every MMIO access is logged by offset.
#![allow(dead_code)]

use core::time::Duration;
use rnic_driver::{Bus, BusError, DmaMem};
use rnic_wire::abi::cqe::{Cqe, CQE_SIZE};
use rnic_wire::abi::csr::*;
use rnic_wire::abi::doorbell::*;
use rnic_wire::abi::mailbox::{Command, CommandResult, Event, MboxStatus, Opcode, QpState};
use rnic_wire::abi::tpt::Stag;
use rnic_wire::abi::wqe::{RecvWqe, SendWqe, WQE_SIZE};
use rnic_wire::abi::ABI_VERSION as WIRE_ABI;
use std::cell::RefCell;
use std::collections::{BTreeMap, HashMap};
use std::rc::Rc;

/// Host memory: allocations by bus address.
#[derive(Default)]
pub struct Mem {
    blocks: BTreeMap<u64, Vec<u8>>,
    next: u64,
    pub freed: usize,
}

impl Mem {
    fn find(&mut self, addr: u64, len: usize) -> Option<&mut [u8]> {
        let (&base, v) = self.blocks.range_mut(..=addr).next_back()?;
        let off = (addr - base) as usize;
        v.get_mut(off..off.checked_add(len)?)
    }
    pub fn read(&mut self, addr: u64, len: usize) -> Vec<u8> {
        self.find(addr, len)
            .unwrap_or_else(|| panic!("device read outside DMA memory: {addr:#x}+{len}"))
            .to_vec()
    }
    pub fn write(&mut self, addr: u64, data: &[u8]) {
        self.find(addr, data.len())
            .unwrap_or_else(|| panic!("device write outside DMA memory: {addr:#x}"))
            .copy_from_slice(data);
    }
}

/// A DMA buffer of the fake host.
pub struct TestDma {
    mem: Rc<RefCell<Mem>>,
    addr: u64,
    len: usize,
}

impl DmaMem for TestDma {
    fn bus_addr(&self) -> u64 {
        self.addr
    }
    fn cpu_addr(&self) -> u64 {
        self.addr
    }
    fn len(&self) -> usize {
        self.len
    }
    fn read(&self, offset: usize, buf: &mut [u8]) -> Result<(), BusError> {
        let end = offset.checked_add(buf.len()).ok_or(BusError::OutOfBounds)?;
        if end > self.len {
            return Err(BusError::OutOfBounds);
        }
        let mut m = self.mem.borrow_mut();
        buf.copy_from_slice(&m.read(self.addr + offset as u64, buf.len()));
        Ok(())
    }
    fn write(&self, offset: usize, data: &[u8]) -> Result<(), BusError> {
        let end = offset
            .checked_add(data.len())
            .ok_or(BusError::OutOfBounds)?;
        if end > self.len {
            return Err(BusError::OutOfBounds);
        }
        self.mem.borrow_mut().write(self.addr + offset as u64, data);
        Ok(())
    }
}

impl Drop for TestDma {
    fn drop(&mut self) {
        let mut m = self.mem.borrow_mut();
        m.blocks.remove(&self.addr);
        m.freed += 1;
    }
}

/// How the fake firmware answers the next mailbox commands.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum MboxMode {
    /// Like the firmware.
    Normal,
    /// Takes the command and never finishes it.
    Hang,
    /// Finishes with this raw status.
    Status(u32),
    /// Finishes with this raw result length.
    Len(u32),
    /// Moves `MBOX_SEQ` by two.
    SeqJump,
    /// Answers with these result words instead of its own.
    Words(usize, [u32; 4]),
}

#[derive(Debug, Clone)]
pub struct DevQp {
    pub pd: u32,
    pub send_cqn: u32,
    pub recv_cqn: u32,
    pub sq_ring: u64,
    pub sq_entries: u32,
    pub rq_ring: u64,
    pub rq_entries: u32,
    pub sq_fetched: u32,
    pub rq_fetched: u32,
    pub state: QpState,
    /// Parsed send WQEs in doorbell order.
    pub send_wqes: Vec<SendWqe>,
    pub recv_wqes: Vec<RecvWqe>,
    /// Send WQEs that came with a push (`QP_SQ_PUSH`), each checked equal
    /// to its ring slot, as indices.
    pub pushed: Vec<u32>,
}

#[derive(Debug, Clone)]
pub struct DevCq {
    pub ring: u64,
    pub entries: u32,
    pub producer: u32,
    pub consumer: u32,
    pub armed: u32,
}

#[derive(Debug, Clone)]
pub struct DevMr {
    pub pd: u32,
    pub npages: u32,
    pub pbl: Vec<u64>,
    pub valid: bool,
    pub access: u8,
    pub page_shift: u8,
    pub va: u64,
    pub length: u64,
}

/// A parsed command the driver sent, with its private data owned.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Logged {
    pub opcode: Opcode,
    pub raw: Vec<u8>,
}

impl Logged {
    pub fn command(&self) -> Command<'_> {
        Command::parse(self.opcode, &self.raw).unwrap()
    }
}

pub struct Dev {
    pub regs: HashMap<u32, u32>,
    pub mem: Rc<RefCell<Mem>>,
    mbox_data: [u8; MBOX_DATA_SIZE as usize],
    pub mode: MboxMode,
    pub cmds: Vec<Logged>,
    pub bad_cmds: usize,
    pub bad_wqes: usize,
    pub qps: HashMap<u32, DevQp>,
    pub cqs: HashMap<u32, DevCq>,
    pub mrs: HashMap<u32, DevMr>,
    pub event_data: HashMap<u32, Vec<u8>>,
    next_cqn: u32,
    next_qpn: u32,
    next_tpt: u32,
    next_id: u32,
    eq_producer: u32,
    pub now: Duration,
    irq: bool,
    /// Every MMIO access: (offset, write, value).
    pub mmio: Vec<(u32, bool, u32)>,
    /// `CTRL_RESET` writes seen.
    pub resets: u32,
    /// Push-window writes since the last send doorbell: (QP, dword, value).
    pub push: Vec<(u32, u32, u32)>,
    /// `CTRL_RESET` never finishes (reads 1 for good).
    pub reset_stuck: bool,
}

/// The fake device as a `Bus` (a shared handle: the test keeps a clone).
#[derive(Clone)]
pub struct FakeBus(pub Rc<RefCell<Dev>>);

pub const CAPS_DEFAULT: u32 = CAP_CRC
    | CAP_MARKERS
    | CAP_IMMEDIATE
    | (6 << CAP_MAX_SGE_SHIFT)
    | (1 << CAP_MAX_READ_SGE_SHIFT);

impl FakeBus {
    pub fn new() -> Self {
        let mut regs = HashMap::new();
        regs.insert(ID, ID_VALUE);
        regs.insert(ABI_VERSION, WIRE_ABI);
        regs.insert(STATUS, STATUS_READY);
        regs.insert(CAPS, CAPS_DEFAULT);
        regs.insert(MAX_QP, 128);
        regs.insert(MAX_CQ, 64);
        regs.insert(MAX_TPT, 1024);
        regs.insert(MAX_PBL, 4096);
        regs.insert(MAX_QUEUE_ENTRIES, 4096);
        let mem = Rc::new(RefCell::new(Mem {
            next: 0x1_0000_0000,
            ..Default::default()
        }));
        FakeBus(Rc::new(RefCell::new(Dev {
            regs,
            mem,
            mbox_data: [0; MBOX_DATA_SIZE as usize],
            mode: MboxMode::Normal,
            cmds: Vec::new(),
            bad_cmds: 0,
            bad_wqes: 0,
            qps: HashMap::new(),
            cqs: HashMap::new(),
            mrs: HashMap::new(),
            event_data: HashMap::new(),
            next_cqn: 0,
            next_qpn: 1,
            next_tpt: 1,
            next_id: 100,
            eq_producer: 0,
            now: Duration::ZERO,
            irq: false,
            mmio: Vec::new(),
            resets: 0,
            reset_stuck: false,
            push: Vec::new(),
        })))
    }

    pub fn dev(&self) -> std::cell::RefMut<'_, Dev> {
        self.0.borrow_mut()
    }

    pub fn set_reg(&self, off: u32, v: u32) {
        self.dev().regs.insert(off, v);
    }

    /// Index into the MMIO log, to look at what happened after it.
    pub fn mark(&self) -> usize {
        self.0.borrow().mmio.len()
    }

    pub fn mmio_since(&self, mark: usize) -> Vec<(u32, bool, u32)> {
        self.0.borrow().mmio[mark..].to_vec()
    }

    pub fn cmds_since(&self, n: usize) -> Vec<Logged> {
        self.0.borrow().cmds[n..].to_vec()
    }

    pub fn ncmds(&self) -> usize {
        self.0.borrow().cmds.len()
    }

    /// Writes a CQE at the CQ's producer position with the producer's phase
    /// (`Cqe::emit`); returns the slot.
    pub fn push_cqe(&self, cqn: u32, mut c: Cqe) -> u32 {
        let mut d = self.dev();
        let cq = d.cqs.get_mut(&cqn).expect("no such CQ");
        assert!(
            cq.producer.wrapping_sub(cq.consumer) < cq.entries,
            "the device never overwrites an unconsumed CQE"
        );
        let slot = cq.producer % cq.entries;
        c.phase = (cq.producer / cq.entries).is_multiple_of(2);
        let addr = cq.ring + slot as u64 * CQE_SIZE as u64;
        cq.producer += 1;
        let mut b = [0u8; CQE_SIZE];
        c.emit(&mut b).unwrap();
        d.mem.borrow_mut().write(addr, &b);
        slot
    }

    /// Writes raw CQE octets at the producer position; `phase_ok` sets the
    /// owner bit to the producer's phase, else to the other one.
    pub fn push_raw_cqe(&self, cqn: u32, mut b: [u8; CQE_SIZE], phase_ok: bool) {
        let mut d = self.dev();
        let cq = d.cqs.get_mut(&cqn).expect("no such CQ");
        let slot = cq.producer % cq.entries;
        let phase = (cq.producer / cq.entries).is_multiple_of(2);
        b[CQE_SIZE - 1] = (b[CQE_SIZE - 1] & !1) | (phase == phase_ok) as u8;
        let addr = cq.ring + slot as u64 * CQE_SIZE as u64;
        if phase_ok {
            cq.producer += 1;
        }
        d.mem.borrow_mut().write(addr, &b);
    }

    /// Writes an event at the EQ producer position (`Event::emit`) and raises
    /// the interrupt.
    pub fn push_event(&self, mut ev: Event) {
        let mut b = [0u8; Event::SIZE];
        ev.phase = true;
        ev.emit(&mut b).unwrap();
        self.push_raw_event(b);
    }

    pub fn push_raw_event(&self, mut b: [u8; Event::SIZE]) {
        let mut d = self.dev();
        let base = d.regs[&EQ_BASE_LO] as u64 | (d.regs[&EQ_BASE_HI] as u64) << 32;
        let n = d.regs[&EQ_ENTRIES];
        assert!(n > 0, "event queue not set up");
        let p = d.eq_producer;
        b[Event::SIZE - 1] = (p / n).is_multiple_of(2) as u8;
        d.eq_producer += 1;
        d.mem
            .borrow_mut()
            .write(base + (p % n) as u64 * Event::SIZE as u64, &b);
        *d.regs.entry(INT_STATUS).or_default() |= INT_EVENT;
        d.irq = true;
    }

    /// The driver's mailbox finishes a hung command now.
    pub fn finish_hung(&self) {
        let mut d = self.dev();
        *d.regs.get_mut(&MBOX_CTRL).unwrap() &= !MBOX_BUSY;
        *d.regs.entry(MBOX_SEQ).or_default() += 1;
        d.regs.insert(MBOX_STATUS, 0);
        d.regs.insert(MBOX_LEN, 0);
    }
}

impl Dev {
    fn reg(&self, off: u32) -> u32 {
        self.regs.get(&off).copied().unwrap_or(0)
    }

    fn mmio_write(&mut self, off: u32, v: u32) {
        match off {
            INT_STATUS => {
                let s = self.reg(INT_STATUS) & !v;
                self.regs.insert(INT_STATUS, s);
            }
            MBOX_CTRL => self.mailbox(v),
            // CTRL_RESET: done at once (CTRL_ENABLE 0 after it), unless the
            // test made the reset hang
            CTRL if v & CTRL_RESET != 0 => {
                self.resets += 1;
                let stuck = if self.reset_stuck { CTRL_RESET } else { 0 };
                self.regs.insert(CTRL, stuck);
            }
            o if (MBOX_DATA..MBOX_DATA + MBOX_DATA_SIZE).contains(&o) => {
                let i = (o - MBOX_DATA) as usize;
                self.mbox_data[i..i + 4].copy_from_slice(&v.to_le_bytes());
            }
            o if (QP_DOORBELL_BASE..CQ_DOORBELL_BASE).contains(&o) => {
                let qpn = (o - QP_DOORBELL_BASE) / DOORBELL_PAGE_SIZE;
                self.qp_doorbell(qpn, o % DOORBELL_PAGE_SIZE, v);
            }
            o if (CQ_DOORBELL_BASE..BAR0_SIZE).contains(&o) => {
                let cqn = (o - CQ_DOORBELL_BASE) / DOORBELL_PAGE_SIZE;
                let cq = self.cqs.get_mut(&cqn).expect("doorbell of an unknown CQ");
                match o % DOORBELL_PAGE_SIZE {
                    CQ_CONSUMER => cq.consumer = v,
                    CQ_ARM => cq.armed = CqArm::from_u32(v).expect("bad arm value") as u32,
                    x => panic!("write to CQ doorbell offset {x:#x}"),
                }
            }
            _ => {
                self.regs.insert(off, v);
            }
        }
    }

    fn qp_doorbell(&mut self, qpn: u32, reg: u32, prod: u32) {
        let mem = self.mem.clone();
        // A doorbell of a QP the device has no context for does nothing
        // (`create_qp` rings SQ producer 0 for whatever QP number the
        // mailbox answered, garbage included).
        if (QP_SQ_PUSH..QP_SQ_PUSH + QP_SQ_PUSH_SIZE).contains(&reg) {
            // The driver pushes only to a device that offers it.
            assert!(
                self.reg(CAPS) & CAP_WQE_PUSH != 0,
                "a push to a device without CAP_WQE_PUSH"
            );
            self.push.push((qpn, (reg - QP_SQ_PUSH) / 4, prod));
            return;
        }
        let push = std::mem::take(&mut self.push);
        let Some(qp) = self.qps.get_mut(&qpn) else {
            return;
        };
        match reg {
            QP_SQ_PRODUCER => {
                if !push.is_empty() {
                    // A push: dwords 0, 1, ... of this QP, then this
                    // doorbell; the rest of the WQE reads as zero, and the
                    // whole equals the ring's last WQE posted.
                    let mut img = [0u8; WQE_SIZE];
                    for (k, &(q, dw, v)) in push.iter().enumerate() {
                        assert_eq!((q, dw), (qpn, k as u32), "push out of order: {push:?}");
                        img[4 * k..4 * k + 4].copy_from_slice(&v.to_le_bytes());
                    }
                    let idx = prod.wrapping_sub(1);
                    let slot = idx % qp.sq_entries;
                    let ring = mem
                        .borrow_mut()
                        .read(qp.sq_ring + slot as u64 * WQE_SIZE as u64, WQE_SIZE);
                    assert_eq!(&img[..], &ring[..], "the push differs from the ring");
                    qp.pushed.push(idx);
                }
                while qp.sq_fetched != prod {
                    let slot = qp.sq_fetched % qp.sq_entries;
                    let b = mem
                        .borrow_mut()
                        .read(qp.sq_ring + slot as u64 * WQE_SIZE as u64, WQE_SIZE);
                    match SendWqe::parse(&b) {
                        Ok(w) => qp.send_wqes.push(w),
                        Err(_) => self.bad_wqes += 1,
                    }
                    qp.sq_fetched = qp.sq_fetched.wrapping_add(1);
                }
            }
            QP_RQ_PRODUCER => {
                while qp.rq_fetched != prod {
                    let slot = qp.rq_fetched % qp.rq_entries;
                    let b = mem
                        .borrow_mut()
                        .read(qp.rq_ring + slot as u64 * WQE_SIZE as u64, WQE_SIZE);
                    match RecvWqe::parse(&b) {
                        Ok(w) => qp.recv_wqes.push(w),
                        Err(_) => self.bad_wqes += 1,
                    }
                    qp.rq_fetched = qp.rq_fetched.wrapping_add(1);
                }
            }
            x => panic!("write to QP doorbell offset {x:#x}"),
        }
    }

    fn mailbox(&mut self, ctrl: u32) {
        let len = (self.reg(MBOX_LEN) as usize).min(MBOX_DATA_SIZE as usize);
        let data = self.mbox_data[..len].to_vec();
        self.regs.insert(MBOX_CTRL, ctrl | MBOX_BUSY);
        if self.mode == MboxMode::Hang {
            return;
        }
        let (status, words, extra) = match Opcode::from_u16(ctrl as u16)
            .and_then(|op| Command::parse(op, &data).map(|c| (op, c)))
        {
            Ok((op, cmd)) => {
                self.cmds.push(Logged {
                    opcode: op,
                    raw: data.clone(),
                });
                self.execute(&cmd)
            }
            Err(_) => {
                self.bad_cmds += 1;
                (MboxStatus::BadParam as u32, Vec::new(), Vec::new())
            }
        };
        let mut out = vec![0u8; 16];
        let mut n = CommandResult {
            words: [
                words.first().copied().unwrap_or(0),
                words.get(1).copied().unwrap_or(0),
                0,
                0,
            ],
        }
        .emit(words.len(), &mut out)
        .unwrap();
        out.truncate(n);
        if !extra.is_empty() {
            out = extra;
            n = out.len();
        }
        let mut status = status;
        let mut seq_step = 1;
        match self.mode {
            MboxMode::Status(s) => status = s,
            MboxMode::Len(l) => n = l as usize,
            MboxMode::SeqJump => seq_step = 2,
            MboxMode::Words(k, w) => {
                out = vec![0; 16];
                n = CommandResult { words: w }.emit(k, &mut out).unwrap();
            }
            _ => {}
        }
        out.resize(out.len().max(MBOX_DATA_SIZE as usize), 0);
        for k in 0..(MBOX_DATA_SIZE as usize / 4) {
            let w = u32::from_le_bytes(out[4 * k..4 * k + 4].try_into().unwrap());
            self.mbox_data[4 * k..4 * k + 4].copy_from_slice(&w.to_le_bytes());
        }
        self.regs.insert(MBOX_STATUS, status);
        self.regs.insert(MBOX_LEN, n as u32);
        let seq = self.reg(MBOX_SEQ).wrapping_add(seq_step);
        self.regs.insert(MBOX_SEQ, seq);
        self.regs.insert(MBOX_CTRL, ctrl & !MBOX_BUSY);
        *self.regs.entry(INT_STATUS).or_default() |= INT_MBOX_DONE;
        self.irq = true;
    }

    /// The fake firmware: (status, result words, or raw result octets).
    fn execute(&mut self, cmd: &Command) -> (u32, Vec<u32>, Vec<u8>) {
        const OK: u32 = MboxStatus::Ok as u32;
        let nf = (MboxStatus::NotFound as u32, vec![], vec![]);
        match *cmd {
            Command::Nop | Command::FilterClear | Command::FilterDefault { .. } => {
                (OK, vec![], vec![])
            }
            Command::FilterSet { .. } | Command::Unlisten { .. } => (OK, vec![], vec![]),
            Command::CreateCq { ring, entries } => {
                assert!(entries.is_power_of_two() && ring & 63 == 0);
                let cqn = self.next_cqn;
                self.next_cqn += 1;
                self.cqs.insert(
                    cqn,
                    DevCq {
                        ring,
                        entries,
                        producer: 0,
                        consumer: 0,
                        armed: 0,
                    },
                );
                (OK, vec![cqn], vec![])
            }
            Command::DestroyCq { cqn } => {
                if self
                    .qps
                    .values()
                    .any(|q| q.send_cqn == cqn || q.recv_cqn == cqn)
                {
                    return (MboxStatus::Busy as u32, vec![], vec![]);
                }
                match self.cqs.remove(&cqn) {
                    Some(_) => (OK, vec![], vec![]),
                    None => nf,
                }
            }
            Command::AllocStag { pd, npages } => {
                let i = self.next_tpt;
                self.next_tpt += 1;
                let stag = Stag::new(i, 0x5A).unwrap();
                self.mrs.insert(
                    stag.0,
                    DevMr {
                        pd,
                        npages,
                        pbl: vec![0; npages as usize],
                        valid: false,
                        access: 0,
                        page_shift: 0,
                        va: 0,
                        length: 0,
                    },
                );
                (OK, vec![stag.0, 16 * i], vec![])
            }
            Command::WritePbl {
                stag,
                offset,
                addrs,
            } => {
                let Some(mr) = self.mrs.get_mut(&stag) else {
                    return nf;
                };
                for (k, a) in addrs.chunks_exact(8).enumerate() {
                    let slot = mr
                        .pbl
                        .get_mut(offset as usize + k)
                        .expect("page list written past its end");
                    *slot = u64::from_le_bytes(a.try_into().unwrap());
                }
                (OK, vec![], vec![])
            }
            Command::RegMr {
                stag,
                pd,
                access,
                page_shift,
                va,
                length,
            } => {
                let Some(mr) = self.mrs.get_mut(&stag) else {
                    return nf;
                };
                assert_eq!(mr.pd, pd);
                mr.valid = true;
                mr.access = access;
                mr.page_shift = page_shift;
                mr.va = va;
                mr.length = length;
                (OK, vec![], vec![])
            }
            Command::DeregMr { stag } => match self.mrs.remove(&stag) {
                Some(_) => (OK, vec![], vec![]),
                None => nf,
            },
            Command::CreateQp {
                pd,
                send_cqn,
                recv_cqn,
                sq_ring,
                sq_entries,
                rq_ring,
                rq_entries,
            } => {
                if !self.cqs.contains_key(&send_cqn) || !self.cqs.contains_key(&recv_cqn) {
                    return nf;
                }
                let qpn = self.next_qpn;
                self.next_qpn += 1;
                self.qps.insert(
                    qpn,
                    DevQp {
                        pd,
                        send_cqn,
                        recv_cqn,
                        sq_ring,
                        sq_entries,
                        rq_ring,
                        rq_entries,
                        sq_fetched: 0,
                        rq_fetched: 0,
                        state: QpState::Idle,
                        send_wqes: vec![],
                        pushed: vec![],
                        recv_wqes: vec![],
                    },
                );
                (OK, vec![qpn], vec![])
            }
            Command::ModifyQp { qpn, state } => match self.qps.get_mut(&qpn) {
                Some(q) => {
                    q.state = state;
                    (OK, vec![], vec![])
                }
                None => nf,
            },
            Command::QueryQp { qpn } => match self.qps.get(&qpn) {
                Some(q) => (OK, vec![q.state as u32], vec![]),
                None => nf,
            },
            Command::DestroyQp { qpn } => match self.qps.remove(&qpn) {
                Some(_) => (OK, vec![], vec![]),
                None => nf,
            },
            Command::Listen { .. } | Command::Connect { .. } => {
                self.next_id += 1;
                (OK, vec![self.next_id], vec![])
            }
            Command::Accept { .. } | Command::Reject { .. } | Command::Disconnect { .. } => {
                (OK, vec![], vec![])
            }
            Command::GetEventData { conn_id } => match self.event_data.get(&conn_id) {
                Some(d) => (OK, vec![], d.clone()),
                None => nf,
            },
            Command::FilterStats { .. } => (OK, vec![5, 1], vec![]),
            Command::RouteUpdate { .. } => (OK, vec![3], vec![]),
            Command::SetRetx { .. } => (OK, vec![], vec![]),
        }
    }
}

impl Bus for FakeBus {
    type Dma = TestDma;

    fn read32(&self, offset: u32) -> u32 {
        let mut d = self.dev();
        let v = if (MBOX_DATA..MBOX_DATA + MBOX_DATA_SIZE).contains(&offset) {
            let i = (offset - MBOX_DATA) as usize;
            u32::from_le_bytes(d.mbox_data[i..i + 4].try_into().unwrap())
        } else {
            d.reg(offset)
        };
        d.mmio.push((offset, false, v));
        v
    }

    fn write32(&self, offset: u32, value: u32) {
        let mut d = self.dev();
        d.mmio.push((offset, true, value));
        d.mmio_write(offset, value);
    }

    fn alloc_dma(&self, len: usize, align: usize) -> Result<TestDma, BusError> {
        let d = self.dev();
        let mut m = d.mem.borrow_mut();
        let addr = m.next.next_multiple_of(align as u64);
        m.next = addr + len as u64 + 4096; // a guard gap between buffers
        m.blocks.insert(addr, vec![0; len]);
        Ok(TestDma {
            mem: d.mem.clone(),
            addr,
            len,
        })
    }

    fn wait_interrupt(&self, timeout: Duration) -> bool {
        let mut d = self.dev();
        d.now += timeout.min(Duration::from_micros(10));
        core::mem::take(&mut d.irq)
    }

    fn now(&self) -> Duration {
        self.0.borrow().now
    }
}

/// A successful-shape CQE with no flags, immediate or Terminate cause; the
/// fake device fills in the phase when it writes it.
pub fn cqe(
    wr_id: u64,
    qpn: u32,
    opcode: rnic_wire::abi::cqe::WcOpcode,
    status: rnic_wire::abi::cqe::WcStatus,
    byte_len: u32,
) -> Cqe {
    Cqe {
        wr_id,
        byte_len,
        qpn,
        opcode,
        status,
        flags: 0,
        imm_or_inv: 0,
        term_cause: 0,
        phase: false,
    }
}
