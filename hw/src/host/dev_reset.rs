//! `dev_reset`: the device reset sequencer (BAR0 `CTRL_RESET`) and the
//! datapath gate (BAR0 `CTRL_ENABLE`).
//!
//! **Gate.** `en` (BAR0 `CTRL_ENABLE`, or 1 when the core's `ctrl_en_gate`
//! pin is low) opens the datapath's two doors for new work: `db_open`
//! (QP and CQ doorbell writes reach the datapath; `host_regs` drops the
//! others) and `rx_pass` (frames from the MAC enter the receive pipeline).
//! `rx_pass` changes only between frames: a frame whose first beat came
//! while the door was open passes whole, one whose first beat came while it
//! was closed is dropped whole. Work already taken goes on.
//!
//! **Sequence** (`go`: one-clock pulse, the `CTRL_RESET` write; ignored
//! while `busy`). `busy` is high from the clock after `go` to the end:
//!
//! | state | what | leaves when |
//! |---|---|---|
//! | 1 quiesce | doors closed (no doorbell, no new frame, no new DMA read request); a DMA write request, a `mac_tx` frame and a `raw_tx` frame already started go on to their end, none starts (`wr_hold`, `tx_hold`) | the three streams are between requests / frames |
//! | 2 reset | `dp_rst`: every datapath block in reset; DMA read completions still due are taken and dropped (`cpl_sink`), none reaches a block | at least 4 clocks, and no DMA read outstanding (`rd_out` = 0: +1 per request taken, -1 per completion `last`) |
//! | 3 clear | `clr_go` (first clock): the firmware port writes a zero entry into every connection, QP, CQ and TPT entry (`clr_busy`); doors and streams still held | the walk is done |
//! | 4 reset | `dp_rst` again, 4 clocks: whatever the walk's writes queued is gone | then idle, `busy` low |
//!
//! Nothing is written to host memory after `busy` falls: the last DMA write
//! that left the core is one started before the reset (in state 1); every
//! write request not started by then is dropped with the blocks' state. The
//! reset itself (`dp_rst`) is two pulses, so every block restarts from its
//! reset state with its tables cleared by the walk between them.
//!
//! Duration: quiesce (the longest stream in progress: a 4 KiB DMA write is
//! 513 beats, a 9018-octet frame 1128) + reset (4 clocks, or until the
//! last DMA read completion, one read round trip) + clear (3 clocks per
//! entry) + 4.

use rust_hdl::prelude::*;

#[derive(LogicBlock, Default)]
pub struct DevReset {
    pub clock: Signal<In, Clock>,
    /// Power-on reset (the core's `reset` pin): idle, doors per `en`.
    pub reset: Signal<In, Bit>,
    /// `CTRL_RESET` written (one clock).
    pub go: Signal<In, Bit>,
    /// The datapath is enabled (`CTRL_ENABLE`).
    pub en: Signal<In, Bit>,
    // DMA write stream at the core's port (after `wr_hold`)
    pub wr_valid: Signal<In, Bit>,
    pub wr_ready: Signal<In, Bit>,
    pub wr_hdr: Signal<In, Bit>,
    pub wr_last: Signal<In, Bit>,
    // DMA read requests and completions at the core's port (after the gates)
    pub rd_req_valid: Signal<In, Bit>,
    pub rd_req_ready: Signal<In, Bit>,
    pub rd_cpl_valid: Signal<In, Bit>,
    pub rd_cpl_ready: Signal<In, Bit>,
    pub rd_cpl_last: Signal<In, Bit>,
    // MAC TX (after `tx_hold`) and the firmware's raw frames
    pub tx_valid: Signal<In, Bit>,
    pub tx_ready: Signal<In, Bit>,
    pub tx_last: Signal<In, Bit>,
    pub raw_valid: Signal<In, Bit>,
    pub raw_ready: Signal<In, Bit>,
    pub raw_last: Signal<In, Bit>,
    // MAC RX (to find frame starts)
    pub mac_rx_valid: Signal<In, Bit>,
    pub mac_rx_last: Signal<In, Bit>,
    /// The firmware port's table walk is running.
    pub clr_busy: Signal<In, Bit>,
    /// A reset sequence is running (BAR0 `CTRL_RESET` reads 1).
    pub busy: Signal<Out, Bit>,
    /// Reset of the datapath blocks (OR the core's `reset` into it).
    pub dp_rst: Signal<Out, Bit>,
    /// The MAC RX beat of this clock enters the receive pipeline.
    pub rx_pass: Signal<Out, Bit>,
    /// Doorbell writes reach the datapath.
    pub db_open: Signal<Out, Bit>,
    /// Hold the DMA write stream (between requests only).
    pub wr_hold: Signal<Out, Bit>,
    /// Hold `mac_tx_*` (between frames only).
    pub tx_hold: Signal<Out, Bit>,
    /// Hold DMA read requests.
    pub rd_hold: Signal<Out, Bit>,
    /// Take every DMA read completion beat and drop it.
    pub cpl_sink: Signal<Out, Bit>,
    /// Start the firmware port's table walk (one clock).
    pub clr_go: Signal<Out, Bit>,
    /// `go` taken (one clock): the firmware port raises its reset notice.
    pub started: Signal<Out, Bit>,
    /// 0 idle, 1 quiesce, 2 reset, 3 clear, 4 reset.
    st: DFF<Bits<3>>,
    cnt: DFF<Bits<4>>,
    clr_p: DFF<Bit>,
    rd_out: DFF<Bits<9>>,
    wr_mid: DFF<Bit>,
    tx_mid: DFF<Bit>,
    raw_mid: DFF<Bit>,
    rx_mid: DFF<Bit>,
    rx_ok: DFF<Bit>,
    rd_fire: Signal<Local, Bit>,
    cpl_fire: Signal<Local, Bit>,
}

impl Logic for DevReset {
    #[hdl_gen]
    fn update(&mut self) {
        dff_setup!(self, clock, st, cnt, clr_p, rd_out, wr_mid, tx_mid, raw_mid, rx_mid, rx_ok);
        self.busy.next = self.st.q.val() != 0;
        self.dp_rst.next = (self.st.q.val() == 2) | (self.st.q.val() == 4);
        self.cpl_sink.next = self.st.q.val() == 2;
        self.rd_hold.next = self.st.q.val() != 0;
        self.wr_hold.next = (self.st.q.val() != 0) & !self.wr_mid.q.val();
        self.tx_hold.next = (self.st.q.val() != 0) & !self.tx_mid.q.val();
        self.db_open.next = self.en.val() & (self.st.q.val() == 0);
        self.clr_go.next = self.clr_p.q.val();
        self.started.next = self.go.val() & (self.st.q.val() == 0);
        self.clr_p.d.next = false;

        // ---- streams in progress
        if self.wr_valid.val() & self.wr_ready.val() {
            if self.wr_hdr.val() {
                self.wr_mid.d.next = true;
            } else if self.wr_last.val() {
                self.wr_mid.d.next = false;
            }
        }
        if self.tx_valid.val() & self.tx_ready.val() {
            self.tx_mid.d.next = !self.tx_last.val();
        }
        if self.raw_valid.val() & self.raw_ready.val() {
            self.raw_mid.d.next = !self.raw_last.val();
        }
        self.rd_fire.next = self.rd_req_valid.val() & self.rd_req_ready.val();
        self.cpl_fire.next =
            self.rd_cpl_valid.val() & self.rd_cpl_ready.val() & self.rd_cpl_last.val();
        if self.rd_fire.val() & !self.cpl_fire.val() {
            self.rd_out.d.next = self.rd_out.q.val() + 1;
        }
        if !self.rd_fire.val() & self.cpl_fire.val() {
            self.rd_out.d.next = self.rd_out.q.val() - 1;
        }

        // ---- MAC RX door: decided at each frame's first beat
        self.rx_pass.next = self.rx_ok.q.val();
        if !self.rx_mid.q.val() {
            self.rx_pass.next = self.en.val() & (self.st.q.val() == 0);
        }
        if self.mac_rx_valid.val() {
            self.rx_mid.d.next = !self.mac_rx_last.val();
            if !self.rx_mid.q.val() {
                self.rx_ok.d.next = self.en.val() & (self.st.q.val() == 0);
            }
        }
        if self.st.q.val() != 0 {
            // a frame cut by the reset is not resumed after it
            self.rx_ok.d.next = false;
            if self.rx_mid.q.val() {
                self.rx_pass.next = false;
            }
        }

        // ---- sequence
        if self.cnt.q.val() != 15 {
            self.cnt.d.next = self.cnt.q.val() + 1;
        }
        match self.st.q.val().index() {
            0 => {
                if self.go.val() {
                    self.st.d.next = 1.into();
                }
            }
            1 => {
                if !self.wr_mid.q.val() & !self.tx_mid.q.val() & !self.raw_mid.q.val() {
                    self.st.d.next = 2.into();
                    self.cnt.d.next = 0.into();
                }
            }
            2 => {
                if (self.cnt.q.val() >= 3) & (self.rd_out.q.val() == 0) {
                    self.st.d.next = 3.into();
                    self.cnt.d.next = 0.into();
                    self.clr_p.d.next = true;
                }
            }
            3 => {
                if (self.cnt.q.val() >= 3) & !self.clr_busy.val() {
                    self.st.d.next = 4.into();
                    self.cnt.d.next = 0.into();
                }
            }
            _ => {
                if self.cnt.q.val() >= 3 {
                    self.st.d.next = 0.into();
                }
            }
        }

        if self.reset.val() {
            self.st.d.next = 0.into();
            self.cnt.d.next = 0.into();
            self.clr_p.d.next = false;
            self.rd_out.d.next = 0.into();
            self.wr_mid.d.next = false;
            self.tx_mid.d.next = false;
            self.raw_mid.d.next = false;
            self.rx_mid.d.next = false;
            self.rx_ok.d.next = false;
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::common::testutil::tick;

    fn unit() -> DevReset {
        let mut u = DevReset::default();
        u.clock.connect();
        u.reset.connect();
        u.go.connect();
        u.en.connect();
        u.wr_valid.connect();
        u.wr_ready.connect();
        u.wr_hdr.connect();
        u.wr_last.connect();
        u.rd_req_valid.connect();
        u.rd_req_ready.connect();
        u.rd_cpl_valid.connect();
        u.rd_cpl_ready.connect();
        u.rd_cpl_last.connect();
        u.tx_valid.connect();
        u.tx_ready.connect();
        u.tx_last.connect();
        u.raw_valid.connect();
        u.raw_ready.connect();
        u.raw_last.connect();
        u.mac_rx_valid.connect();
        u.mac_rx_last.connect();
        u.clr_busy.connect();
        u.connect_all();
        u.reset.next = true;
        tick!(u);
        tick!(u);
        u.reset.next = false;
        u.en.next = true;
        tick!(u);
        u
    }

    /// The sequence waits for the DMA write in progress and the DMA read
    /// outstanding, resets twice around the table walk, holds every door
    /// while busy and reopens them after.
    #[test]
    fn sequence_drains_then_resets_and_clears() {
        let mut u = unit();
        assert!(!u.busy.val() && u.db_open.val() && !u.dp_rst.val());
        // a read request goes out, a write request starts (header + 1 of 2 beats)
        u.rd_req_valid.next = true;
        u.rd_req_ready.next = true;
        u.wr_valid.next = true;
        u.wr_ready.next = true;
        u.wr_hdr.next = true;
        tick!(u);
        u.rd_req_valid.next = false;
        u.wr_hdr.next = false;
        tick!(u);
        u.wr_valid.next = false;
        // CTRL_RESET
        u.go.next = true;
        settle(&mut u);
        assert!(u.started.val());
        tick!(u);
        u.go.next = false;
        tick!(u);
        assert!(u.busy.val() && !u.db_open.val() && u.rd_hold.val());
        // the write in progress may finish: not held; nothing resets yet
        for _ in 0..20 {
            assert!(!u.wr_hold.val() && !u.dp_rst.val());
            tick!(u);
        }
        u.wr_valid.next = true;
        u.wr_last.next = true;
        tick!(u);
        u.wr_valid.next = false;
        u.wr_last.next = false;
        tick!(u);
        // between requests now: held; reset while the read is due
        assert!(u.wr_hold.val() && u.dp_rst.val() && u.cpl_sink.val());
        for _ in 0..30 {
            tick!(u);
            assert!(u.dp_rst.val(), "reset held until the read completion");
        }
        // its completion (two beats) is sunk
        u.rd_cpl_valid.next = true;
        u.rd_cpl_ready.next = true;
        tick!(u);
        u.rd_cpl_last.next = true;
        tick!(u);
        u.rd_cpl_valid.next = false;
        u.rd_cpl_last.next = false;
        tick!(u);
        // the walk
        assert!(u.clr_go.val() && !u.dp_rst.val());
        tick!(u);
        u.clr_busy.next = true;
        for _ in 0..50 {
            tick!(u);
            assert!(u.busy.val() && !u.dp_rst.val() && u.wr_hold.val() && u.rd_hold.val());
        }
        u.clr_busy.next = false;
        tick!(u);
        let mut n = 0;
        while u.dp_rst.val() {
            n += 1;
            tick!(u);
        }
        assert_eq!(n, 4);
        assert!(!u.busy.val() && u.db_open.val() && !u.wr_hold.val() && !u.rd_hold.val());
    }

    /// Evaluates this clock's outputs for the inputs set (no edge).
    fn settle(u: &mut DevReset) {
        u.clock.next = false.into();
        assert!(simulate(&mut *u, 1000), "did not settle");
    }

    /// Presents one MAC RX beat: whether it passes, then the edge.
    fn rx_beat(u: &mut DevReset, last: bool) -> bool {
        u.mac_rx_valid.next = true;
        u.mac_rx_last.next = last;
        settle(u);
        let pass = u.rx_pass.val();
        tick!(*u);
        u.mac_rx_valid.next = false;
        u.mac_rx_last.next = false;
        pass
    }

    /// The MAC RX door opens and closes between frames only; `en` low
    /// drops whole frames and keeps doorbells out.
    #[test]
    fn rx_door_changes_between_frames() {
        let mut u = unit();
        // a frame starts while enabled, `en` falls in its middle: it passes whole
        assert!(rx_beat(&mut u, false));
        u.en.next = false;
        assert!(rx_beat(&mut u, false));
        assert!(!u.db_open.val());
        assert!(rx_beat(&mut u, true));
        // the next frame is dropped whole, even if `en` rises in its middle
        assert!(!rx_beat(&mut u, false));
        u.en.next = true;
        assert!(!rx_beat(&mut u, false));
        assert!(u.db_open.val());
        assert!(!rx_beat(&mut u, true));
        // and the one after passes
        assert!(rx_beat(&mut u, false));
        assert!(rx_beat(&mut u, true));
        // a reset drops the rest of a frame it cuts, and frames while busy
        assert!(rx_beat(&mut u, false));
        u.go.next = true;
        tick!(u);
        u.go.next = false;
        assert!(!rx_beat(&mut u, true));
        assert!(!rx_beat(&mut u, true));
    }
}
