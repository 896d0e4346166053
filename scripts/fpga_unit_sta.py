#!/usr/bin/env python3
# Ranks register-to-register path families of a synthesised ECP5 netlist (Yosys JSON) with a
# unit-delay model, to order timing cuts between nextpnr runs (nextpnr names one path per clock).
# Only the order is meaningful (docs/fpga.md). Args: netlist.json [N] [t: print traces | n] [start patterns to skip...]
# Unit-delay static timing over the Yosys netlist (same model as docs/fpga.md 86c3c0f:
# FF clk->q 0.31, 0.75 per routed net, LUT4 0.14, PFUMX/L6MUX 0.15, carry entry 0.28 + 0.043 per CCU2C,
# BRAM output 3.0). Usage: sta.py netlist.json [N]
import json, sys, collections, re
d = json.load(open(sys.argv[1]))
# The design's top: the board top, or the module Yosys marked top (a block synthesised alone, scripts/fpga_block.sh).
tops = [k for k, v in d['modules'].items() if int(str(v.get('attributes', {}).get('top', '0')), 2)]
m = d['modules']['rnic_versa5g' if 'rnic_versa5g' in d['modules'] else tops[0]]
N = int(sys.argv[2]) if len(sys.argv) > 2 else 25
names = {}
for n, v in m['netnames'].items():
    for i, b in enumerate(v['bits']):
        if isinstance(b, int):
            hid = v.get('hide_name', 0)
            if b not in names or (names[b][1] and not hid) or (not hid and len(n) < len(names[b][0]) and names[b][1] == hid):
                names[b] = (f"{n}[{i}]" if len(v['bits']) > 1 else n, hid)
drivers = {}  # bit -> (cell, port)
loads = collections.defaultdict(list)
cells = m['cells']
for cn, c in cells.items():
    for p, bits in c['connections'].items():
        dirn = c['port_directions'].get(p)
        for b in bits:
            if not isinstance(b, int): continue
            if dirn == 'output': drivers[b] = (cn, p)
            else: loads[b].append((cn, p))
SEQ = {'TRELLIS_FF', 'DP16KD', 'IDDRX1F', 'ODDRX1F', 'EHXPLLL'}
# arrival of each bit (net), with predecessor for path tracing
arr = {}; pred = {}
sys.setrecursionlimit(1000000)
def cell_out(cn, port):
    c = cells[cn]; t = c['type']
    if t == 'TRELLIS_FF': return 0.31, None
    if t == 'DP16KD': return 3.0, None
    if t in SEQ or t.startswith('$'): return 0.31, None
    ins = []
    conn = c['connections']
    if t == 'LUT4': ins = [(p, 0.14) for p in 'ABCD']
    elif t in ('PFUMX',): ins = [('ALUT', 0.15), ('BLUT', 0.15), ('C0', 0.15)]
    elif t == 'L6MUX21': ins = [('D0', 0.15), ('D1', 0.15), ('SD', 0.15)]
    elif t == 'TRELLIS_DPR16X4':
        if port != 'DO': return 0.31, None
        ins = [('RAD', 0.5)]
    elif t == 'CCU2C':
        ins = [(p + s, 0.28) for s in '01' for p in 'ABCD'] + [('CIN', 0.043)]
    best = 0.0; bp = None
    for p, dly in ins:
        for b in conn.get(p, []):
            if not isinstance(b, int): continue
            a = net_arr(b)
            if t == 'CCU2C' and p == 'CIN':
                a -= 0.75 if b in drivers and cells[drivers[b][0]]['type'] == 'CCU2C' else 0.0
            # slice-internal: LUT4 -> PFUMX data, PFUMX -> L6MUX21 data (no routing)
            if (t == 'PFUMX' and p in ('ALUT', 'BLUT')) or (t == 'L6MUX21' and p in ('D0', 'D1')):
                a -= 0.75 if b in drivers and cells[drivers[b][0]]['type'] in ('LUT4', 'PFUMX') else 0.0
            if a + dly > best: best = a + dly; bp = b
    return best, bp
def net_arr(b):
    if b in arr: return arr[b]
    if b not in drivers: arr[b] = 0.0; pred[b] = None; return 0.0
    arr[b] = 0.0  # loop guard
    cn, p = drivers[b]
    a, bp = cell_out(cn, p)
    arr[b] = a + 0.75; pred[b] = bp
    return arr[b]
ends = []
for cn, c in cells.items():
    t = c['type']
    if t not in ('TRELLIS_FF', 'DP16KD', 'TRELLIS_DPR16X4'): continue
    for p, bits in c['connections'].items():
        if c['port_directions'].get(p) != 'input' or p in ('CLK', 'CLKA', 'CLKB', 'WCK', 'RAD'): continue
        for b in bits:
            if isinstance(b, int): ends.append((net_arr(b), cn, p, b))
def nm(b): return names.get(b, (str(b),))[0]
def startof(b):
    while pred.get(b) is not None: b = pred[b]
    return b
def depth(b):
    k = 0
    while pred.get(b) is not None: b = pred[b]; k += 1
    return k
ends.sort(key=lambda e: -e[0])
seen = set(); out = 0
trace = sys.argv[3] == 't' if len(sys.argv) > 3 else False
mask = [re.compile(x) for x in sys.argv[4:]]
for a, cn, p, b in ends:
    s = startof(b)
    sn = nm(s) + (" <" + drivers[s][0][:60] + ">" if s in drivers and cells[drivers[s][0]]["type"] == "DP16KD" else "")
    key = (re.sub(r'\[\d+\]', '', sn), re.sub(r'(_\d+)+', '', re.sub(r'TRELLIS_FF_Q.*|_DO.*|\$.*', '', cn)))
    if key in seen: continue
    if any(x.search(sn) for x in mask): continue
    seen.add(key)
    print(f"{a:6.2f} ns  {depth(b):3d} nets  {sn}  ->  {cn[:90]}.{p}  (end net {nm(b)[:70]})")
    if trace:
        bb = b; path = []
        while bb is not None:
            path.append(f"{arr[bb]:.2f}:{nm(bb)[:60]}({cells[drivers[bb][0]]['type'] if bb in drivers else '-'})"); bb = pred.get(bb)
        for x in reversed(path): print('      ', x)
    out += 1
    if out >= N: break
