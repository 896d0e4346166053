//! The target description (`probe/rnic.yaml`) in a probe-rs registry.

use probe_rs::config::{Registry, RegistryError};

/// The chip name probe-rs knows the core by.
pub const CHIP: &str = "rnic-rv32im";

/// The description itself, as `probe-rs --chip-description-path` reads it.
pub const DESCRIPTION: &str = include_str!("../rnic.yaml");

/// A registry holding only our target.
pub fn registry() -> Result<Registry, RegistryError> {
    let mut r = Registry::new();
    r.add_target_family_from_yaml(DESCRIPTION)?;
    Ok(r)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn description_parses_with_the_memory_map() {
        let r = registry().expect("rnic.yaml parses");
        let t = r.get_target_by_name(CHIP).expect("the chip is there");
        let ram: Vec<_> = t
            .memory_map
            .iter()
            .filter_map(|m| m.as_ram_region())
            .map(|m| (m.range.start, m.range.end))
            .collect();
        // firmware/rnic-fw.x's IMEM and DMEM.
        assert_eq!(ram, [(0, 0x2_0000), (0x1000_0000, 0x1001_0000)]);
    }
}
