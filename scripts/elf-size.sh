#!/usr/bin/env bash
# Prints text/data/bss of every firmware ELF in the given directory, read from
# the section headers (no binutils for RISC-V needed).
set -euo pipefail
dir=$1
found=0
for f in "$dir"/*; do
    [ -f "$f" ] && [ -x "$f" ] || continue
    head -c 4 "$f" | grep -q $'\x7fELF' || continue
    found=1
    python3 - "$f" <<'PY'
import struct, sys
path = sys.argv[1]
d = open(path, 'rb').read()
assert d[4] == 1, "expects a 32-bit ELF"
shoff, = struct.unpack_from('<I', d, 0x20)
shentsize, shnum, shstrndx = struct.unpack_from('<HHH', d, 0x2E)
secs = [struct.unpack_from('<IIIIIIIIII', d, shoff + i * shentsize) for i in range(shnum)]
strtab = secs[shstrndx]
name = lambda off: d[strtab[4] + off:d.index(b'\0', strtab[4] + off)].decode()
SHF_ALLOC, SHF_WRITE, SHF_EXEC, SHT_NOBITS = 2, 1, 4, 8
text = data = bss = 0
for s in secs:
    flags, typ, size = s[2], s[1], s[5]
    if not flags & SHF_ALLOC:
        continue
    if typ == SHT_NOBITS:
        bss += size
    elif flags & SHF_WRITE:
        data += size
    else:
        text += size  # code and read-only data
print(f"firmware ELF {path}: text {text} B, data {data} B, bss {bss} B")
PY
done
[ "$found" = 1 ] || echo "firmware ELF: none built in $dir yet"
