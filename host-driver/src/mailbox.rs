//! The command mailbox, host side (`abi::csr::MBOX_*`, `abi::mailbox`).
//!
//! One command at a time: wait until `MBOX_BUSY` is clear, note `MBOX_SEQ`,
//! write the parameters (encoded by `rnic_wire`'s [`Command::emit`]) into
//! `MBOX_DATA` as 32-bit words, their length into `MBOX_LEN`, the opcode into
//! `MBOX_CTRL`; then wait until `MBOX_BUSY` is clear and `MBOX_SEQ` has moved
//! by exactly one, and read `MBOX_STATUS`, `MBOX_LEN` and the result. Every
//! value read is checked: an undefined status, a result longer than the
//! window or than the caller's buffer, a sequence number that jumps, or no
//! answer before the deadline is a typed error, never a panic or an
//! out-of-bounds access.

use crate::bus::Bus;
use crate::error::{DeviceError, Error, InputError, Result};
use core::time::Duration;
use rnic_wire::abi::csr::{
    INT_MBOX_DONE, INT_STATUS, MBOX_BUSY, MBOX_CTRL, MBOX_DATA, MBOX_DATA_SIZE, MBOX_LEN, MBOX_SEQ,
    MBOX_STATUS,
};
use rnic_wire::abi::mailbox::{Command, CommandResult, MboxStatus};

/// How long a command may take by default (the firmware is a soft core
/// polling its mailbox; connection commands may send frames).
pub const DEFAULT_TIMEOUT: Duration = Duration::from_millis(100);
/// How long to sleep between polls of `MBOX_CTRL` when no interrupt comes.
pub const POLL_INTERVAL: Duration = Duration::from_micros(2);

/// The host side of the mailbox.
#[derive(Debug)]
pub struct Mailbox {
    timeout: Duration,
    commands: u64,
}

impl Mailbox {
    /// A mailbox whose commands time out after `timeout`.
    pub fn new(timeout: Duration) -> Self {
        Mailbox {
            timeout,
            commands: 0,
        }
    }

    /// Commands completed so far.
    pub fn commands(&self) -> u64 {
        self.commands
    }

    /// Runs `cmd`; its result octets go into `out` and their number is
    /// returned. A status other than `Ok` is [`Error::Refused`].
    pub fn execute<B: Bus>(&mut self, bus: &B, cmd: &Command, out: &mut [u8]) -> Result<usize> {
        let mut data = [0u8; MBOX_DATA_SIZE as usize];
        let len = cmd
            .emit(&mut data)
            .map_err(|_| Error::InvalidInput(InputError::Encoding))?;
        let deadline = bus.now().saturating_add(self.timeout);

        // A command left running (e.g. after an earlier timeout) must finish first.
        self.wait_until(bus, deadline, || bus.read32(MBOX_CTRL) & MBOX_BUSY == 0)?;
        let base = bus.read32(MBOX_SEQ);
        let expected = base.wrapping_add(1);

        for (k, w) in data[..len.next_multiple_of(4)].chunks_exact(4).enumerate() {
            let v = u32::from_le_bytes([w[0], w[1], w[2], w[3]]);
            bus.write32(MBOX_DATA + 4 * k as u32, v);
        }
        bus.write32(MBOX_LEN, len as u32);
        bus.write32(MBOX_CTRL, cmd.opcode() as u32);

        let mut seq_err = None;
        self.wait_until(bus, deadline, || {
            if bus.read32(MBOX_CTRL) & MBOX_BUSY != 0 {
                return false;
            }
            let seq = bus.read32(MBOX_SEQ);
            if seq == expected {
                true
            } else if seq == base {
                false // not picked up yet
            } else {
                seq_err = Some(seq);
                true
            }
        })?;
        if let Some(found) = seq_err {
            return Err(DeviceError::MailboxSequence { expected, found }.into());
        }
        bus.write32(INT_STATUS, INT_MBOX_DONE);
        self.commands += 1;

        let raw = bus.read32(MBOX_STATUS);
        let status = MboxStatus::from_u32(raw).map_err(|_| DeviceError::MailboxStatus(raw))?;
        if status != MboxStatus::Ok {
            return Err(Error::Refused(cmd.opcode(), status));
        }
        let n = bus.read32(MBOX_LEN);
        if n > MBOX_DATA_SIZE || n as usize > out.len() {
            return Err(DeviceError::MailboxLength(n).into());
        }
        let n = n as usize;
        for k in 0..n.div_ceil(4) {
            let w = bus.read32(MBOX_DATA + 4 * k as u32).to_le_bytes();
            let end = (4 * k + 4).min(n);
            out[4 * k..end].copy_from_slice(&w[..end - 4 * k]);
        }
        Ok(n)
    }

    /// Runs `cmd` whose result is `want` u32 words (`CommandResult`).
    pub fn execute_words<B: Bus>(
        &mut self,
        bus: &B,
        cmd: &Command,
        want: usize,
    ) -> Result<CommandResult> {
        let mut out = [0u8; 4 * CommandResult::MAX_WORDS];
        let n = self.execute(bus, cmd, &mut out)?;
        if n != 4 * want {
            return Err(DeviceError::MailboxLength(n as u32).into());
        }
        CommandResult::parse(&out[..n]).map_err(|_| DeviceError::MailboxResult(cmd.opcode()).into())
    }

    fn wait_until<B: Bus>(
        &self,
        bus: &B,
        deadline: Duration,
        mut done: impl FnMut() -> bool,
    ) -> Result<()> {
        loop {
            if done() {
                return Ok(());
            }
            let now = bus.now();
            if now >= deadline {
                return Err(Error::Timeout);
            }
            bus.wait_interrupt((deadline - now).min(POLL_INTERVAL));
        }
    }
}
