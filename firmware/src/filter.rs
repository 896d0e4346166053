//! The connection filter: an ordered list of [`FilterRule`]s (tried in
//! index order, first match wins), a default action for connections no rule
//! matches, and a hit counter per rule (and one for the default).
//!
//! The firmware asks the filter before it keeps *any* state for a
//! connection: a denied SYN is answered with a RST (`DenyReset`) or dropped
//! (`DenyDrop`) without a backlog entry or a connection context, and an
//! active connect to a denied peer fails with `MboxStatus::Denied`.

use rnic_wire::abi::mailbox::{FilterAction, FilterRule, MboxStatus};

/// `FilterStats` index that reads the default action's hit counter.
pub const DEFAULT_INDEX: u16 = 0xFFFF;

/// The rule list with `N` slots.
#[derive(Debug, Clone)]
pub struct Filter<const N: usize> {
    rules: [Option<FilterRule>; N],
    hits: [u64; N],
    default: FilterAction,
    default_hits: u64,
}

impl<const N: usize> Default for Filter<N> {
    fn default() -> Self {
        Self::new()
    }
}

impl<const N: usize> Filter<N> {
    /// No rules; the default allows.
    pub const fn new() -> Self {
        Filter {
            rules: [None; N],
            hits: [0; N],
            default: FilterAction::Allow,
            default_hits: 0,
        }
    }

    /// Back to [`Self::new`]'s state, in place (no table-sized temporary on
    /// the stack: the RISC-V image's stack is its data memory).
    pub fn reset(&mut self) {
        self.clear();
        self.default = FilterAction::Allow;
        self.default_hits = 0;
    }

    /// Sets rule `index` (and zeroes its counter).
    pub fn set(&mut self, index: u16, rule: FilterRule) -> Result<(), MboxStatus> {
        let i = index as usize;
        if i >= N || rule.prefix_len > 32 {
            return Err(MboxStatus::BadParam);
        }
        if rule.local_ports.0 > rule.local_ports.1 || rule.peer_ports.0 > rule.peer_ports.1 {
            return Err(MboxStatus::BadParam);
        }
        self.rules[i] = Some(rule);
        self.hits[i] = 0;
        Ok(())
    }

    /// Removes every rule (the default stays).
    pub fn clear(&mut self) {
        self.rules = [None; N];
        self.hits = [0; N];
    }

    /// Sets the default action.
    pub fn set_default(&mut self, action: FilterAction) {
        self.default = action;
    }

    /// The default action.
    pub fn default_action(&self) -> FilterAction {
        self.default
    }

    /// Hit counter of rule `index` ([`DEFAULT_INDEX`]: the default).
    pub fn stats(&self, index: u16) -> Result<u64, MboxStatus> {
        if index == DEFAULT_INDEX {
            return Ok(self.default_hits);
        }
        let i = index as usize;
        match self.rules.get(i) {
            Some(Some(_)) => Ok(self.hits[i]),
            Some(None) => Err(MboxStatus::NotFound),
            None => Err(MboxStatus::BadParam),
        }
    }

    /// The action for a connection, counting the hit.
    pub fn check(&mut self, peer_ip: u32, local_port: u16, peer_port: u16) -> FilterAction {
        for (i, r) in self.rules.iter().enumerate() {
            if let Some(r) = r {
                if r.matches(peer_ip, local_port, peer_port) {
                    self.hits[i] += 1;
                    return r.action;
                }
            }
        }
        self.default_hits += 1;
        self.default
    }

    /// The action without counting (for invariant checks).
    pub fn peek(&self, peer_ip: u32, local_port: u16, peer_port: u16) -> FilterAction {
        self.rules
            .iter()
            .flatten()
            .find(|r| r.matches(peer_ip, local_port, peer_port))
            .map_or(self.default, |r| r.action)
    }
}
