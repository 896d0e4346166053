//! Protection domains. A PD is a number the driver hands out; the device
//! compares the PD of a QP with the PD of every region it touches
//! (`TptEntry::check`, RFC 5040 §7). Regions and QPs are created from a PD.

use crate::bus::Bus;
use crate::context::Context;

/// A protection domain.
pub struct Pd<'a, B: Bus> {
    pub(crate) ctx: &'a Context<B>,
    pub(crate) pdn: u32,
}

impl<'a, B: Bus> Pd<'a, B> {
    pub(crate) fn new(ctx: &'a Context<B>, pdn: u32) -> Self {
        Pd { ctx, pdn }
    }

    /// The PD number the device sees.
    pub fn pdn(&self) -> u32 {
        self.pdn
    }

    /// The context.
    pub fn context(&self) -> &'a Context<B> {
        self.ctx
    }
}

impl<B: Bus> core::fmt::Debug for Pd<'_, B> {
    fn fmt(&self, f: &mut core::fmt::Formatter<'_>) -> core::fmt::Result {
        f.debug_struct("Pd").field("pdn", &self.pdn).finish()
    }
}
