// The fixed part of the extern "C" shim, shared by every Verilated model.
// build.rs generates, per top `<top>`, a `shim_<top>.cpp` that includes the
// model's `V<top>.h` and this header and defines `vrnic_<top>_*` functions
// (new/free/eval/tick/VCD and one accessor per port) over `VModel<V<top>>`.
//
// Skipping the input-combinational region: Verilator 5 starts every
// `eval()` with the "ico" region, which recomputes all logic that depends
// on top-level inputs, whether or not an input changed; for rnic_core that
// is about half of the work of an evaluation. After any `eval()` every
// signal is settled for the current inputs (the post-edge logic is
// recomputed in the "nba" region), so an `eval()` with no input changed
// since the previous one (the clock aside: edges are seen by the "act"
// triggers, and no input-combinational logic reads the clock) recomputes
// exactly the values the signals already hold. build.rs patches the
// generated `_eval` to skip that region while the thread-local flag
// `vsys_skip_ico_<top>` is set; the setters record whether an input really
// changed (`dirty`). Without the patch (another Verilator) the flag is
// simply never read. With a VCD open nothing is skipped.
#pragma once
#include <cstdint>

#include "verilated.h"
#include "verilated_vcd_c.h"

template <class T>
struct VModel {
    VerilatedContext* ctx;
    T* top;
    VerilatedVcdC* vcd;  // null unless a VCD is open
    uint64_t cycle;      // completed clock cycles
    // The model has been evaluated with `clock` low since the last rising
    // edge, so Verilator will see the next rising edge without another
    // falling-edge evaluation (see vmodel_tick).
    bool low_seen;
    // An input changed since the last `eval()` (set by the shim's setters).
    bool dirty;
};

// One `eval()`, without its input-combinational region when no input
// changed since the previous one (see the top of this file). `skip_ico` is
// the model's thread-local flag, named by the shim at the call.
template <class T>
inline void vmodel_run_eval(VModel<T>* m, bool& skip_ico) {
    skip_ico = !m->dirty && m->vcd == nullptr;
    m->top->eval();
    skip_ico = false;
    m->dirty = false;
}

template <class T>
VModel<T>* vmodel_new(const char* name) {
    VModel<T>* m = new VModel<T>;
    m->ctx = new VerilatedContext;
    // Must be set before tracing can be attached later; only enables the
    // possibility, the cost is paid only while a VCD is open.
    m->ctx->traceEverOn(true);
    m->top = new T{m->ctx, name};
    m->vcd = nullptr;
    m->cycle = 0;
    m->top->clock = 0;
    m->top->eval();
    m->low_seen = true;
    m->dirty = true;
    return m;
}

// Evaluates the logic with the current inputs (no clock edge). Between ticks
// `clock` is low, so this evaluation also registers the falling edge.
template <class T>
void vmodel_eval(VModel<T>* m, bool& skip_ico) {
    vmodel_run_eval(m, skip_ico);
    m->low_seen = true;
}

template <class T>
void vmodel_vcd_close(VModel<T>* m) {
    if (m->vcd != nullptr) {
        m->vcd->close();
        delete m->vcd;
        m->vcd = nullptr;
    }
}

template <class T>
void vmodel_free(VModel<T>* m) {
    if (m == nullptr) return;
    vmodel_vcd_close(m);
    m->top->final();
    delete m->top;
    delete m->ctx;
    delete m;
}

// One clock cycle: falling edge, eval, (dump), rising edge, eval, (dump).
// Each dump is at its own time (10 per cycle), never twice at one time.
//
// Verilator detects an edge by comparing `clock` with its value at the
// previous evaluation, so the rising edge needs one evaluation with `clock`
// low first. The clock is left low after the rising-edge evaluation (not
// evaluated again: the outputs stay the post-edge values), so a caller's own
// `eval` between ticks (to read outputs that depend on inputs) is that
// low-clock evaluation, and the tick skips its own. This saves one of the
// three full evaluations per cycle of the usual "set inputs, eval, read,
// tick" loop. The rising-edge evaluation settles the logic with the current
// inputs before the edge, so inputs changed after that `eval` are still
// sampled. With a VCD open the falling-edge evaluation always runs, so the
// dump at the falling edge shows the latest inputs.
// The RTL has no falling-edge logic (rust-hdl flops are posedge only).
// Each evaluation skips the input-combinational region when no input
// changed since the one before (see the top of this file): in the usual loop
// that is the rising-edge evaluation, and for clocks with unchanged inputs
// both.
template <class T>
void vmodel_tick(VModel<T>* m, bool& skip_ico) {
    if (!m->low_seen || m->vcd != nullptr) {
        m->top->clock = 0;
        vmodel_run_eval(m, skip_ico);
    }
    if (m->vcd != nullptr) m->vcd->dump(m->cycle * 10);
    m->top->clock = 1;
    vmodel_run_eval(m, skip_ico);
    if (m->vcd != nullptr) m->vcd->dump(m->cycle * 10 + 5);
    m->top->clock = 0;
    m->low_seen = false;
    m->cycle += 1;
}

// Returns 0 on success, -1 if the file could not be opened.
template <class T>
int vmodel_vcd_open(VModel<T>* m, const char* path) {
    vmodel_vcd_close(m);
    VerilatedVcdC* v = new VerilatedVcdC;
    m->top->trace(v, 99);
    v->open(path);
    if (!v->isOpen()) {
        delete v;
        return -1;
    }
    m->vcd = v;
    return 0;
}
