//! Directed tests of what the reference (rrs-lib) does not model: the
//! machine-mode CSRs, trap entry and return, interrupts, the timer, access
//! faults, the peripheral bus, and the clocks per instruction. Expected
//! values are worked out by hand from the RISC-V privileged spec (version
//! 20211203: mstatus, misa, mtvec, mcause codes, mtval, the counters) and
//! the memory map in `cpu/mod.rs`.

use super::asm::*;
use super::lockstep::{Bench, CoreEvent, ACK, DW, IW};
use super::map;
use super::refmodel::bus_default;

type B = Bench<IW, DW>;

/// Loads `prog` at 0, runs `events` trace events; each with its clock.
fn run(prog: &[u32], events: usize, setup: impl FnOnce(&mut B)) -> (B, Vec<(CoreEvent, u64)>) {
    let mut b = B::new(1);
    b.load(&[(0, prog)]);
    setup(&mut b);
    let mut evs = Vec::new();
    for _ in 0..events {
        let e = b.next_event(2000);
        evs.push((e, b.cycle));
    }
    (b, evs)
}

/// The value the first retired `insn` wrote to its rd, in order of
/// retirement (all of them).
fn wrote(evs: &[(CoreEvent, u64)], insn: u32) -> Vec<u32> {
    evs.iter()
        .filter(|(e, _)| e.insn == insn && e.trap.is_none())
        .map(|(e, _)| e.rd.map_or(0, |(_, v)| v))
        .collect()
}

fn traps(evs: &[(CoreEvent, u64)]) -> Vec<(u32, u32, u32, u64)> {
    evs.iter()
        .filter_map(|(e, c)| e.trap.map(|t| (e.pc, t, e.next_pc, *c)))
        .collect()
}

/// A handler at `at` that keeps mcause, mepc, mtval in x20..x22 and
/// returns past the trapping instruction.
fn skip_handler(p: &mut [u32], at: u32) {
    let h = [
        csrr(20, MCAUSE),
        csrr(21, MEPC),
        csrr(22, MTVAL),
        addi(21, 21, 4),
        csrw(MEPC, 21),
        MRET,
    ];
    p[at as usize / 4..at as usize / 4 + h.len()].copy_from_slice(&h);
}

fn image(code: &[u32]) -> Vec<u32> {
    let mut p = vec![jal(0, 0); 1 << IW];
    p[..code.len()].copy_from_slice(code);
    p
}

#[test]
fn identity_and_reset_values_of_the_csrs() {
    let code = [
        csrr(1, MISA),
        csrr(2, MSTATUS),
        csrr(3, MHARTID),
        csrr(4, MIE),
        csrr(5, MTVEC),
        csrr(6, MINSTRET),
        csrr(7, MINSTRET),
        csrr(8, 0xF11),
        csr(1, 9, MISA, 0),
        csrr(10, MISA),
        csrr(11, MIP),
    ];
    let (_, evs) = run(&image(&code), code.len(), |_| {});
    // misa: MXL = 1 (32 bits) in 31:30, extensions I (bit 8) and M (bit 12).
    assert_eq!(wrote(&evs, code[0]), [0x4000_1100]);
    // mstatus: MPP = 3 (M only), MIE = MPIE = 0 after reset.
    assert_eq!(wrote(&evs, code[1]), [0x1800]);
    assert_eq!(wrote(&evs, code[2]), [0]);
    assert_eq!(wrote(&evs, code[3]), [0]);
    assert_eq!(wrote(&evs, code[4]), [0]);
    // minstret: 5 instructions retired before, and one more each.
    assert_eq!(wrote(&evs, code[5]), [5]);
    assert_eq!(wrote(&evs, code[6]), [6]);
    assert_eq!(wrote(&evs, code[7]), [0]);
    // misa is WARL: the write is accepted and ignored.
    assert_eq!(wrote(&evs, code[9]), [0x4000_1100]);
    assert_eq!(wrote(&evs, code[10]), [0]);
    assert!(traps(&evs).is_empty());
}

#[test]
fn ecall_ebreak_and_mret() {
    let h = 0x100;
    let mut code = li(1, h).to_vec();
    code.extend([csrw(MTVEC, 1), csr(6, 0, MSTATUS, 8)]);
    let a = 4 * code.len() as u32;
    code.extend([ECALL, EBREAK, csrr(10, MSTATUS)]);
    let mut p = image(&code);
    let hc = [
        csrr(2, MCAUSE),
        csrr(3, MEPC),
        csrr(4, MTVAL),
        csrr(5, MSTATUS),
        addi(3, 3, 4),
        csrw(MEPC, 3),
        MRET,
    ];
    p[h as usize / 4..h as usize / 4 + hc.len()].copy_from_slice(&hc);
    let (_, evs) = run(&p, 5 + 2 * 8 + 1, |_| {});
    // mcause 11 (environment call from M-mode), 3 (breakpoint).
    assert_eq!(wrote(&evs, hc[0]), [11, 3]);
    assert_eq!(wrote(&evs, hc[1]), [a, a + 4]);
    // mtval: 0 for ecall; the breakpoint's address for ebreak.
    assert_eq!(wrote(&evs, hc[2]), [0, a + 4]);
    // In the handler: MPIE = 1 (MIE before the trap), MIE = 0, MPP = 3.
    assert_eq!(wrote(&evs, hc[3]), [0x1880, 0x1880]);
    // After mret: MIE = MPIE = 1.
    assert_eq!(wrote(&evs, code[code.len() - 1]), [0x1888]);
    let t = traps(&evs);
    assert_eq!(
        t.iter().map(|x| (x.0, x.1, x.2)).collect::<Vec<_>>(),
        [(a, 11, h), (a + 4, 3, h)]
    );
    // mret's next pc is mepc.
    let mret: Vec<u32> = evs
        .iter()
        .filter(|(e, _)| e.insn == MRET)
        .map(|(e, _)| e.next_pc)
        .collect();
    assert_eq!(mret, [a + 4, a + 8]);
}

#[test]
fn timer_interrupt_vectored() {
    let base = 0x200;
    let mut code = li(1, base | 1).to_vec();
    code.push(csrw(MTVEC, 1));
    code.extend(li(2, map::MTIMECMP));
    code.extend([
        sw(0, 2, 4),
        addi(3, 0, 300),
        sw(3, 2, 0),
        addi(4, 0, 0x80),
        csrw(MIE, 4),
        csr(6, 0, MSTATUS, 8),
    ]);
    let spin = 4 * code.len() as u32;
    code.push(jal(0, 0));
    let mut p = image(&code);
    let mut hc = vec![csrr(5, MCAUSE), csrr(6, MEPC), csrr(7, MIP)];
    hc.extend(li(9, map::MTIME));
    hc.extend([
        i(0, 9, 2, 8, LOAD),
        addi(10, 0, -1),
        sw(10, 2, 4),
        csrr(11, MIP),
    ]);
    // Vectored: the timer interrupt (cause 7) enters at base + 4 * 7.
    let at = (base + 28) as usize / 4;
    p[at..at + hc.len()].copy_from_slice(&hc);
    let (_, evs) = run(&p, 200, |_| {});
    let t = traps(&evs);
    assert_eq!(
        (t[0].0, t[0].1, t[0].2),
        (spin, 0x8000_0007, base + 28),
        "{t:x?}"
    );
    // Taken within a few clocks of mtime reaching mtimecmp = 300.
    assert!((300..=306).contains(&t[0].3), "taken at clock {}", t[0].3);
    assert_eq!(wrote(&evs, hc[0]), [0x8000_0007]);
    assert_eq!(wrote(&evs, hc[1]), [spin]);
    assert_eq!(wrote(&evs, hc[2]), [0x80]);
    assert!(wrote(&evs, hc[5])[0] >= 300);
    // mtimecmp high word all ones: MTIP is clear again.
    assert_eq!(wrote(&evs, hc[8]), [0]);
    assert_eq!(t.len(), 1, "MIE is 0 in the handler");
}

#[test]
fn external_interrupt_before_timer_interrupt() {
    let h = 0x200;
    let mut code = li(1, h).to_vec();
    code.push(csrw(MTVEC, 1));
    code.extend(li(2, map::MTIMECMP));
    code.extend([sw(0, 2, 4), sw(0, 2, 0)]);
    code.extend(li(4, 0x880));
    code.extend([csrw(MIE, 4), csr(6, 0, MSTATUS, 8)]);
    let spin = 4 * code.len() as u32;
    code.push(jal(0, 0));
    let mut p = image(&code);
    let mut hc = vec![csrr(5, MCAUSE), csrr(7, MIP)];
    hc.extend(li(6, ACK));
    hc.extend([sw(0, 6, 0), MRET]);
    p[h as usize / 4..h as usize / 4 + hc.len()].copy_from_slice(&hc);
    let (b, evs) = run(&p, 40, |b| {
        b.irq = true;
    });
    let t = traps(&evs);
    // Both pending and enabled: external (11) first, then the timer (7).
    assert_eq!(t[0].1, 0x8000_000B, "{t:x?}");
    assert_eq!(t[0].0, spin);
    assert_eq!(t[0].2, h, "direct mode: every trap at the base");
    assert_eq!(t[1].1, 0x8000_0007, "{t:x?}");
    assert_eq!(wrote(&evs, hc[0])[..2], [0x8000_000B, 0x8000_0007]);
    assert_eq!(wrote(&evs, hc[1])[0], 0x880);
    assert!(!b.irq, "the handler acknowledged the line");
}

#[test]
fn misaligned_and_access_faults() {
    let h = 0x300;
    let mut code = li(1, h).to_vec();
    code.push(csrw(MTVEC, 1));
    code.extend(li(2, map::DMEM));
    code.extend(li(4, 0x3000_0000));
    let p0 = 4 * code.len() as u32;
    code.extend([
        i(2, 2, 2, 3, LOAD), // lw x3, 2(x2): misaligned load
        s(1, 3, 2, 1),       // sh x3, 1(x2): misaligned store
        sw(3, 0, 16),        // sw x3, 16(x0): store to instruction memory
        i(0, 4, 2, 3, LOAD), // lw x3, 0(x4): nothing there
        jal(6, 5),           // jal x5, +6: target bit 1 set
        b(10, 0, 0, 0),      // beq x0, x0, +10
        b(10, 1, 0, 0),      // beq x0, x1, +10: not taken, no trap
        i(3, 2, 0, 3, LOAD), // lb x3, 3(x2): fine
        jalr(0, 2, 6),       // jalr x6, 0(x2): to data memory
    ]);
    let mut p = image(&code);
    skip_handler(&mut p, h);
    let (_, evs) = run(&p, 60, |_| {});
    let t: Vec<(u32, u32)> = traps(&evs).iter().map(|x| (x.0, x.1)).take(7).collect();
    assert_eq!(
        t,
        [
            (p0, 4),
            (p0 + 4, 6),
            (p0 + 8, 7),
            (p0 + 12, 5),
            (p0 + 16, 0),
            (p0 + 20, 0),
            (map::DMEM, 1)
        ]
    );
    assert_eq!(
        wrote(&evs, csrr(22, MTVAL))[..7],
        [
            map::DMEM + 2,
            map::DMEM + 1,
            16,
            0x3000_0000,
            p0 + 22,
            p0 + 30,
            map::DMEM
        ]
    );
    // The trapping jal wrote no register; the jalr that reached data
    // memory did (it retired; the fetch there faulted).
    let jal_ev = evs.iter().find(|(e, _)| e.pc == p0 + 16).unwrap();
    assert_eq!(jal_ev.0.rd, None);
    assert_eq!(wrote(&evs, jalr(0, 2, 6)), [p0 + 36]);
}

#[test]
fn illegal_instructions_and_csr_rules() {
    let h = 0x300;
    let mut code = li(1, h).to_vec();
    code.push(csrw(MTVEC, 1));
    let p0 = 4 * code.len() as u32;
    let bad = [
        0xFFFF_FFFF,
        csr(1, 0, MHARTID, 1),     // write to a read-only CSR
        csrr(3, 0x7C0),            // no such CSR
        0x0000_100F,               // fence.i (no Zifencei)
        i(0x400, 1, 1, 3, OP_IMM), // slli with imm[10] set (reserved)
        i(0, 1, 1, 3, 0x67),       // jalr with funct3 1
    ];
    code.extend(bad);
    code.extend([csr(2, 0, MHARTID, 0), csr(1, 0, MISA, 1)]); // legal: no write; WARL write
    code.extend([
        addi(7, 0, 100),
        csrw(MINSTRET, 7),
        csrr(8, MINSTRET),
        csrr(9, MINSTRETH),
    ]);
    let mut p = image(&code);
    skip_handler(&mut p, h);
    let (_, evs) = run(&p, 60, |_| {});
    let t: Vec<(u32, u32)> = traps(&evs).iter().map(|x| (x.0, x.1)).collect();
    let want: Vec<(u32, u32)> = (0..bad.len() as u32).map(|k| (p0 + 4 * k, 2)).collect();
    assert_eq!(t, want);
    // mtval of an illegal instruction: the instruction.
    assert_eq!(wrote(&evs, csrr(22, MTVAL)), bad);
    // A value written to minstret is what the next instruction reads.
    assert_eq!(wrote(&evs, csrr(8, MINSTRET)), [100]);
    assert_eq!(wrote(&evs, csrr(9, MINSTRETH)), [0]);
}

#[test]
fn peripheral_bus_wait_states_and_lanes() {
    let mut code = li(1, map::BUS + 0x10).to_vec();
    code.extend(li(2, 0x8899_AABB));
    code.extend([
        sw(2, 1, 0),
        s(5, 2, 1, 0),       // sb x2, 5(x1)
        i(0, 1, 2, 3, LOAD), // lw x3, 0(x1)
        i(3, 1, 0, 4, LOAD), // lb x4, 3(x1)
        i(2, 1, 5, 5, LOAD), // lhu x5, 2(x1)
        i(4, 1, 2, 6, LOAD), // lw x6, 4(x1)
    ]);
    let (b, evs) = run(&image(&code), code.len(), |b| b.max_wait = 6);
    let st: Vec<(u32, u32, u32)> = evs
        .iter()
        .filter(|(e, _)| e.strb != 0)
        .map(|(e, _)| (e.maddr, e.strb, e.mwdata))
        .collect();
    assert_eq!(st[0], (map::BUS + 0x10, 0xF, 0x8899_AABB));
    assert_eq!(
        (st[1].0, st[1].1, st[1].2 & 0xFF00),
        (map::BUS + 0x14, 0x2, 0xBB00)
    );
    let w14 = (bus_default(map::BUS + 0x14) & !0xFF00) | 0xBB00;
    assert_eq!(b.bus[&(map::BUS + 0x14)], w14);
    assert_eq!(wrote(&evs, code[6]), [0x8899_AABB]);
    assert_eq!(wrote(&evs, code[7]), [0xFFFF_FF88]);
    assert_eq!(wrote(&evs, code[8]), [0x8899]);
    assert_eq!(wrote(&evs, code[9]), [w14]);
}

/// Clocks per instruction, measured between retirements: 2 for ALU ops,
/// 3 for loads from memory, 35 for M-extension ops.
#[test]
fn clocks_per_instruction() {
    let mut code = li(1, map::DMEM).to_vec();
    code.extend([addi(2, 2, 1); 20]);
    code.extend([i(0, 1, 2, 3, LOAD); 20]);
    code.extend([r(1, 2, 2, 0, 4, OP); 5]);
    code.extend([r(1, 2, 2, 4, 4, OP); 5]);
    code.extend([b(4, 0, 0, 0); 5]);
    code.extend([b(4, 0, 0, 1); 5]);
    code.extend([sw(2, 1, 0); 5]);
    let (_, evs) = run(&image(&code), code.len(), |_| {});
    let d: Vec<u64> = evs.windows(2).map(|w| w[1].1 - w[0].1).collect();
    // Clocks between a retirement and the one before, averaged over a
    // group without its first (which pays the previous group's last).
    let cpi =
        |from: usize, n: usize| d[from..from + n - 1].iter().sum::<u64>() as f64 / (n - 1) as f64;
    let groups = [
        ("addi", 2, 20, 2.0),
        ("lw", 22, 20, 4.0),
        ("mul", 42, 5, 36.0),
        ("div", 47, 5, 36.0),
        // a taken branch (here to pc + 4) goes through Fetch
        ("beq taken", 52, 5, 3.0),
        ("bne not taken", 57, 5, 2.0),
        ("sw", 62, 5, 2.0),
    ];
    for (name, from, n, want) in groups {
        println!("clocks per instruction: {name} {}", cpi(from, n));
        assert_eq!(cpi(from, n), want, "{name}");
    }
}
