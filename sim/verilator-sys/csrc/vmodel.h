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
    return m;
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
template <class T>
void vmodel_tick(VModel<T>* m) {
    m->top->clock = 0;
    m->top->eval();
    if (m->vcd != nullptr) m->vcd->dump(m->cycle * 10);
    m->top->clock = 1;
    m->top->eval();
    if (m->vcd != nullptr) m->vcd->dump(m->cycle * 10 + 5);
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
