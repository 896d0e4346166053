//! probe-rs debugs the firmware's core in co-simulation, through the core's
//! JTAG pins as on the board: node A of a two-node `--fw cpu` world gets
//! a JTAG adapter on its CPU ([`rnic_sim::jtag`]); in another thread,
//! probe-rs (as a library, with [`rnic_probe::sim_probe::SimProbe`] and the
//! target description `rnic.yaml`) attaches, halts the core, resets it
//! (loading the firmware ELF into instruction and data memory first, in
//! the long version), stops at a breakpoint on `fw_main`, single-steps,
//! reads registers and memory and resumes; then it reads the firmware's
//! defmt log over RTT (`rnic-probe log`'s path) while the node connects
//! to B and moves data, byte-exact.
//!
//! What is checked comes from the ELF (symbols, loaded segments), not from
//! the RTL: `sp` at `fw_main`'s first instruction is `_stack_top`; the
//! initial data `_start` copied to data memory equals the ELF's `.data`;
//! instruction memory read back equals the ELF's code; a step moves the pc
//! to the next instruction; the log names the connection; the core's
//! retirement trace counts no trap.
//!
//! Loading the 94 KB image takes 10.8 M node clocks (57 TCK cycles per
//! word, 8 clocks per TCK cycle), about 3 minutes of co-simulation: the
//! version that loads is run by `make debug-sim`, the one in `make test`
//! resets into the image already there (docs/debug.md has the figures).

use std::path::{Path, PathBuf};
use std::sync::mpsc::{channel, Receiver, Sender};

use probe_rs::probe::Probe;
use probe_rs::{CoreStatus, HaltReason, MemoryInterface, Permissions};
use rnic_probe::ops::{self, TIMEOUT};
use rnic_probe::sim_probe::SimProbe;
use rnic_probe::target;
use rnic_sim::fw_log::FwLog;
use rnic_sim::link::LinkConfig;
use rnic_sim::node::FwKind;
use rnic_sim::rtl_run::{connected_pair, world_pair_with, write_a_to_b};

/// A symbol's address in the ELF.
fn symbol(elf: &[u8], name: &'static str) -> u64 {
    ops::symbol(elf, name).unwrap_or_else(|e| panic!("{e}"))
}

/// A section's address and contents.
fn section(elf: &[u8], name: &str) -> (u64, Vec<u8>) {
    use object::{Object, ObjectSection};
    let f = object::File::parse(elf).expect("the firmware ELF parses");
    let s = f
        .section_by_name(name)
        .unwrap_or_else(|| panic!("no section {name} in the firmware ELF"));
    (s.address(), s.data().expect("section data").to_vec())
}

/// What the debugger saw, for the test thread to check.
#[derive(Debug)]
struct Seen {
    entry_pc: u64,
    bp_pc: u64,
    bp_reason: CoreStatus,
    sp_at_bp: u32,
    step_pc: u64,
    text: Vec<u8>,
    data: Vec<u8>,
    running_after: bool,
}

/// The debugging session, in the debugger's thread: `resumed` is sent
/// once the core runs the loaded image again; then the firmware's RTT log
/// is read (as `rnic-probe log` does on the board) until `stop` arrives.
fn debug_session(
    cable: rnic_sim::jtag::JtagCable,
    elf_path: &Path,
    load: bool,
    resumed: Sender<()>,
    stop: Receiver<()>,
) -> Result<(Seen, Vec<String>), String> {
    let elf = std::fs::read(elf_path).map_err(|e| e.to_string())?;
    let registry = target::registry().map_err(|e| e.to_string())?;
    let probe = Probe::new(SimProbe::new(cable));
    let mut session = probe
        .attach_with_registry(target::CHIP, Permissions::default(), &registry)
        .map_err(|e| format!("attach: {e:?}"))?;
    let entry_pc = if load {
        ops::load_halted(&mut session, elf_path).map_err(|e| e.to_string())?
    } else {
        let mut core = session.core(0).map_err(|e| e.to_string())?;
        core.halt(TIMEOUT).map_err(|e| format!("halt: {e}"))?;
        core.reset_and_halt(TIMEOUT)
            .map_err(|e| format!("reset and halt: {e}"))?
            .pc
    };
    let mut core = session.core(0).map_err(|e| e.to_string())?;
    let fw_main = symbol(&elf, "fw_main");
    core.set_hw_breakpoint(fw_main)
        .map_err(|e| format!("breakpoint: {e}"))?;
    core.run().map_err(|e| format!("run: {e}"))?;
    core.wait_for_core_halted(TIMEOUT)
        .map_err(|e| format!("to the breakpoint: {e}"))?;
    let bp_reason = core.status().map_err(|e| e.to_string())?;
    let bp_pc: u64 = core
        .read_core_reg(core.program_counter())
        .map_err(|e| e.to_string())?;
    let sp_at_bp: u32 = core
        .read_core_reg(core.stack_pointer())
        .map_err(|e| e.to_string())?;
    core.clear_hw_breakpoint(fw_main)
        .map_err(|e| format!("clear breakpoint: {e}"))?;
    let step = core.step().map_err(|e| format!("step: {e}"))?;
    let (text_addr, text) = section(&elf, ".text");
    let mut text_read = vec![0u8; text.len().min(4096)];
    core.read(text_addr, &mut text_read)
        .map_err(|e| format!("read code: {e}"))?;
    let sdata = symbol(&elf, "_sdata");
    let (_, data) = section(&elf, ".data");
    let mut data_read = vec![0u8; data.len()];
    core.read(sdata, &mut data_read)
        .map_err(|e| format!("read data: {e}"))?;
    core.run().map_err(|e| format!("resume: {e}"))?;
    let running_after = matches!(core.status(), Ok(CoreStatus::Running));
    let seen = Seen {
        entry_pc,
        bp_pc,
        bp_reason,
        sp_at_bp,
        step_pc: step.pc,
        text: text_read,
        data: data_read,
        running_after,
    };
    let _ = resumed.send(());
    let mut rtt = ops::RttReader::attach(&mut core, &elf).map_err(|e| e.to_string())?;
    let mut decoder = FwLog::from_elf(&elf)?;
    let mut lines = Vec::new();
    while stop.try_recv().is_err() {
        let bytes = rtt.read(&mut core).map_err(|e| e.to_string())?;
        lines.extend(decoder.push(&bytes).iter().map(|l| l.to_string()));
    }
    let bytes = rtt.read(&mut core).map_err(|e| e.to_string())?;
    lines.extend(decoder.push(&bytes).iter().map(|l| l.to_string()));
    Ok((seen, lines))
}

#[test]
fn probe_rs_resets_breaks_steps_logs_and_the_node_still_works() {
    debug_then_transfer(false);
}

/// `make debug-sim`: with the ELF loaded by probe-rs.
#[test]
#[ignore = "3 minutes of co-simulation to load the image: make debug-sim"]
fn probe_rs_loads_breaks_steps_logs_and_the_node_still_works() {
    debug_then_transfer(true);
}

fn debug_then_transfer(load: bool) {
    // probe-rs's own log, with RUST_LOG=probe_rs=debug
    let _ = tracing_subscriber::fmt()
        .with_env_filter(tracing_subscriber::EnvFilter::from_default_env())
        .with_test_writer()
        .try_init();
    let elf_path: PathBuf = rnic_fw::image::build_elf().unwrap_or_else(|e| panic!("{e}"));
    let elf = std::fs::read(&elf_path).unwrap();
    let pcap = PathBuf::from(env!("CARGO_TARGET_TMPDIR")).join("probe_cosim.pcap");
    let world = world_pair_with(LinkConfig::default(), Some(&pcap), FwKind::Cpu)
        .unwrap_or_else(|e| panic!("the firmware image on the RISC-V core: {e}"));
    let cable = {
        let w = world.borrow();
        let mut hw = w.nodes[0].hw.borrow_mut();
        hw.cpu
            .as_mut()
            .expect("A's firmware is on its core")
            .plug_jtag()
    };
    let path = elf_path.clone();
    let (resumed_tx, resumed) = channel();
    let (stop, stop_rx) = channel();
    let debugger =
        std::thread::spawn(move || debug_session(cable, &path, load, resumed_tx, stop_rx));
    // The world runs while the debugger works (it clocks the JTAG pins).
    while resumed.try_recv().is_err() && !debugger.is_finished() {
        world.borrow_mut().round();
    }
    if debugger.is_finished() {
        let r = debugger.join().expect("the debugger's thread");
        panic!("probe-rs: {:?}", r.err());
    }

    let (cycles, tck) = {
        let w = world.borrow();
        let hw = w.nodes[0].hw.borrow();
        (w.cycle(), hw.cpu.as_ref().unwrap().jtag_tck_cycles())
    };
    println!("debug session: {tck} TCK cycles, {cycles} node clocks");

    // The node connects to B and a Write goes across, byte-exact.
    connected_pair(
        &world,
        |_, _| {},
        |pd_a, pd_b, qp_a| write_a_to_b(&world, pd_a, pd_b, qp_a, 16 << 10, || {}),
    );
    let s = world.borrow().nodes[0]
        .hw
        .borrow()
        .cpu
        .as_ref()
        .unwrap()
        .stats;
    assert_eq!((s.first_trap, s.stray), (None, 0), "{s:?}");

    // The debugger read the firmware's log over RTT meanwhile.
    let _ = stop.send(());
    while !debugger.is_finished() {
        world.borrow_mut().round();
    }
    let (seen, log) = debugger
        .join()
        .expect("the debugger's thread")
        .unwrap_or_else(|e| panic!("probe-rs: {e}"));
    println!(
        "reset at {:#x}, stopped at {:#x} ({:?}) with sp {:#x}, stepped to {:#x}; \
         {} octets of code and {} of data read back",
        seen.entry_pc,
        seen.bp_pc,
        seen.bp_reason,
        seen.sp_at_bp,
        seen.step_pc,
        seen.text.len(),
        seen.data.len()
    );
    for l in &log {
        println!("fw A (RTT): {l}");
    }
    assert_eq!(
        seen.entry_pc, 0,
        "reset into the image's entry (_start at 0)"
    );
    assert_eq!(
        seen.bp_pc,
        symbol(&elf, "fw_main"),
        "stopped at the breakpoint"
    );
    assert_eq!(
        seen.bp_reason,
        CoreStatus::Halted(HaltReason::Breakpoint(probe_rs::BreakpointCause::Hardware)),
    );
    assert_eq!(
        seen.sp_at_bp as u64,
        symbol(&elf, "_stack_top"),
        "fw_main entered with the stack _start set"
    );
    assert_eq!(seen.step_pc, seen.bp_pc + 4, "one instruction stepped");
    let (_, text) = section(&elf, ".text");
    assert_eq!(seen.text, text[..seen.text.len()], "code read back");
    assert_eq!(seen.data, section(&elf, ".data").1, "initial data copied");
    assert!(seen.running_after, "resumed");
    assert!(
        log.iter().any(|l| l.contains("established")),
        "the connection's log line came over RTT: {log:#?}"
    );
}
