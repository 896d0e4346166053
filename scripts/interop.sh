#!/usr/bin/env bash
# make interop: a co-simulated rnic node (RTL + firmware + driver, `rnic-sim
# rping`) against a real Linux kernel's Soft-iWARP (siw) in a QEMU guest
# (scripts/linux-peer/), joined by the node's external port (QEMU's
# `-netdev stream` framing). Builds the guest first if needed.
#
# Every case runs both directions (node server / Linux client and the
# reverse), with siw's defaults (MPA rev 2, CRC off) and with
# "siw.mpa_crc_required=1 siw.peer_to_peer=1" (CRC on, RFC 6581 RTR):
# rdma-core's rping at 64 B, 4 KiB and 65535 B (rping's largest -S), and
# perftest's ib_write_bw, ib_read_bw and ib_send_bw -R at 64 KiB (PERF_ITERS,
# default 20).
# Each case's pcap and both sides' logs stay in target/interop/; tshark
# counts retransmissions, duplicate ACKs and malformed frames. A failing case
# prints its last frames and both logs. Exit status 0 only if every case
# passed with no malformed frame.
#
# Environment: CASES (a filter: an extended regex over case names, e.g.
# "64-"), RPING_COUNT (default 5), PERF_ITERS (default 20), RNIC_SIM (the rnic-sim binary, default
# target/release/rnic-sim), NODE_RTO_US (the node's RDMA RTO in simulated
# microseconds, default rnic-sim's), anything scripts/linux-peer/run-guest.sh
# reads.
set -uo pipefail
ROOT=$(cd "$(dirname "$0")/.." && pwd)
OUT=$ROOT/target/interop
PEER=$ROOT/scripts/linux-peer
export WORK=$OUT/linux-peer
SIM=${RNIC_SIM:-$ROOT/target/release/rnic-sim}
COUNT=${RPING_COUNT:-5}
export PERF_ITERS=${PERF_ITERS:-20} PERF_SIZE=65536
NODE_IP=10.0.0.1 LINUX_IP=10.0.0.2
mkdir -p "$OUT"

"$PEER/build.sh" > "$OUT/build.log" 2>&1 || { tail -30 "$OUT/build.log"; echo "interop: building the Linux peer failed (log: $OUT/build.log)"; exit 1; }
[ -x "$SIM" ] || { echo "interop: $SIM is missing (cargo build --release -p rnic-sim)"; exit 1; }

TS="tshark --disable-protocol rpcordma"
count() { $TS -r "$1" -Y "$2" 2>/dev/null | wc -l; }
maxms() {
    $TS -r "$1" -Y "tcp.analysis.ack_rtt && $2" -T fields -e tcp.analysis.ack_rtt 2>/dev/null |
        sort -g | tail -1 | awk '{printf "%.0f", $1 * 1000} END {if (NR == 0) printf "-"}'
}

# run_case NAME ROLE SIZE MODE [TEST]: ROLE is the node's (server|client);
# TEST is rping (default) or ib_write_bw, ib_read_bw, ib_send_bw (then SIZE is -s)
run_case() {
    local name=$1 role=$2 size=$3 mode=$4 test=${5:-rping}
    local sock=$OUT/$name.sock pcap=$OUT/$name.pcap slog=$OUT/$name-node.log glog=$OUT/$name-linux.log
    # one attempt: the node listens before the guest boots, so a failure
    # is not hidden by guest-init's retries of a client command
    local append="siwh_tries=1" crc=false
    if [ "$mode" = crc-p2p ]; then append+=" siw.mpa_crc_required=1 siw.peer_to_peer=1"; crc=true; fi
    local sim_args guest_role guest_cmd
    if [ "$test" = rping ]; then
        sim_args=(rping -S "$size" -C "$COUNT")
    else
        # run-guest.sh runs "$test -R -d siw0 -F -n PERF_ITERS -s PERF_SIZE [PEER]"
        sim_args=(perftest "$test" -s "$PERF_SIZE" -n "$PERF_ITERS")
        guest_cmd=$test
    fi
    sim_args+=(--listen "$sock" --ip $NODE_IP --crc $crc --pcap "$pcap")
    [ -n "${NODE_RTO_US:-}" ] && sim_args+=(--rto-us "$NODE_RTO_US")
    if [ "$role" = server ]; then
        sim_args+=(--server)
        guest_role=client
        [ "$test" = rping ] && guest_cmd="rping -c -a $NODE_IP -v -V -C $COUNT -S $size"
    else
        sim_args+=(--client $LINUX_IP)
        guest_role=server
        [ "$test" = rping ] && guest_cmd="rping -s -a $LINUX_IP -v -C $COUNT -S $size"
    fi
    rm -f "$sock"
    local t0; t0=$(date +%s.%N)
    "$SIM" "${sim_args[@]}" > "$slog" 2>&1 &
    local sim=$!
    for _ in $(seq 100); do [ -S "$sock" ] && break; sleep 0.1; done
    EXTRA_APPEND="$append" ATTEMPT_TIMEOUT=${ATTEMPT_TIMEOUT:-600} \
        "$PEER/run-guest.sh" $guest_role $LINUX_IP $NODE_IP "$sock" "$guest_cmd" > "$glog" 2>&1 &
    local guest=$!
    wait $sim; local src=$?
    # the guest powers off once its rping exited; bound the wait
    for _ in $(seq 120); do kill -0 $guest 2>/dev/null || break; sleep 1; done
    kill $guest 2>/dev/null
    wait $guest; local grc=$?
    local t1; t1=$(date +%s.%N)
    local secs; secs=$(awk "BEGIN{printf \"%.0f\", $t1-$t0}")
    local ping; ping=$(sed -n 's/.*pings took \([0-9.]*\) s wall.*/\1/p' "$slog")
    # perftest: the bandwidth the client measured (wall clock, MB/s)
    [ "$test" = rping ] || ping=$(sed -n 's/.*measured.*average \([0-9.]*\) MB\/s.*/\1/p' "$slog")
    local rn rl dup mal
    rn=$(count "$pcap" "tcp.analysis.retransmission && eth.src == 02:00:00:00:00:01")
    rl=$(count "$pcap" "tcp.analysis.retransmission && eth.src != 02:00:00:00:00:01")
    dup=$(count "$pcap" "tcp.analysis.duplicate_ack")
    mal=$(count "$pcap" "_ws.malformed")
    # the longest a side took to acknowledge the other's data, wall-clock ms
    local an al
    an=$(maxms "$pcap" "eth.src == 02:00:00:00:00:01")
    al=$(maxms "$pcap" "eth.src != 02:00:00:00:00:01")
    local result=pass
    if [ $src -ne 0 ] || [ $grc -ne 0 ] || [ "$mal" -ne 0 ]; then result=FAIL; fi
    printf '%-36s %-6s %5ss %7s %6s/%-6s %8s %9s %6s/%-6s\n' "$name" "$result" "$secs" "${ping:--}" "$rn" "$rl" "$dup" "$mal" "$an" "$al" | tee -a "$OUT/table.txt"
    if [ $result = FAIL ]; then
        {
            echo "---- $name: node rc=$src, Linux rc=$grc; last frames ($pcap):"
            $TS -r "$pcap" 2>/dev/null | tail -25
            echo "---- node log ($slog):"; tail -30 "$slog"
            echo "---- Linux log ($glog):"; grep -v '^\s*$' "$glog" | tail -40
            echo "----"
        } >> "$OUT/failures.txt"
        return 1
    fi
}

: > "$OUT/table.txt"; : > "$OUT/failures.txt"
header=$(printf '%-36s %-6s %6s %7s %13s %8s %9s %13s' case result time "pings s|MB/s" "retrans n/L" "dup acks" malformed "max ack ms n/L")
echo "$header"
fails=0
for mode in default crc-p2p; do
    for size in 64 4096 65535; do
        for role in server client; do
            name=rping-$size-node-$role-$mode
            [[ $name =~ ${CASES:-.} ]] || continue
            run_case "$name" $role $size $mode || fails=$((fails + 1))
        done
    done
    for test in ib_write_bw ib_read_bw ib_send_bw; do
        for role in server client; do
            name=$test-64k-node-$role-$mode
            [[ $name =~ ${CASES:-.} ]] || continue
            run_case "$name" $role 65536 $mode $test || fails=$((fails + 1))
        done
    done
done
echo
echo "interop: rping -C $COUNT, perftest -n $PERF_ITERS; time = whole case (guest boot included), 'pings s' ="
echo "rping: the node's wall time from connected to the last ping checked, perftest: the bandwidth the client"
echo "measured, MB/s of wall-clock time; retrans n/L = TCP retransmissions sent by the node / by"
echo "Linux, as tshark's analysis counts them; max ack ms n/L = the longest wall-clock time the node / Linux"
echo "took to acknowledge the other's data (tshark's ack_rtt); pcaps and logs in $OUT/"
{ echo "$header"; cat "$OUT/table.txt"; } > "$OUT/table.tmp" && mv "$OUT/table.tmp" "$OUT/table.txt"
if [ $fails -ne 0 ]; then
    cat "$OUT/failures.txt"
    echo "interop: $fails case(s) FAILED"
    exit 1
fi
echo "interop: all cases passed"
