//! `verilator-board`: the Verilated board tops `rnic_versa5g` and
//! `rnic_ecpix5` (the latter in [`ecpix5`]). The Versa-5G top `rnic_versa5g`
//! (`hw/generated/rnic_versa5g.v`: PLL, reset, both RGMII ports with their
//! MACs and CDC FIFOs, the UDP host bridge on port 1, MDIO, LEDs and the
//! whole `rnic_core`), driven at its pins from Rust.
//!
//! * [`Board`]: the raw model. Every input, the clocks included, is set by
//!   the caller, followed by [`Board::eval`]; internal signals that no pin
//!   carries (each port's receive stream after its CDC FIFO, counters) are
//!   readable through [`Sig`] (made public by `csrc/public.vlt`).
//! * [`Rig`]: the board with its clocks and two RGMII PHY models
//!   ([`Phy`]), run by an event loop in femtoseconds: `clk100`, driven at
//!   125 MHz (the Verilator model of the PLL passes it through as the
//!   125 MHz transmit clock and divides it by two for the 62.5 MHz core
//!   clock, so both are derived from one driven clock, as on the board where
//!   they come from one VCO) and each PHY's receive clock with its own
//!   period and phase (a real PHY's `rxc` is not locked to the FPGA's
//!   clock).
//!
//! The ECP5 primitives (`IDDRX1F`, `ODDRX1F`, `EHXPLLL`) are simulated by
//! the behavioural models the board generator appends to the Verilog under
//! `ifdef VERILATOR` (`hw/src/board/ecp5.rs`, `SIM_MODELS`).
//!
//! This crate is separate from `verilator-sys` so that only the tests that
//! use the board pay for its model build (the board Verilog contains the
//! whole core again).

use std::collections::VecDeque;

pub mod ecpix5;
mod model;
pub use ecpix5::{EIn, ESig, Ecpix5, Ecpix5Rig};

// The Verilator runtime (libvruntime) that the board model links against is
// built and linked by verilator-sys.
use verilator_sys as _;

verilated_top! {
    /// One Verilated `rnic_versa5g`. Owns its own Verilator context, so
    /// several can live in one process; `Send`, not `Sync`.
    Board(RawBoard, In, Sig): vboard_new, vboard_free, vboard_eval, vboard_set, vboard_get,
        vboard_vcd_open, vboard_vcd_dump
}

extern "C" {
    fn vboard_vcd_flush(m: *mut RawBoard);
    fn vboard_vcd_close(m: *mut RawBoard);
    fn vboard_fw_force(m: *mut RawBoard, on: i32, valid: u32, write: u32, addr: u32, wdata: u32);
}

/// Inputs of the board top (numbers as in `csrc/board_shim.cpp`).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
#[repr(u32)]
pub enum In {
    Clk100 = 0,
    RstN,
    Sw,
    Rgmii0Rxc,
    Rgmii0RxCtl,
    Rgmii0Rxd,
    Rgmii1Rxc,
    Rgmii1RxCtl,
    Rgmii1Rxd,
}

/// Outputs of the board top and internal signals (numbers as in
/// `csrc/board_shim.cpp`).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
#[repr(u32)]
pub enum Sig {
    Led = 32,
    Rgmii0Txc,
    Rgmii0TxCtl,
    Rgmii0Txd,
    Rgmii1Txc,
    Rgmii1TxCtl,
    Rgmii1Txd,
    Phy0RstN,
    Phy1RstN,
    Phy0Mdc,
    Phy1Mdc,
    /// Port 0's receive stream after the CDC FIFO (= the core's `mac_rx_*`).
    Rx0Data = 64,
    Rx0Keep,
    Rx0Last,
    Rx0Valid,
    Rx0FcsBad,
    /// Port 1's receive stream after the CDC FIFO (= the bridge's `rx_*`).
    Rx1Data,
    Rx1Keep,
    Rx1Last,
    Rx1Valid,
    Rx1FcsBad,
    CoreCntRxOk,
    CoreCntRxBadFcs,
    CoreCntRxOverflow,
    CoreCntRxOversize,
    BridgeCntRxOk,
    BridgeCntRxDrop,
    BridgeCntNak,
    BridgeCntDup,
    BridgeCntCplDrop,
    BridgeCntRdRetry,
    BridgeCntTrunc,
    BridgeCntTxFrames,
    BridgeHostKnown,
    Tx0CntFrames,
    Tx0CntUnderrun,
    Tx1CntFrames,
    Tx1CntUnderrun,
    /// The core's firmware port read data / valid (see [`Rig::fw_read`]).
    FwRdata,
    FwRvalid,
    /// The board's core clock (the PLL model's 62.5 MHz output).
    CoreClk,
}

impl Board {
    /// Simulation only: forces the core's firmware-port inputs
    /// (`fw_valid`, `fw_write`, `fw_addr`, `fw_wdata`), which the board top
    /// ties off, to these values (`Some`) or releases them (`None`). Takes
    /// effect at the next evaluation.
    pub fn fw_force(&mut self, req: Option<(bool, bool, u32, u32)>) {
        let (on, (v, w, a, d)) = match req {
            Some(r) => (1, r),
            None => (0, (false, false, 0, 0)),
        };
        // SAFETY: live model.
        unsafe { vboard_fw_force(self.raw.as_ptr(), on, v.into(), w.into(), a, d) }
    }

    /// Flushes the VCD, if open.
    pub fn flush_vcd(&mut self) {
        // SAFETY: live model.
        unsafe { vboard_vcd_flush(self.raw.as_ptr()) }
    }

    /// Closes the VCD, if open (also done on drop).
    pub fn close_vcd(&mut self) {
        // SAFETY: live model.
        unsafe { vboard_vcd_close(self.raw.as_ptr()) }
    }
}

/// One clock of a receive stream (`valid`, `data`, `keep`, `last`,
/// `fcs_bad` signals) into `buf`: at the last beat, the frame and its
/// `fcs_bad`. `keep` is the number of octets in the beat (docs/rtl.md: 8
/// on all but the last beat).
pub(crate) fn take_beat<S: Copy>(
    get: impl Fn(S) -> u64,
    (valid, data, keep, last, fcs_bad): (S, S, S, S, S),
    buf: &mut Vec<u8>,
) -> Option<(Vec<u8>, bool)> {
    if get(valid) == 0 {
        return None;
    }
    let is_last = get(last) != 0;
    let n = if is_last {
        (get(keep) as usize).min(8)
    } else {
        8
    };
    buf.extend_from_slice(&get(data).to_le_bytes()[..n]);
    is_last.then(|| (std::mem::take(buf), get(fcs_bad) != 0))
}

/// Ethernet FCS (CRC-32, IEEE 802.3 §3.2.9: reflected polynomial
/// 0xEDB88320, initial value and final XOR all ones), bit by bit. The test
/// side's own reference, independent of the RTL's byte-wide CRC.
pub fn eth_fcs(bytes: &[u8]) -> u32 {
    let mut c = 0xFFFF_FFFFu32;
    for &b in bytes {
        c ^= u32::from(b);
        for _ in 0..8 {
            c = if c & 1 != 0 {
                (c >> 1) ^ 0xEDB8_8320
            } else {
                c >> 1
            };
        }
    }
    !c
}

/// Preamble octets before the SFD (IEEE 802.3 §4.2.5).
pub const PREAMBLE_LEN: usize = 7;
/// Preamble octet.
pub const PREAMBLE: u8 = 0x55;
/// Start frame delimiter.
pub const SFD: u8 = 0xD5;
/// Inter-packet gap in octet times (IEEE 802.3 §4.4.2: 96 bit times).
pub const IPG: usize = 12;

/// The octets a PHY sends for `frame` (destination MAC .. payload, no FCS):
/// preamble, SFD, the frame, its FCS (little-endian, as transmitted).
pub fn wire_octets(frame: &[u8]) -> Vec<u8> {
    let mut w = vec![PREAMBLE; PREAMBLE_LEN];
    w.push(SFD);
    w.extend_from_slice(frame);
    w.extend_from_slice(&eth_fcs(frame).to_le_bytes());
    w
}

/// A frame the PHY model received from the board's TX pins.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct RxFrame {
    /// Octets after the SFD, FCS removed.
    pub data: Vec<u8>,
    /// Preamble + SFD as expected and the FCS correct.
    pub ok: bool,
    /// `tx_ctl` on the falling edge differed from the rising edge (TX_ER).
    pub er: bool,
    /// Time (fs) of the first octet.
    pub time: u64,
}

/// An RGMII PHY at 1000 Mb/s (RGMII v2.0: 4 data bits on each edge of the
/// 125 MHz clock, bits 3:0 on the rising edge and 7:4 on the falling one;
/// the control line carries DV on the rising edge and DV xor ER on the
/// falling edge). Its receive side (PHY → board) drives `rxc`, `rx_ctl`,
/// `rxd`, with data changing a quarter period before each edge (the PHY's
/// internal RX delay centres the clock in the data eye); its transmit side
/// decodes the board's `txd`/`tx_ctl` in the middle of each half of the
/// transmit clock (the FPGA shifts `txc` by 90° on hardware; in simulation the
/// PLL model does not shift, so the decoder samples at the eye centres).
pub struct Phy {
    /// Receive clock half-period, fs ([`Phy::new`]: 4 ns ± ppm).
    pub half_fs: u64,
    /// Keep `rxc` running this many periods after the last octet sent, then
    /// stop it until the next frame (`None`: always running, as a PHY does;
    /// a stopped clock saves model evaluations in long idle stretches).
    pub idle_stop: Option<u64>,
    /// Octets to put on the wire, the IPG included (`None` = idle).
    tx: VecDeque<Option<u8>>,
    /// The octet on the wire in this clock period (`None` = idle): its low
    /// nibble before the rising edge, its high nibble before the falling one.
    cur: Option<u8>,
    /// Octets sent so far (preamble, SFD, frame, FCS; not the gap).
    pub octets_sent: u64,
    idle_periods: u64,
    stopped: bool,
    /// Board → PHY decoder state.
    rx_buf: Vec<u8>,
    rx_on: bool,
    rx_er: bool,
    rx_lo: u8,
    rx_en_lo: bool,
    rx_t0: u64,
    /// Frames decoded from the board's TX pins.
    pub received: VecDeque<RxFrame>,
    /// Frames queued so far.
    pub frames_sent: u64,
}

impl Phy {
    /// A PHY whose receive clock is `ppm` parts per million slower
    /// (positive) or faster (negative) than the nominal 125 MHz.
    pub fn new(ppm: i64) -> Self {
        let half = 4_000_000i64 + 4_000_000 * ppm / 1_000_000;
        Phy {
            half_fs: half as u64,
            idle_stop: None,
            tx: VecDeque::new(),
            cur: None,
            octets_sent: 0,
            idle_periods: 0,
            stopped: false,
            rx_buf: Vec::new(),
            rx_on: false,
            rx_er: false,
            rx_lo: 0,
            rx_en_lo: false,
            rx_t0: 0,
            received: VecDeque::new(),
            frames_sent: 0,
        }
    }

    /// Queues `frame` (no FCS; the FCS is added) with an inter-packet gap.
    pub fn send(&mut self, frame: &[u8]) {
        self.send_wire(&wire_octets(frame));
    }

    /// Queues `frame` with one bit flipped on `rxd` at `bit` (counted from
    /// the first octet after the SFD) after its FCS was computed.
    pub fn send_flipped(&mut self, frame: &[u8], bit: usize) {
        let mut w = wire_octets(frame);
        let i = PREAMBLE_LEN + 1 + bit / 8;
        w[i] ^= 1 << (bit % 8);
        self.send_wire(&w);
    }

    /// Queues raw wire octets (preamble, SFD, frame, FCS) and the IPG.
    pub fn send_wire(&mut self, w: &[u8]) {
        self.tx.extend(w.iter().map(|&b| Some(b)));
        self.tx.extend(std::iter::repeat_n(None, IPG));
        self.frames_sent += 1;
        self.stopped = false;
        self.idle_periods = 0;
    }

    /// Nothing left to send.
    pub fn idle(&self) -> bool {
        self.tx.is_empty() && self.cur.is_none()
    }

    /// Whether `rxc` toggles now.
    fn running(&self) -> bool {
        !self.stopped
    }

    /// Before a rising edge: the next octet's low nibble and DV.
    fn next_rise(&mut self) -> (u64, u64) {
        self.cur = self.tx.pop_front().flatten();
        match self.cur {
            Some(b) => {
                self.octets_sent += 1;
                self.idle_periods = 0;
                (u64::from(b & 0xF), 1)
            }
            None => {
                if self.tx.is_empty() {
                    self.idle_periods += 1;
                    if let Some(n) = self.idle_stop {
                        if self.idle_periods > n {
                            self.stopped = true;
                        }
                    }
                }
                (0, 0)
            }
        }
    }

    /// Before a falling edge: the high nibble and DV xor ER (ER is 0).
    fn next_fall(&mut self) -> (u64, u64) {
        match self.cur {
            Some(b) => (u64::from(b >> 4), 1),
            None => (0, 0),
        }
    }

    /// The board's TX pins sampled in the first half of a core clock.
    fn sample_lo(&mut self, txd: u64, ctl: u64) {
        self.rx_lo = txd as u8 & 0xF;
        self.rx_en_lo = ctl & 1 != 0;
    }

    /// The board's TX pins sampled in the second half; completes an octet.
    fn sample_hi(&mut self, txd: u64, ctl: u64, time: u64) {
        let en = self.rx_en_lo;
        let er = en != (ctl & 1 != 0);
        if en {
            if !self.rx_on {
                self.rx_on = true;
                self.rx_buf.clear();
                self.rx_er = false;
                self.rx_t0 = time;
            }
            self.rx_buf.push(self.rx_lo | ((txd as u8 & 0xF) << 4));
            self.rx_er |= er;
        } else if self.rx_on {
            self.rx_on = false;
            let w = std::mem::take(&mut self.rx_buf);
            let pre = w.len() > PREAMBLE_LEN
                && w[..PREAMBLE_LEN].iter().all(|&b| b == PREAMBLE)
                && w[PREAMBLE_LEN] == SFD;
            let body = if pre { &w[PREAMBLE_LEN + 1..] } else { &w[..] };
            let (data, fcs_ok) = if body.len() >= 4 {
                let (d, f) = body.split_at(body.len() - 4);
                (d.to_vec(), eth_fcs(d).to_le_bytes() == f)
            } else {
                (body.to_vec(), false)
            };
            self.received.push_back(RxFrame {
                data,
                ok: pre && fcs_ok,
                er: self.rx_er,
                time: self.rx_t0,
            });
        }
    }
}

/// Half-period of the driven `clk100` (125 MHz: the PLL model passes it
/// through as the transmit clock), fs.
pub const CLK_HALF_FS: u64 = 4_000_000;
/// Nominal core clock half-period (62.5 MHz, the PLL model's `clk100` / 2),
/// fs.
pub const CORE_HALF_FS: u64 = 2 * CLK_HALF_FS;

/// The board, its clocks and two PHYs, run by an event loop (time in fs).
/// Events: `clk100` (= transmit clock) edges and the two TX sampling points
/// in between (every quarter period), each PHY's `rxc` edges and its data
/// changes a quarter period before each edge. Each input change is one
/// [`Board::eval`]; an event that changes nothing evaluates nothing. The
/// core clock is the PLL model's divided output: [`Rig::core_cycles`]
/// counts its rising edges (every second `clk100` rising edge).
pub struct Rig {
    pub board: Board,
    pub phy: [Phy; 2],
    /// Simulated time, fs.
    pub now: u64,
    /// Core clock (62.5 MHz) rising edges so far.
    pub core_cycles: u64,
    /// Transmit clock (`clk100`, 125 MHz) rising edges so far.
    pub tx_cycles: u64,
    /// Model evaluations so far.
    pub evals: u64,
    /// Receive streams after the CDC FIFOs, per port: (octets, fcs_bad),
    /// collected on the core clock from the public internal signals.
    pub rx_stream: [VecDeque<(Vec<u8>, bool)>; 2],
    stream_buf: [Vec<u8>; 2],
    /// Write a VCD step at every evaluation (see [`Rig::trace_vcd`]).
    pub vcd: bool,
    /// Time (ps) of the last VCD step.
    vcd_last: Option<u64>,
    core_q: u8,
    core_next: u64,
    phy_q: [u8; 2],
    phy_next: [u64; 2],
}

impl Rig {
    /// A board with DIP switches `sw`, PHY receive clocks `ppm` off
    /// nominal, the reset button released, run until out of reset.
    pub fn new(sw: u8, ppm: [i64; 2]) -> Self {
        let mut board = Board::new();
        board.set(In::Sw, u64::from(sw));
        board.set(In::RstN, 1);
        board.eval();
        let phy = [Phy::new(ppm[0]), Phy::new(ppm[1])];
        // The PHYs' clocks start at an arbitrary phase against the core's.
        let phy_next = [CLK_HALF_FS * 3 / 8 + 1_234, CLK_HALF_FS * 5 / 8 + 4_321];
        let mut r = Rig {
            board,
            phy,
            now: 0,
            core_cycles: 0,
            tx_cycles: 0,
            evals: 1,
            rx_stream: [VecDeque::new(), VecDeque::new()],
            stream_buf: [Vec::new(), Vec::new()],
            vcd: false,
            vcd_last: None,
            core_q: 0,
            core_next: CLK_HALF_FS / 2,
            phy_q: [0, 0],
            phy_next,
        };
        // Power-on reset: 16 clocks of counter plus synchronisers.
        r.run_core_cycles(64);
        r
    }

    /// Simulation only: a firmware-port write (one request clock on the
    /// core's `fw_*`, forced; see [`Board::fw_force`]), as the firmware's
    /// `Hal` would do it on a soft CPU.
    pub fn fw_write(&mut self, addr: u32, value: u32) {
        self.board.fw_force(Some((true, true, addr, value)));
        self.run_core_cycles(1);
        self.board.fw_force(None);
    }

    /// Simulation only: a firmware-port read (`fw_rvalid` one clock after
    /// the request, docs/rtl.md). Panics if no `fw_rvalid` within 4 clocks.
    pub fn fw_read(&mut self, addr: u32) -> u32 {
        self.board.fw_force(Some((true, false, addr, 0)));
        self.run_core_cycles(1);
        self.board.fw_force(Some((false, false, 0, 0)));
        for _ in 0..4 {
            if self.board.get(Sig::FwRvalid) != 0 {
                let v = self.board.get(Sig::FwRdata) as u32;
                self.board.fw_force(None);
                return v;
            }
            self.run_core_cycles(1);
        }
        panic!("no fw_rvalid for the firmware-port read of {addr:#x}");
    }

    fn eval(&mut self) {
        self.board.eval();
        self.evals += 1;
        if self.vcd {
            // Time unit 1 ps; two evaluations in the same picosecond (a PHY
            // edge and a core edge that coincide) get consecutive steps, as
            // a VCD needs increasing times.
            let t = match self.vcd_last {
                Some(l) if self.now / 1000 <= l => l + 1,
                _ => self.now / 1000,
            };
            self.vcd_last = Some(t);
            self.board.dump(t);
        }
    }

    /// Starts a VCD of every signal at `path` (one step per evaluation,
    /// time unit 1 ps).
    pub fn trace_vcd(&mut self, path: &std::path::Path) -> std::io::Result<()> {
        self.board.trace_vcd(path)?;
        self.vcd = true;
        Ok(())
    }

    /// [`Rig::trace_vcd`] to `$BOARD_VCD/<name>.vcd` when the environment
    /// variable `BOARD_VCD` names a directory (for debugging a test);
    /// nothing otherwise.
    pub fn trace_from_env(&mut self, name: &str) {
        if let Some(dir) = std::env::var_os("BOARD_VCD") {
            let path = std::path::Path::new(&dir).join(format!("{name}.vcd"));
            match self.trace_vcd(&path) {
                Ok(()) => eprintln!("VCD: {}", path.display()),
                Err(e) => eprintln!("VCD not written: {e}"),
            }
        }
    }

    /// Runs `n` core clock cycles.
    pub fn run_core_cycles(&mut self, n: u64) {
        let end = self.core_cycles + n;
        while self.core_cycles < end {
            self.step();
        }
    }

    /// Runs until `done(self)` or `max_cycles` core cycles; returns whether
    /// `done` became true.
    pub fn run_until(&mut self, max_cycles: u64, mut done: impl FnMut(&mut Rig) -> bool) -> bool {
        let end = self.core_cycles + max_cycles;
        while self.core_cycles < end {
            if done(self) {
                return true;
            }
            // Check `done` once per core cycle.
            let c = self.core_cycles;
            while self.core_cycles == c {
                self.step();
            }
        }
        done(self)
    }

    /// One event (the earliest one).
    pub fn step(&mut self) {
        let mut who = 2usize; // core
        let mut t = self.core_next;
        for p in 0..2 {
            if self.phy[p].running() || !self.phy[p].idle() {
                if self.phy_next[p] < t {
                    t = self.phy_next[p];
                    who = p;
                }
            } else {
                // Stopped clock: keep its phase moving with time.
                while self.phy_next[p] < self.core_next {
                    self.phy_next[p] += self.phy[p].half_fs / 2;
                    self.phy_q[p] = (self.phy_q[p] + 1) % 4;
                }
            }
        }
        self.now = t;
        if who == 2 {
            self.core_event();
        } else {
            self.phy_event(who);
        }
    }

    fn core_event(&mut self) {
        let q = self.core_q;
        self.core_q = (q + 1) % 4;
        self.core_next += CLK_HALF_FS / 2;
        match q {
            0 => {
                let core_was = self.board.get(Sig::CoreClk);
                self.board.set(In::Clk100, 1);
                self.eval();
                self.tx_cycles += 1;
                if core_was == 0 && self.board.get(Sig::CoreClk) != 0 {
                    self.core_cycles += 1;
                    self.collect_streams();
                }
            }
            1 => {
                for p in 0..2 {
                    let (d, c) = self.tx_pins(p);
                    self.phy[p].sample_lo(d, c);
                }
            }
            2 => {
                self.board.set(In::Clk100, 0);
                self.eval();
            }
            _ => {
                let now = self.now;
                for p in 0..2 {
                    let (d, c) = self.tx_pins(p);
                    self.phy[p].sample_hi(d, c, now);
                }
            }
        }
    }

    fn tx_pins(&self, p: usize) -> (u64, u64) {
        if p == 0 {
            (
                self.board.get(Sig::Rgmii0Txd),
                self.board.get(Sig::Rgmii0TxCtl),
            )
        } else {
            (
                self.board.get(Sig::Rgmii1Txd),
                self.board.get(Sig::Rgmii1TxCtl),
            )
        }
    }

    fn collect_streams(&mut self) {
        let sigs = [
            (
                Sig::Rx0Valid,
                Sig::Rx0Data,
                Sig::Rx0Keep,
                Sig::Rx0Last,
                Sig::Rx0FcsBad,
            ),
            (
                Sig::Rx1Valid,
                Sig::Rx1Data,
                Sig::Rx1Keep,
                Sig::Rx1Last,
                Sig::Rx1FcsBad,
            ),
        ];
        for (p, sig) in sigs.into_iter().enumerate() {
            if let Some(frame) = take_beat(|x| self.board.get(x), sig, &mut self.stream_buf[p]) {
                self.rx_stream[p].push_back(frame);
            }
        }
    }

    fn phy_event(&mut self, p: usize) {
        let q = self.phy_q[p];
        self.phy_q[p] = (q + 1) % 4;
        self.phy_next[p] += self.phy[p].half_fs / 2;
        let (rxc, ctl, rxd) = if p == 0 {
            (In::Rgmii0Rxc, In::Rgmii0RxCtl, In::Rgmii0Rxd)
        } else {
            (In::Rgmii1Rxc, In::Rgmii1RxCtl, In::Rgmii1Rxd)
        };
        match q {
            // A quarter period before the rising edge: low nibble, DV.
            0 => {
                let (d, c) = self.phy[p].next_rise();
                self.set_if_changed(rxd, d, ctl, c);
            }
            1 => {
                self.board.set(rxc, 1);
                self.eval();
            }
            // A quarter period before the falling edge: high nibble, DV^ER.
            2 => {
                let (d, c) = self.phy[p].next_fall();
                self.set_if_changed(rxd, d, ctl, c);
            }
            _ => {
                self.board.set(rxc, 0);
                self.eval();
            }
        }
    }

    fn set_if_changed(&mut self, rxd: In, d: u64, ctl: In, c: u64) {
        if self.board.get_in(rxd) != d || self.board.get_in(ctl) != c {
            self.board.set(rxd, d);
            self.board.set(ctl, c);
            self.eval();
        }
    }
}
