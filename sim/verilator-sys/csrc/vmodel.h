// The fixed part of the extern "C" shim, shared by every Verilated model.
// build.rs generates, per top `<top>`, a `shim_<top>.cpp` that includes the
// model's `V<top>.h` and this header and defines `vrnic_<top>_*` functions
// (new/free/eval/tick/VCD and one accessor per port) over `VModel<V<top>>`.
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
};

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
    return m;
}

// Evaluates the logic with the current inputs (no clock edge). Between ticks
// `clock` is low, so this evaluation also registers the falling edge.
template <class T>
void vmodel_eval(VModel<T>* m) {
    m->top->eval();
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
template <class T>
void vmodel_tick(VModel<T>* m) {
    if (!m->low_seen || m->vcd != nullptr) {
        m->top->clock = 0;
        m->top->eval();
    }
    if (m->vcd != nullptr) m->vcd->dump(m->cycle * 10);
    m->top->clock = 1;
    m->top->eval();
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
