// extern "C" shim over the Verilated rnic_core model (the fixed part; the
// per-port accessors are generated from the port manifest by build.rs).
#include "vrnic_model.h"

extern "C" {

VrnicModel* vrnic_new(void) {
    VrnicModel* m = new VrnicModel;
    m->ctx = new VerilatedContext;
    // Must be set before tracing can be attached later; only enables the
    // possibility, the cost is paid only while a VCD is open.
    m->ctx->traceEverOn(true);
    m->top = new Vrnic_core{m->ctx, "rnic_core"};
    m->vcd = nullptr;
    m->cycle = 0;
    m->top->clock = 0;
    m->top->eval();
    return m;
}

void vrnic_free(VrnicModel* m) {
    if (m == nullptr) return;
    if (m->vcd != nullptr) {
        m->vcd->close();
        delete m->vcd;
    }
    m->top->final();
    delete m->top;
    delete m->ctx;
    delete m;
}

void vrnic_eval(VrnicModel* m) { m->top->eval(); }

// One clock cycle: falling edge, eval, (dump), rising edge, eval, (dump).
// Each dump is at its own time (10 per cycle), never twice at one time.
void vrnic_tick(VrnicModel* m) {
    m->top->clock = 0;
    m->top->eval();
    if (m->vcd != nullptr) m->vcd->dump(m->cycle * 10);
    m->top->clock = 1;
    m->top->eval();
    if (m->vcd != nullptr) m->vcd->dump(m->cycle * 10 + 5);
    m->cycle += 1;
}

// `n` cycles with no input change in between (idle/reset runs).
void vrnic_ticks(VrnicModel* m, uint64_t n) {
    for (uint64_t i = 0; i < n; i++) vrnic_tick(m);
}

uint64_t vrnic_cycle(const VrnicModel* m) { return m->cycle; }

// Returns 0 on success, -1 if the file could not be opened.
int vrnic_vcd_open(VrnicModel* m, const char* path) {
    if (m->vcd != nullptr) {
        m->vcd->close();
        delete m->vcd;
        m->vcd = nullptr;
    }
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

void vrnic_vcd_flush(VrnicModel* m) {
    if (m->vcd != nullptr) m->vcd->flush();
}

void vrnic_vcd_close(VrnicModel* m) {
    if (m->vcd != nullptr) {
        m->vcd->close();
        delete m->vcd;
        m->vcd = nullptr;
    }
}

}  // extern "C"
