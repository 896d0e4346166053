#!/bin/bash
# Build everything needed to boot Debian-kernel guests running Soft-iWARP (siw).
#
# Idempotent: each stage is skipped when its output already exists
# (delete the output, or set FORCE=1, to redo it).
#
# Output (under $WORK, default target/interop/linux-peer in the repository):
#   kernel/vmlinuz            Debian bookworm kernel (linux-image-amd64 -> 6.1.0-NN-amd64)
#   src/siw-mod/siw.ko        siw built out of tree from linux-source-6.1 (Debian does
#                             NOT enable CONFIG_RDMA_SIW, neither in 6.1 nor in 6.12 bpo)
#   rootfs/                   debootstrap --variant=minbase + rdma-core & friends + /init
#   initramfs.cpio.zst        the rootfs packed as the initramfs that run-guest.sh boots
set -euo pipefail

HERE=$(cd "$(dirname "$0")" && pwd)
WORK=${WORK:-$(cd "$HERE/../.." && pwd)/target/interop/linux-peer}
# The Debian mirror: the one this machine's apt already uses (deb822 or one-line sources).
apt_mirror() {
    local u
    u=$(grep -hsE '^URIs:' /etc/apt/sources.list.d/*.sources 2>/dev/null | awk '{print $2}' | grep -v security | head -1)
    [ -n "$u" ] || u=$(grep -hsE '^deb ' /etc/apt/sources.list /etc/apt/sources.list.d/*.list 2>/dev/null | awk '{print $2}' | grep -v security | head -1)
    echo "$u"
}
MIRROR=${MIRROR:-$(apt_mirror)}
[ -n "$MIRROR" ] || { echo "build.sh: no Debian mirror in the apt sources; set MIRROR" >&2; exit 2; }
SUITE=${SUITE:-bookworm}
FORCE=${FORCE:-0}
APT="apt-get -y -o DPkg::Lock::Timeout=900 --no-install-recommends"
export DEBIAN_FRONTEND=noninteractive

mkdir -p "$WORK"
cd "$WORK"
# One build at a time (`make interop`, and each test process that builds the
# peer under CI): a second caller waits here, then finds every stage done.
exec 9>"$WORK/.build.lock"
flock 9
t0=$(date +%s)
log() { echo "[build +$(( $(date +%s) - t0 ))s] $*"; }

# --- 0. host tools ---------------------------------------------------------
need=()
command -v qemu-system-x86_64 >/dev/null || need+=(qemu-system-x86)
command -v debootstrap >/dev/null || need+=(debootstrap)
command -v tshark >/dev/null || need+=(tshark)
command -v cpio >/dev/null || need+=(cpio)
command -v zstd >/dev/null || need+=(zstd)
command -v xz >/dev/null || need+=(xz-utils)
command -v depmod >/dev/null || need+=(kmod)
command -v make >/dev/null || need+=(make)
command -v gcc-12 >/dev/null || need+=(gcc-12)
if [ ${#need[@]} -gt 0 ]; then
    log "apt-get install ${need[*]}"
    [ -n "$(find /var/lib/apt/lists -name '*_Packages*' -mmin -1440 2>/dev/null | head -1)" ] || apt-get -o DPkg::Lock::Timeout=900 update
    echo "wireshark-common wireshark-common/install-setuid boolean false" | debconf-set-selections
    $APT install "${need[@]}"
fi

# --- 1. kernel ---------------------------------------------------------------
KPKG=${KPKG:-$(apt-cache depends linux-image-amd64 | awk '/Depends: linux-image-[0-9]/{print $2; exit}')}
KVER=${KPKG#linux-image-}
log "kernel package $KPKG (KVER=$KVER)"
mkdir -p kernel
if [ "$FORCE" = 1 ] || [ ! -f kernel/vmlinuz ] || [ ! -d "kernel/x/lib/modules/$KVER" ]; then
    (cd kernel && rm -rf x && rm -f "${KPKG}"_*.deb && apt-get download "$KPKG" && dpkg -x "${KPKG}"_*.deb x)
    cp "kernel/x/boot/vmlinuz-$KVER" kernel/vmlinuz
fi
grep -E 'CONFIG_RDMA_SIW|CONFIG_RDMA_RXE' "kernel/x/boot/config-$KVER" || true

# --- 2. siw.ko (out of tree, against the matching Debian headers) ------------
if ! dpkg -s "linux-headers-$KVER" >/dev/null 2>&1; then
    log "apt-get install linux-headers-$KVER"
    $APT install "linux-headers-$KVER"
fi
SRCPKG=linux-source-${KVER%%.0-*}          # 6.1.0-57-amd64 -> linux-source-6.1
SIW_PARAMS=${SIW_PARAMS:-1}
if [ "$FORCE" = 1 ] || [ ! -f src/siw-mod/siw.ko ] || [ ! -f "src/siw-mod/.params-$SIW_PARAMS" ]; then
    mkdir -p src && cd src
    ls "${SRCPKG}"_*.deb >/dev/null 2>&1 || apt-get download "$SRCPKG"
    log "extracting drivers/infiniband/sw/siw from $SRCPKG"
    rm -rf "$SRCPKG" siw-mod
    dpkg-deb --fsys-tarfile "${SRCPKG}"_*.deb | tar -xO "./usr/src/$SRCPKG.tar.xz" | xz -dc |
        tar -x --wildcards "$SRCPKG/drivers/infiniband/sw/siw/*"
    mkdir -p siw-mod && cp "$SRCPKG"/drivers/infiniband/sw/siw/* siw-mod/
    if [ "$SIW_PARAMS" = 1 ]; then
        # In 6.1 these MPA/TCP knobs are compile-time constants (no module parameters).
        # Turn them into read-only module parameters, defaults unchanged, so a test can
        # pick them per boot: kernel command line "siw.mpa_crc_required=1" etc.
        log "patching siw: try_gso mpa_crc_required mpa_crc_strict siw_tcp_nagle peer_to_peer mpa_version -> module params"
        K='try_gso|mpa_crc_required|mpa_crc_strict|siw_tcp_nagle|peer_to_peer'
        sed -i -E "s/^extern const bool ($K);/extern bool \1;/" siw-mod/siw.h
        sed -i -E "s/^const bool ($K);/bool \1;\nmodule_param(\1, bool, 0444);/" siw-mod/siw_main.c
        sed -i -E 's/^u_char mpa_version = MPA_REVISION_2;/&\nmodule_param(mpa_version, byte, 0444);/' siw-mod/siw_main.c
        [ "$(grep -c '^module_param(' siw-mod/siw_main.c)" = 6 ] || { echo "siw param patch did not apply"; exit 1; }
    fi
    log "building siw.ko"
    make -C "/usr/src/linux-headers-$KVER" M="$WORK/src/siw-mod" CONFIG_RDMA_SIW=m modules
    touch "siw-mod/.params-$SIW_PARAMS"
    cd "$WORK"
fi
modinfo src/siw-mod/siw.ko | grep -E '^(vermagic|depends|parm)' || true

# --- 3. guest root filesystem -------------------------------------------------
PKGS=rdma-core,ibverbs-providers,rdmacm-utils,perftest,ibverbs-utils,iproute2,kmod,busybox,procps
if [ "$FORCE" = 1 ] || [ ! -f rootfs/.debootstrap-done ]; then
    rm -rf rootfs
    log "debootstrap $SUITE minbase (+$PKGS)"
    debootstrap --variant=minbase --include=$PKGS "$SUITE" rootfs "$MIRROR"
    touch rootfs/.debootstrap-done
fi

# --- 4. modules + /init into the rootfs (cheap; always redone) ----------------
log "installing modules + /init into rootfs"
MODROOT=kernel/x/lib/modules/$KVER
mkdir -p "$MODROOT/updates"
cp src/siw-mod/siw.ko "$MODROOT/updates/siw.ko"
depmod -b kernel/x "$KVER"
WANT="virtio_pci virtio_net siw rdma_ucm ib_uverbs rdma_cm iw_cm ib_cm ib_core crc32c_generic crc32c-intel libcrc32c"
rm -rf "rootfs/lib/modules/$KVER"
mkdir -p "rootfs/lib/modules/$KVER"
cp "$MODROOT"/modules.order "$MODROOT"/modules.builtin* "rootfs/lib/modules/$KVER/"
for m in $WANT; do
    modprobe -d kernel/x -S "$KVER" --show-depends "$m" | awk '$1=="insmod"{print $2}'
done | sort -u | while read -r f; do
    rel=${f#*/lib/modules/$KVER/}
    mkdir -p "rootfs/lib/modules/$KVER/$(dirname "$rel")"
    cp "$f" "rootfs/lib/modules/$KVER/$rel"
done
depmod -b rootfs "$KVER"
install -m 0755 "$HERE/guest-init.sh" rootfs/init
echo siw-guest > rootfs/etc/hostname

# --- 5. initramfs --------------------------------------------------------------
log "packing initramfs.cpio.zst"
# trim what a serial-console test guest never needs
rm -rf rootfs/usr/share/doc/* rootfs/usr/share/man/* rootfs/usr/share/info/* \
       rootfs/usr/share/locale/* rootfs/var/cache/apt/*.bin rootfs/var/lib/apt/lists/*_Packages \
       rootfs/var/cache/apt/archives/*.deb
(cd rootfs && find . -print0 | cpio --null -o -H newc --quiet) |
    zstd -3 -T0 -q -f -o initramfs.cpio.zst.tmp
mv initramfs.cpio.zst.tmp initramfs.cpio.zst
ls -la kernel/vmlinuz initramfs.cpio.zst
log "done"
