// The part of a board top's extern "C" shim that does not depend on the
// top's pins (board_shim.cpp, ecpix5_shim.cpp): a model with its own
// Verilator context, so several can live in one process, and an optional
// VCD of every signal.
#pragma once

#include <cstdint>

#include "verilated.h"
#include "verilated_vcd_c.h"

template <class Top>
struct VTop {
    VerilatedContext* ctx;
    Top* top;
    VerilatedVcdC* vcd;
};

// A new model, all inputs 0, evaluated once.
template <class Top>
VTop<Top>* vtop_new() {
    VTop<Top>* m = new VTop<Top>;
    m->ctx = new VerilatedContext;
    m->ctx->traceEverOn(true);
    m->top = new Top{m->ctx, "board"};
    m->vcd = nullptr;
    m->top->eval();
    return m;
}

template <class Top>
void vtop_vcd_close(VTop<Top>* m) {
    if (m->vcd != nullptr) {
        m->vcd->close();
        delete m->vcd;
        m->vcd = nullptr;
    }
}

template <class Top>
void vtop_free(VTop<Top>* m) {
    if (m == nullptr) return;
    vtop_vcd_close(m);
    m->top->final();
    delete m->top;
    delete m->ctx;
    delete m;
}

// Returns 0 on success, -1 if the file could not be opened.
template <class Top>
int vtop_vcd_open(VTop<Top>* m, const char* path) {
    vtop_vcd_close(m);
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

// Dumps the current values at `time` (the caller's time base; strictly
// increasing).
template <class Top>
void vtop_vcd_dump(VTop<Top>* m, uint64_t time) {
    if (m->vcd != nullptr) m->vcd->dump(time);
}
