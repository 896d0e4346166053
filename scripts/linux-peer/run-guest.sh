#!/bin/bash
# Boot one siw test guest (qemu, serial console on stdout) and run one test in it.
#
#   run-guest.sh ROLE IP PEER_IP SOCKET [TEST]
#
# ROLE    server | client
# IP      this guest's address on eth0 (/24), e.g. 10.0.0.1
# PEER_IP the other side, e.g. 10.0.0.2
# SOCKET  qemu "-netdev stream" unix socket:
#           listen:/path   this qemu listens on /path (back-to-back: the server guest)
#           /path          this qemu connects to /path (the other guest, or relay.py)
# TEST    rping (default) | ib_write_bw | ib_read_bw | ib_send_bw | ib_*_lat
#         | any other string: a shell command run as is inside the guest
#
# Environment: WORK (default target/interop/linux-peer), MEM (MiB, default 1024),
#   RPING_COUNT (default 5), PERF_ITERS (default 1000), PERF_SIZE (default 65536),
#   EXTRA_APPEND (more kernel command line), ACCEL (kvm|tcg, default: tcg), CPU, SMP,
#   GUEST_TIMEOUT (seconds before qemu is killed, default 900),
#   ATTEMPT_TIMEOUT (seconds per command attempt in the guest; client: rping 20, ib_* 120)
# Exit status: the guest's command exit status (parsed from the console), 99 if unknown.
set -euo pipefail
[ $# -ge 4 ] || { sed -n '2,20p' "$0"; exit 2; }
ROLE=$1 IP=$2 PEER=$3 SOCK=$4 TEST=${5:-rping}
HERE=$(cd "$(dirname "$0")" && pwd)
WORK=${WORK:-$(cd "$HERE/../.." && pwd)/target/interop/linux-peer}
MEM=${MEM:-1024}
RPING_COUNT=${RPING_COUNT:-5}
PERF_ITERS=${PERF_ITERS:-1000}
PERF_SIZE=${PERF_SIZE:-65536}

case "$SOCK" in
    listen:*) NET="stream,id=n0,server=on,addr.type=unix,addr.path=${SOCK#listen:}"
              rm -f "${SOCK#listen:}" ;;
    *)        NET="stream,id=n0,server=off,addr.type=unix,addr.path=$SOCK" ;;
esac

# per-attempt limit for the client (rping -c can hang after "Connection refused"
# when it comes before the server listens; the guest kills it and retries)
case "$TEST" in rping) TMO=20 ;; ib_*) TMO=120 ;; *) TMO=600 ;; esac
[ "$ROLE" = client ] || TMO=600
TMO=${ATTEMPT_TIMEOUT:-$TMO}

case "$TEST" in
    rping)
        if [ "$ROLE" = server ]; then CMD="rping -s -a $IP -v -C $RPING_COUNT"
        else CMD="rping -c -a $PEER -v -C $RPING_COUNT"; fi ;;
    ib_*)
        # perftest over rdma_cm (-R is required for iWARP); -F: no cpufreq warning
        base="$TEST -R -d siw0 -F -n $PERF_ITERS -s $PERF_SIZE"
        if [ "$ROLE" = server ]; then CMD="$base"; else CMD="$base $PEER"; fi ;;
    *)  CMD=$TEST ;;
esac

# unique MAC per guest: 52:54:00:5e:<ip octet 3>:<ip octet 4>
IFS=. read -r _ _ o3 o4 <<<"$IP"
MAC=$(printf '52:54:00:5e:%02x:%02x' "$o3" "$o4")

# /dev/kvm exists on this host but nested KVM hangs the guest kernel right after
# the real-mode setup code, so TCG is the default; ACCEL=kvm to try it anyway.
ACCEL=${ACCEL:-tcg}
if [ "$ACCEL" = kvm ]; then CPU=${CPU:-host,-arch-capabilities}; SMP=${SMP:-2}; else CPU=${CPU:-max}; SMP=${SMP:-1}; fi

APPEND="console=ttyS0 panic=-1 quiet loglevel=4 siwh_role=$ROLE siwh_ip=$IP siwh_peer=$PEER"
APPEND+=" siwh_timeout=$TMO siwh_cmd=$(printf '%s' "$CMD" | base64 -w0) ${EXTRA_APPEND:-}"

echo "HOST: $(date +%T.%N | cut -c1-12) booting $ROLE $IP (peer $PEER) accel=$ACCEL net=$NET mac=$MAC"
echo "HOST: command: $CMD"
start=$(date +%s.%N)
LOG=$(mktemp)
set +e
# qemu runs in the background so that a TERM/INT to this script (test-pair.sh's cleanup)
# reaches it; GUEST_TIMEOUT (s, default 900) bounds a guest that never powers off.
timeout -s TERM "${GUEST_TIMEOUT:-900}" \
qemu-system-x86_64 -accel "$ACCEL" -cpu "$CPU" -smp "$SMP" -m "$MEM" \
    -kernel "$WORK/kernel/vmlinuz" -initrd "$WORK/initramfs.cpio.zst" -append "$APPEND" \
    -netdev "$NET" -device virtio-net-pci,netdev=n0,mac="$MAC" \
    -display none -monitor none -serial stdio -no-reboot </dev/null > >(tee "$LOG") 2>&1 &
QPID=$!
trap 'kill $QPID 2>/dev/null' TERM INT HUP
wait $QPID; qrc=$?
trap - TERM INT HUP
kill -0 $QPID 2>/dev/null && { kill $QPID; wait $QPID; }
sleep 0.3   # let tee catch up
set -e
end=$(date +%s.%N)
rc=$(sed -n 's/.*SIWH-RESULT rc=\([0-9]*\).*/\1/p' "$LOG" | tail -1)
rm -f "$LOG"
echo "HOST: qemu exit=$qrc guest rc=${rc:-?} wall=$(awk "BEGIN{printf \"%.1f\", $end-$start}")s"
exit "${rc:-99}"
