//! Connection table: 4-tuple → connection index, and the per-connection RX
//! context the fast path needs.
//!
//! * **Key store**: `2^log2` entries (default 64) of {used, local IPv4, peer
//!   IPv4, local port, peer port}, searched in parallel (a small CAM in
//!   registers: 64 x 97 bits). If several used entries match, the lowest
//!   index wins (the firmware never writes duplicates).
//! * **Context** (the fields of `rnic_wire::abi::context::ConnContext` the RX
//!   fast path reads): `mode` (`ConnMode`: 0 Free, 1 Firmware, 2 Rdma),
//!   `mpa` (the low 4 bits of `mpa_flags`: `MPA_CRC_TX`, `MPA_CRC_RX`,
//!   `MPA_MARKERS_TX`, `MPA_MARKERS_RX`), `rcv_nxt`, `rcv_wnd`, `snd_una`,
//!   `snd_nxt`.
//!
//! Ports:
//! * `wr_*` (firmware): writes a whole entry in one clock (key, `used`,
//!   context). Indices at or above the table size are ignored.
//! * `lk_*` → `res_*`: lookup. `res_valid` pulses **2 clocks** after
//!   `lk_valid` (clock 1: parallel compare into a match register; clock 2:
//!   priority encode and context read). Lookups can be issued every clock.
//! * `up_*` (the fast path): writes `rcv_nxt` and `snd_una` of one entry,
//!   and `snd_wnd` with `up_wnd_valid`; taken only while `up_ready` (= no
//!   `wr_valid` in the same clock, the firmware write wins).
//! * `rw_*` (the segment sequencer's rewind): writes `rcv_nxt` alone,
//!   back to the start of a segment the device refused after `rx_split`
//!   had accepted it (no span slot, `rnic_core`); taken while `rw_ready`
//!   (= no `wr_valid`), and `up_*` waits in its clock (`up_ready` low).
//!   Priority: `wr` > `rw` > `up`.
//! * `sn_*` (TX): writes `snd_nxt` (the sequence number after the last data
//!   frame on the wire). It has its own array, so it and `up_*` never
//!   collide; in a clock with `wr_valid` it is ignored, and the integrator
//!   offers it again one clock later (`rnic_core`: nothing is lost).
//!   Priority: `wr` > {`up`, `sn`}.
//! * **SND.NXT never moves back** (RFC 9293 §3.3.1: SND.NXT is the next
//!   sequence number to send; a retransmission, RFC 9293 §3.8.1, re-sends
//!   below it and leaves it): an `sn_*` write only takes effect when it is
//!   ahead of the stored value in sequence space (RFC 9293 §3.4). A
//!   firmware `wr_*` sets any value.
//! * `r2_idx` → `r2_mode`, `r2_snd_una` (1 clock): a second read port, for
//!   the TX log's retire and replay checks (`tx_log`).
//! * `r3_idx` → `r3_snd_una` (1 clock): a third read port, for
//!   the send completions' acknowledgement check (`send_cpl`).
//! * `rd_idx` → `rd_*`: a read port for the device-updated fields
//!   (`rcv_nxt`, `snd_una`, `snd_nxt`, `snd_wnd`; 1 clock), for tests and the
//!   firmware port.
//! * `snd_wscale` (the peer's window scale) is read with a lookup
//!   (`res_snd_wscale`) so `rx_split` can scale SEG.WND.
//!
//! `reset` clears every `used` bit. Custom Verilog (arrays, loops); the Rust
//! `update` is the same behaviour for rust-hdl's simulator.

use rust_hdl::prelude::*;

/// Default table size: 64 connections.
pub const DEFAULT_LOG2_CONNS: usize = 6;

/// The mask of the 8-bit connection index in the per-connection state
/// outside this table (`tx_ack`'s coalescing bits, `ddp_rx`'s stopped
/// streams, the core's QP-to-connection check), by profile
/// (`crate::profile::PROFILES[pr]`). The co-simulation profile keeps all 256
/// indices, so its behaviour is unchanged (its tests use indices up to 255);
/// the others have their table's `2^conn_log2`: the board's 16 (`0xF`).
/// State of indices beyond the mask has no reader and synthesis removes it;
/// an index beyond it is refused, never aliased.
pub fn conn_state_mask(pr: usize) -> u64 {
    if pr == crate::profile::PR_SIM {
        0xFF
    } else {
        (1 << crate::profile::PROFILES[pr].conn_log2) - 1
    }
}

#[derive(Clone, Default)]
struct Entry {
    used: bool,
    key: u128,
    mode: u64,
    mpa: u64,
    rcv_nxt: u64,
    rcv_wnd: u64,
    snd_una: u64,
    snd_nxt: u64,
    snd_wnd: u64,
    snd_wsc: u64,
}

#[derive(Clone, Default)]
struct Model {
    e: Vec<Entry>,
    lk1: bool,
    hit: Option<usize>,
}

/// A table whose [`Default`] has `2^L` entries (the profile's size).
#[derive(LogicBlock)]
pub struct ConnTableN<const L: usize> {
    pub clock: Signal<In, Clock>,
    pub reset: Signal<In, Bit>,
    pub wr_valid: Signal<In, Bit>,
    pub wr_idx: Signal<In, Bits<8>>,
    pub wr_used: Signal<In, Bit>,
    pub wr_local_ip: Signal<In, Bits<32>>,
    pub wr_peer_ip: Signal<In, Bits<32>>,
    pub wr_local_port: Signal<In, Bits<16>>,
    pub wr_peer_port: Signal<In, Bits<16>>,
    pub wr_mode: Signal<In, Bits<2>>,
    pub wr_mpa: Signal<In, Bits<4>>,
    pub wr_rcv_nxt: Signal<In, Bits<32>>,
    pub wr_rcv_wnd: Signal<In, Bits<32>>,
    pub wr_snd_una: Signal<In, Bits<32>>,
    pub wr_snd_nxt: Signal<In, Bits<32>>,
    pub lk_valid: Signal<In, Bit>,
    pub lk_local_ip: Signal<In, Bits<32>>,
    pub lk_peer_ip: Signal<In, Bits<32>>,
    pub lk_local_port: Signal<In, Bits<16>>,
    pub lk_peer_port: Signal<In, Bits<16>>,
    pub res_valid: Signal<Out, Bit>,
    pub res_hit: Signal<Out, Bit>,
    pub res_idx: Signal<Out, Bits<8>>,
    pub res_mode: Signal<Out, Bits<2>>,
    pub res_mpa: Signal<Out, Bits<4>>,
    pub res_rcv_nxt: Signal<Out, Bits<32>>,
    pub res_rcv_wnd: Signal<Out, Bits<32>>,
    pub res_snd_una: Signal<Out, Bits<32>>,
    pub res_snd_nxt: Signal<Out, Bits<32>>,
    pub up_valid: Signal<In, Bit>,
    pub up_idx: Signal<In, Bits<8>>,
    pub up_rcv_nxt: Signal<In, Bits<32>>,
    pub up_snd_una: Signal<In, Bits<32>>,
    pub up_ready: Signal<Out, Bit>,
    pub rw_valid: Signal<In, Bit>,
    pub rw_idx: Signal<In, Bits<8>>,
    pub rw_rcv_nxt: Signal<In, Bits<32>>,
    pub rw_ready: Signal<Out, Bit>,
    pub rd_idx: Signal<In, Bits<8>>,
    pub rd_used: Signal<Out, Bit>,
    pub rd_mode: Signal<Out, Bits<2>>,
    pub rd_rcv_nxt: Signal<Out, Bits<32>>,
    pub rd_snd_una: Signal<Out, Bits<32>>,
    /// The peer's window scale (`ConnContext.snd_wscale`, RFC 7323 §2.3)
    /// and window in octets (`snd_wnd`, already scaled), with `wr_*`.
    pub wr_snd_wscale: Signal<In, Bits<4>>,
    pub wr_snd_wnd: Signal<In, Bits<32>>,
    pub res_snd_wscale: Signal<Out, Bits<4>>,
    /// With `up_valid` (and `up_ready`): also write `snd_wnd`.
    pub up_wnd_valid: Signal<In, Bit>,
    pub up_snd_wnd: Signal<In, Bits<32>>,
    /// TX: the connection's SND.NXT after a data frame (RFC 9293 §3.3.1).
    /// Ignored in a clock with `wr_valid` (the integrator holds it one clock).
    pub sn_valid: Signal<In, Bit>,
    pub sn_idx: Signal<In, Bits<8>>,
    pub sn_snd_nxt: Signal<In, Bits<32>>,
    pub rd_snd_nxt: Signal<Out, Bits<32>>,
    pub rd_snd_wnd: Signal<Out, Bits<32>>,
    pub r2_idx: Signal<In, Bits<8>>,
    pub r2_mode: Signal<Out, Bits<2>>,
    pub r2_snd_una: Signal<Out, Bits<32>>,
    pub r3_idx: Signal<In, Bits<8>>,
    pub r3_snd_una: Signal<Out, Bits<32>>,
    _log2: usize,
    _m: Box<Model>,
}

/// The co-simulation core's table (64 connections).
pub type ConnTable = ConnTableN<DEFAULT_LOG2_CONNS>;

impl<const L: usize> ConnTableN<L> {
    /// A table of `2^log2` connections (`log2` in 1..=8).
    pub fn new(log2: usize) -> Self {
        assert!((1..=8).contains(&log2));
        Self {
            clock: Default::default(),
            reset: Default::default(),
            wr_valid: Default::default(),
            wr_idx: Default::default(),
            wr_used: Default::default(),
            wr_local_ip: Default::default(),
            wr_peer_ip: Default::default(),
            wr_local_port: Default::default(),
            wr_peer_port: Default::default(),
            wr_mode: Default::default(),
            wr_mpa: Default::default(),
            wr_rcv_nxt: Default::default(),
            wr_rcv_wnd: Default::default(),
            wr_snd_una: Default::default(),
            wr_snd_nxt: Default::default(),
            lk_valid: Default::default(),
            lk_local_ip: Default::default(),
            lk_peer_ip: Default::default(),
            lk_local_port: Default::default(),
            lk_peer_port: Default::default(),
            res_valid: Default::default(),
            res_hit: Default::default(),
            res_idx: Default::default(),
            res_mode: Default::default(),
            res_mpa: Default::default(),
            res_rcv_nxt: Default::default(),
            res_rcv_wnd: Default::default(),
            res_snd_una: Default::default(),
            res_snd_nxt: Default::default(),
            up_valid: Default::default(),
            up_idx: Default::default(),
            up_rcv_nxt: Default::default(),
            up_snd_una: Default::default(),
            up_ready: Default::default(),
            rw_valid: Default::default(),
            rw_idx: Default::default(),
            rw_rcv_nxt: Default::default(),
            rw_ready: Default::default(),
            rd_idx: Default::default(),
            rd_used: Default::default(),
            rd_mode: Default::default(),
            rd_rcv_nxt: Default::default(),
            rd_snd_una: Default::default(),
            wr_snd_wscale: Default::default(),
            wr_snd_wnd: Default::default(),
            res_snd_wscale: Default::default(),
            up_wnd_valid: Default::default(),
            up_snd_wnd: Default::default(),
            sn_valid: Default::default(),
            sn_idx: Default::default(),
            sn_snd_nxt: Default::default(),
            rd_snd_nxt: Default::default(),
            rd_snd_wnd: Default::default(),
            r2_idx: Default::default(),
            r2_mode: Default::default(),
            r2_snd_una: Default::default(),
            r3_idx: Default::default(),
            r3_snd_una: Default::default(),
            _log2: log2,
            _m: Box::new(Model {
                e: vec![Entry::default(); 1 << log2],
                ..Default::default()
            }),
        }
    }

    fn index(&self, i: u64) -> Option<usize> {
        ((i as usize) < (1 << self._log2)).then_some(i as usize)
    }
}

impl<const L: usize> Default for ConnTableN<L> {
    fn default() -> Self {
        Self::new(L)
    }
}

fn key(ip_l: u64, ip_p: u64, port_l: u64, port_p: u64) -> u128 {
    (ip_l as u128) << 64 | (ip_p as u128) << 32 | (port_l as u128) << 16 | port_p as u128
}

impl<const L: usize> Logic for ConnTableN<L> {
    fn update(&mut self) {
        self.up_ready.next = !self.wr_valid.val() && !self.rw_valid.val();
        self.rw_ready.next = !self.wr_valid.val();
        if !self.clock.pos_edge() {
            return;
        }
        // Clock 2 of a lookup: from the match register and the old contents.
        let m = &self._m;
        self.res_valid.next = m.lk1 && !self.reset.val();
        let idx = m.hit.unwrap_or(0);
        let e = &m.e[idx];
        self.res_hit.next = m.hit.is_some();
        self.res_idx.next = (idx as u64).into();
        self.res_mode.next = e.mode.into();
        self.res_mpa.next = e.mpa.into();
        self.res_rcv_nxt.next = e.rcv_nxt.into();
        self.res_rcv_wnd.next = e.rcv_wnd.into();
        self.res_snd_una.next = e.snd_una.into();
        self.res_snd_nxt.next = e.snd_nxt.into();
        self.res_snd_wscale.next = e.snd_wsc.into();
        // Read port.
        let r = self
            .index(self.rd_idx.val().to_u64())
            .map(|i| m.e[i].clone());
        let r = r.unwrap_or_default();
        self.rd_used.next = r.used;
        self.rd_mode.next = r.mode.into();
        self.rd_rcv_nxt.next = r.rcv_nxt.into();
        self.rd_snd_una.next = r.snd_una.into();
        self.rd_snd_nxt.next = r.snd_nxt.into();
        self.rd_snd_wnd.next = r.snd_wnd.into();
        let r2 = self
            .index(self.r2_idx.val().to_u64())
            .map(|i| m.e[i].clone())
            .unwrap_or_default();
        self.r2_mode.next = r2.mode.into();
        self.r2_snd_una.next = r2.snd_una.into();
        let r3 = self
            .index(self.r3_idx.val().to_u64())
            .map(|i| m.e[i].clone())
            .unwrap_or_default();
        self.r3_snd_una.next = r3.snd_una.into();
        // Clock 1: compare.
        let k = key(
            self.lk_local_ip.val().to_u64(),
            self.lk_peer_ip.val().to_u64(),
            self.lk_local_port.val().to_u64(),
            self.lk_peer_port.val().to_u64(),
        );
        let hit = m.e.iter().position(|e| e.used && e.key == k);
        let lkv = self.lk_valid.val();
        let lk1 = lkv && !self.reset.val();
        // Writes.
        let wr = self.wr_valid.val();
        let wi = self.index(self.wr_idx.val().to_u64());
        let ui = self.index(self.up_idx.val().to_u64());
        let ri = self.index(self.rw_idx.val().to_u64());
        let (rw, rw_rcv) = (self.rw_valid.val(), self.rw_rcv_nxt.val().to_u64());
        let reset = self.reset.val();
        let new = Entry {
            used: self.wr_used.val(),
            key: key(
                self.wr_local_ip.val().to_u64(),
                self.wr_peer_ip.val().to_u64(),
                self.wr_local_port.val().to_u64(),
                self.wr_peer_port.val().to_u64(),
            ),
            mode: self.wr_mode.val().to_u64(),
            mpa: self.wr_mpa.val().to_u64(),
            rcv_nxt: self.wr_rcv_nxt.val().to_u64(),
            rcv_wnd: self.wr_rcv_wnd.val().to_u64(),
            snd_una: self.wr_snd_una.val().to_u64(),
            snd_nxt: self.wr_snd_nxt.val().to_u64(),
            snd_wnd: self.wr_snd_wnd.val().to_u64(),
            snd_wsc: self.wr_snd_wscale.val().to_u64(),
        };
        let (upw, up_wnd) = (self.up_wnd_valid.val(), self.up_snd_wnd.val().to_u64());
        let si = self.index(self.sn_idx.val().to_u64());
        let (sn, sn_nxt) = (self.sn_valid.val(), self.sn_snd_nxt.val().to_u64());
        let (up, up_rcv, up_una) = (
            self.up_valid.val(),
            self.up_rcv_nxt.val().to_u64(),
            self.up_snd_una.val().to_u64(),
        );
        let m = &mut self._m;
        m.lk1 = lk1;
        if lkv {
            m.hit = hit;
        }
        if wr {
            if let Some(i) = wi {
                m.e[i] = new;
            }
        } else if rw {
            if let Some(i) = ri {
                m.e[i].rcv_nxt = rw_rcv;
            }
        } else if up {
            if let Some(i) = ui {
                m.e[i].rcv_nxt = up_rcv;
                m.e[i].snd_una = up_una;
                if upw {
                    m.e[i].snd_wnd = up_wnd;
                }
            }
        }
        if !wr && sn {
            if let Some(i) = si {
                // advance only (sequence space)
                if ((sn_nxt as u32).wrapping_sub(m.e[i].snd_nxt as u32) as i32) > 0 {
                    m.e[i].snd_nxt = sn_nxt;
                }
            }
        }
        if reset {
            for e in m.e.iter_mut() {
                e.used = false;
            }
        }
    }

    fn connect(&mut self) {
        self.res_valid.connect();
        self.res_hit.connect();
        self.res_idx.connect();
        self.res_mode.connect();
        self.res_mpa.connect();
        self.res_rcv_nxt.connect();
        self.res_rcv_wnd.connect();
        self.res_snd_una.connect();
        self.res_snd_nxt.connect();
        self.up_ready.connect();
        self.rw_ready.connect();
        self.rd_used.connect();
        self.rd_mode.connect();
        self.rd_rcv_nxt.connect();
        self.rd_snd_una.connect();
        self.res_snd_wscale.connect();
        self.rd_snd_nxt.connect();
        self.rd_snd_wnd.connect();
        self.r2_mode.connect();
        self.r2_snd_una.connect();
        self.r3_snd_una.connect();
    }

    fn hdl(&self) -> Verilog {
        let e = 1usize << self._log2;
        let l = self._log2;
        let hi = l - 1;
        // An index is in range when its bits above the table's are zero.
        let in_range = |sig: &str| {
            if l == 8 {
                "1'b1".to_string()
            } else {
                format!("({sig}[7:{l}] == {w}'d0)", w = 8 - l)
            }
        };
        let wr_ok = in_range("wr_idx");
        let up_ok = in_range("up_idx");
        let rw_ok = in_range("rw_idx");
        let rd_ok = in_range("rd_idx");
        let sn_ok = in_range("sn_idx");
        let r2_ok = in_range("r2_idx");
        let r3_ok = in_range("r3_idx");
        Verilog::Custom(format!(
            "\
// {e} entries: key = {{local ip, peer ip, local port, peer port}}.
reg [95:0] key [0:{em1}];
reg [{em1}:0] used;
reg [1:0] mode [0:{em1}];
reg [3:0] mpa [0:{em1}];
reg [31:0] rcv_nxt [0:{em1}];
reg [31:0] rcv_wnd [0:{em1}];
reg [31:0] snd_una [0:{em1}];
reg [31:0] snd_nxt [0:{em1}];
reg [31:0] snd_wnd [0:{em1}];
reg [3:0] snd_wsc [0:{em1}];
reg lk1;
// TX's SND.NXT minus the stored one: bit 31 clear = not behind
wire [31:0] sn_ahead = sn_snd_nxt - snd_nxt[sn_idx[{hi}:0]];
reg [{em1}:0] hitv;
reg [{hi}:0] enc;
reg any;
wire [95:0] lk_key = {{lk_local_ip, lk_peer_ip, lk_local_port, lk_peer_port}};
integer i;
integer j;

// Lookup clock 1: parallel compare (only on a lookup clock: `hitv` is read
// only in the clock after one, and this spares the simulator the loop).
always @(posedge clock) begin
    lk1 <= lk_valid & ~reset;
    if (lk_valid) begin
        for (i = 0; i < {e}; i = i + 1) begin
            hitv[i] <= used[i] & (key[i] == lk_key);
        end
    end
end

// Priority encoder: the lowest matching index.
always @(*) begin
    enc = {l}'d0;
    any = 1'b0;
    for (j = {em1}; j >= 0; j = j - 1) begin
        if (hitv[j]) begin
            enc = j[{hi}:0];
            any = 1'b1;
        end
    end
end

// Lookup clock 2: context read.
always @(posedge clock) begin
    res_valid <= lk1 & ~reset;
    res_hit <= any;
    res_idx <= {res_idx};
    res_mode <= mode[enc];
    res_mpa <= mpa[enc];
    res_rcv_nxt <= rcv_nxt[enc];
    res_rcv_wnd <= rcv_wnd[enc];
    res_snd_una <= snd_una[enc];
    res_snd_nxt <= snd_nxt[enc];
    res_snd_wscale <= snd_wsc[enc];
end

// Read port for the device-updated fields.
always @(posedge clock) begin
    rd_used <= {rd_ok} & used[rd_idx[{hi}:0]];
    rd_mode <= {rd_ok} ? mode[rd_idx[{hi}:0]] : 2'd0;
    rd_rcv_nxt <= {rd_ok} ? rcv_nxt[rd_idx[{hi}:0]] : 32'd0;
    rd_snd_una <= {rd_ok} ? snd_una[rd_idx[{hi}:0]] : 32'd0;
    rd_snd_nxt <= {rd_ok} ? snd_nxt[rd_idx[{hi}:0]] : 32'd0;
    rd_snd_wnd <= {rd_ok} ? snd_wnd[rd_idx[{hi}:0]] : 32'd0;
end

// Second read port (the TX log: mode and SND.UNA).
always @(posedge clock) begin
    r2_mode <= {r2_ok} ? mode[r2_idx[{hi}:0]] : 2'd0;
    r2_snd_una <= {r2_ok} ? snd_una[r2_idx[{hi}:0]] : 32'd0;
end

// Third read port (send completions: SND.UNA).
always @(posedge clock) begin
    r3_snd_una <= {r3_ok} ? snd_una[r3_idx[{hi}:0]] : 32'd0;
end

// Writes: the firmware's whole-entry write wins over the fast path's update.
always @(posedge clock) begin
    if (wr_valid) begin
        if ({wr_ok}) begin
            used[wr_idx[{hi}:0]] <= wr_used;
            key[wr_idx[{hi}:0]] <= {{wr_local_ip, wr_peer_ip, wr_local_port, wr_peer_port}};
            mode[wr_idx[{hi}:0]] <= wr_mode;
            mpa[wr_idx[{hi}:0]] <= wr_mpa;
            rcv_nxt[wr_idx[{hi}:0]] <= wr_rcv_nxt;
            rcv_wnd[wr_idx[{hi}:0]] <= wr_rcv_wnd;
            snd_una[wr_idx[{hi}:0]] <= wr_snd_una;
            snd_nxt[wr_idx[{hi}:0]] <= wr_snd_nxt;
            snd_wnd[wr_idx[{hi}:0]] <= wr_snd_wnd;
            snd_wsc[wr_idx[{hi}:0]] <= wr_snd_wscale;
        end
    end else begin
        if (rw_valid) begin
            if ({rw_ok}) begin
                rcv_nxt[rw_idx[{hi}:0]] <= rw_rcv_nxt;
            end
        end else if (up_valid & {up_ok}) begin
            rcv_nxt[up_idx[{hi}:0]] <= up_rcv_nxt;
            snd_una[up_idx[{hi}:0]] <= up_snd_una;
            if (up_wnd_valid) begin
                snd_wnd[up_idx[{hi}:0]] <= up_snd_wnd;
            end
        end
        // TX's snd_nxt: its own array, so it never collides with the fast
        // path's update; a firmware write in the same clock wins (the core
        // holds the TX update and offers it again in the next clock).
        // Advance only: a replayed (retransmitted) frame's end is behind
        // SND.NXT and must not move it back (RFC 9293 §3.8.1, §3.4).
        if (sn_valid & {sn_ok} & (sn_ahead != 32'd0) & ~sn_ahead[31]) begin
            snd_nxt[sn_idx[{hi}:0]] <= sn_snd_nxt;
        end
    end
    if (reset) begin
        used <= {e}'d0;
    end
end

always @(*) begin
    up_ready = ~wr_valid & ~rw_valid;
    rw_ready = ~wr_valid;
end
",
            em1 = e - 1,
            res_idx = if l == 8 {
                "enc".to_string()
            } else {
                format!("{{{}'d0, enc}}", 8 - l)
            },
        ))
    }
}

/// Whether an 8-bit connection index is beyond profile `PR`'s connections
/// ([`conn_state_mask`]); combinational. The core checks a QP's connection
/// with it where the QP configuration enters (the firmware's QP table
/// write or the pins), so a QP of the board is never bound to a connection
/// the board's table cannot hold. Always 0 in the co-simulation profile.
#[derive(LogicBlock)]
pub struct ConnInProfile<const PR: usize> {
    pub idx: Signal<In, Bits<8>>,
    pub beyond: Signal<Out, Bit>,
    k_mask: Constant<Bits<8>>,
}

impl<const PR: usize> Default for ConnInProfile<PR> {
    fn default() -> Self {
        Self {
            idx: Default::default(),
            beyond: Default::default(),
            k_mask: Constant::new(conn_state_mask(PR).into()),
        }
    }
}

impl<const PR: usize> Logic for ConnInProfile<PR> {
    #[hdl_gen]
    fn update(&mut self) {
        self.beyond.next = (self.idx.val() & !self.k_mask.val()).any();
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::common::testutil::tick;

    fn uut() -> ConnTable {
        let mut u = ConnTable::new(3);
        u.clock.connect();
        u.reset.connect();
        u.wr_valid.connect();
        u.wr_idx.connect();
        u.wr_used.connect();
        u.wr_local_ip.connect();
        u.wr_peer_ip.connect();
        u.wr_local_port.connect();
        u.wr_peer_port.connect();
        u.wr_mode.connect();
        u.wr_mpa.connect();
        u.wr_rcv_nxt.connect();
        u.wr_rcv_wnd.connect();
        u.wr_snd_una.connect();
        u.wr_snd_nxt.connect();
        u.lk_valid.connect();
        u.lk_local_ip.connect();
        u.lk_peer_ip.connect();
        u.lk_local_port.connect();
        u.lk_peer_port.connect();
        u.up_valid.connect();
        u.up_idx.connect();
        u.up_rcv_nxt.connect();
        u.up_snd_una.connect();
        u.rw_valid.connect();
        u.rw_idx.connect();
        u.rw_rcv_nxt.connect();
        u.rd_idx.connect();
        u.r2_idx.connect();
        u.r3_idx.connect();
        u.wr_snd_wscale.connect();
        u.wr_snd_wnd.connect();
        u.up_wnd_valid.connect();
        u.up_snd_wnd.connect();
        u.sn_valid.connect();
        u.sn_idx.connect();
        u.sn_snd_nxt.connect();
        u.connect_all();
        u
    }

    fn write(u: &mut ConnTable, idx: u64, port: u64, rcv_nxt: u64) {
        u.wr_valid.next = true;
        u.wr_idx.next = idx.into();
        u.wr_used.next = true;
        u.wr_local_ip.next = 0x0A00_0001.into();
        u.wr_peer_ip.next = 0x0A00_0002.into();
        u.wr_local_port.next = 7174.into();
        u.wr_peer_port.next = port.into();
        u.wr_mode.next = 2.into();
        u.wr_rcv_nxt.next = rcv_nxt.into();
        tick!(*u);
        u.wr_valid.next = false;
    }

    /// Lookup of `port` → (clocks until res_valid, hit, idx, rcv_nxt).
    fn lookup(u: &mut ConnTable, port: u64) -> (usize, bool, u64, u64) {
        u.lk_valid.next = true;
        u.lk_local_ip.next = 0x0A00_0001.into();
        u.lk_peer_ip.next = 0x0A00_0002.into();
        u.lk_local_port.next = 7174.into();
        u.lk_peer_port.next = port.into();
        for n in 1..10 {
            tick!(*u);
            u.lk_valid.next = false;
            if u.res_valid.val() {
                return (
                    n,
                    u.res_hit.val(),
                    u.res_idx.val().to_u64(),
                    u.res_rcv_nxt.val().to_u64(),
                );
            }
        }
        panic!("no result");
    }

    /// The sequencer's rewind: writes `rcv_nxt` only (SND.UNA kept), holds
    /// the fast path's update off for its clock (`up_ready` low), and
    /// yields to a firmware write (`rw_ready` low, the rewind waits).
    #[test]
    fn rewind_writes_rcv_nxt_only_and_waits_for_the_firmware() {
        let mut u = uut();
        u.reset.next = true;
        tick!(u);
        u.reset.next = false;
        write(&mut u, 3, 100, 11);
        u.up_valid.next = true;
        u.up_idx.next = 3.into();
        u.up_rcv_nxt.next = 500.into();
        u.up_snd_una.next = 77.into();
        tick!(u);
        u.up_valid.next = false;
        assert_eq!(lookup(&mut u, 100).3, 500);
        // rewind and an update in one clock: the update is held off
        u.rw_valid.next = true;
        u.rw_idx.next = 3.into();
        u.rw_rcv_nxt.next = 400.into();
        u.up_valid.next = true;
        u.up_rcv_nxt.next = 900.into();
        tick!(u);
        assert!(u.rw_ready.val() && !u.up_ready.val());
        u.rw_valid.next = false;
        u.up_valid.next = false;
        tick!(u);
        assert_eq!(lookup(&mut u, 100).3, 400);
        u.rd_idx.next = 3.into();
        tick!(u);
        assert_eq!(u.rd_snd_una.val().to_u64(), 77, "SND.UNA kept");
        // a firmware write in the rewind's clock wins; the rewind waits
        u.rw_valid.next = true;
        u.rw_rcv_nxt.next = 450.into();
        write(&mut u, 3, 100, 12);
        tick!(u);
        assert_eq!(
            u.rd_rcv_nxt.val().to_u64(),
            12,
            "the firmware's write first"
        );
        u.rw_valid.next = false;
        assert_eq!(lookup(&mut u, 100).3, 450, "then the rewind");
    }

    #[test]
    fn lookup_update_and_priority() {
        let mut u = uut();
        u.reset.next = true;
        tick!(u);
        u.reset.next = false;
        write(&mut u, 3, 100, 11);
        write(&mut u, 5, 200, 22);
        write(&mut u, 9, 300, 33); // out of range (8 entries): ignored
        assert_eq!(lookup(&mut u, 100), (2, true, 3, 11));
        assert_eq!(lookup(&mut u, 200), (2, true, 5, 22));
        assert!(!lookup(&mut u, 300).1);
        assert!(!lookup(&mut u, 101).1);
        // fast-path update; a firmware write in the same clock wins
        u.up_valid.next = true;
        u.up_idx.next = 3.into();
        u.up_rcv_nxt.next = 12.into();
        assert!(u.up_ready.val());
        tick!(u);
        u.up_idx.next = 5.into();
        u.up_rcv_nxt.next = 99.into();
        write(&mut u, 5, 200, 23);
        u.up_valid.next = false;
        assert_eq!(lookup(&mut u, 100).3, 12);
        assert_eq!(lookup(&mut u, 200).3, 23);
        // read port
        u.rd_idx.next = 3.into();
        tick!(u);
        assert!(u.rd_used.val());
        assert_eq!(u.rd_rcv_nxt.val().to_u64(), 12);
        // TX snd_nxt and the fast path's window in the same clock: both land
        u.up_valid.next = true;
        u.up_idx.next = 3.into();
        u.up_rcv_nxt.next = 12.into();
        u.up_snd_una.next = 7.into();
        u.up_wnd_valid.next = true;
        u.up_snd_wnd.next = 4096.into();
        u.sn_valid.next = true;
        u.sn_idx.next = 3.into();
        u.sn_snd_nxt.next = 1234.into();
        tick!(u);
        u.up_valid.next = false;
        u.sn_valid.next = false;
        tick!(u);
        assert_eq!(u.rd_snd_una.val().to_u64(), 7);
        assert_eq!(u.rd_snd_nxt.val().to_u64(), 1234);
        assert_eq!(u.rd_snd_wnd.val().to_u64(), 4096);
        // SND.NXT advances only (a replayed frame's end is behind it)
        for (v, want) in [
            (1000u64, 1234u64),
            (1234, 1234),
            (1300, 1300),
            (0x8000_1300, 1300),
        ] {
            u.sn_valid.next = true;
            u.sn_idx.next = 3.into();
            u.sn_snd_nxt.next = v.into();
            tick!(u);
            u.sn_valid.next = false;
            tick!(u);
            assert_eq!(u.rd_snd_nxt.val().to_u64(), want, "sn {v:#x}");
        }
        // second read port: mode and SND.UNA
        u.r2_idx.next = 3.into();
        tick!(u);
        assert_eq!(u.r2_snd_una.val().to_u64(), 7);
        assert_eq!(u.r2_mode.val().to_u64(), u.rd_mode.val().to_u64());
        u.r2_idx.next = 9.into();
        tick!(u);
        assert_eq!(u.r2_mode.val().to_u64(), 0, "out of range reads Free");
        // third read port: the same fields, independently addressed
        u.r3_idx.next = 3.into();
        tick!(u);
        assert_eq!(u.r3_snd_una.val().to_u64(), 7);
        assert_eq!(u.r2_mode.val().to_u64(), 0, "r2 still reads index 9");
        u.r3_idx.next = 9.into();
        tick!(u);
        assert_eq!(u.r3_snd_una.val().to_u64(), 0, "out of range reads 0");
        // up without the window flag keeps the window; sn is ignored while
        // a firmware write is in the same clock
        u.up_valid.next = true;
        u.up_wnd_valid.next = false;
        u.up_snd_wnd.next = 1.into();
        tick!(u);
        u.up_valid.next = false;
        tick!(u);
        assert_eq!(u.rd_snd_wnd.val().to_u64(), 4096);
        u.sn_valid.next = true;
        u.sn_idx.next = 5.into();
        u.sn_snd_nxt.next = 999.into();
        write(&mut u, 3, 100, 12);
        u.sn_valid.next = false;
        u.rd_idx.next = 5.into();
        tick!(u);
        tick!(u);
        assert_ne!(u.rd_snd_nxt.val().to_u64(), 999);
        u.rd_idx.next = 3.into();
        tick!(u);
        tick!(u);
        assert_eq!(
            u.rd_snd_wnd.val().to_u64(),
            0,
            "firmware write sets the window"
        );
        // reset forgets every entry
        u.reset.next = true;
        tick!(u);
        u.reset.next = false;
        assert!(!lookup(&mut u, 100).1);
    }

    /// `ConnInProfile`: the board (n = 16 connections) refuses n..=255 and
    /// takes 0..n; the co-simulation profile takes every 8-bit index.
    #[test]
    fn conn_in_profile_follows_the_profile() {
        use crate::profile::{PROFILES, PR_BOARD, PR_SIM};
        let mut b = ConnInProfile::<{ PR_BOARD }>::default();
        b.idx.connect();
        b.connect_all();
        let mut s = ConnInProfile::<{ PR_SIM }>::default();
        s.idx.connect();
        s.connect_all();
        let n = 1u64 << PROFILES[PR_BOARD].conn_log2;
        assert!(n < 256);
        for i in 0..256u64 {
            b.idx.next = i.into();
            s.idx.next = i.into();
            assert!(simulate(&mut b, 10) && simulate(&mut s, 10));
            assert_eq!(b.beyond.val(), i >= n, "board, index {i}");
            assert!(!s.beyond.val(), "sim, index {i}");
        }
    }
}
