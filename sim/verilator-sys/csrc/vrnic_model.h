// The model handle shared by the shim and the generated port accessors.
#pragma once
#include <cstdint>

#include "Vrnic_core.h"
#include "verilated.h"
#include "verilated_vcd_c.h"

struct VrnicModel {
    VerilatedContext* ctx;
    Vrnic_core* top;
    VerilatedVcdC* vcd;  // null unless a VCD is open
    uint64_t cycle;      // completed clock cycles
};
