#!/usr/bin/env bash
# The soft-RoCE lab: boots a Debian kernel under qemu (software emulation)
# with rdma_rxe and runs fabcheck's verbs code, perftest beside it, fault
# injection and the counters for real. See docs/lab.md.
#
#   tests/lab/lab.sh [--layout one|two] [--suites a,b] [--fabcheck PATH] [--param k=v]...
#
#   --layout one    one VM, rxe0/rxe1 on a veth pair (default; fast)
#   --layout two    two VMs joined by a UDP socket network (real two-node, rdma_cm)
#   --suites LIST   payload suites (tests/lab/payload/suite-*.sh); default per layout
#   --fabcheck P    the fabcheck binary to copy into the VM (default: none)
#   --param k=v     passed to the guest as fc.k=v (size, iters, lat_iters, mtu...)
#   --timeout S     wall-clock limit of each VM (default 600)
#
# Environment: FABCHECK_LAB=0 skips the lab (it boots qemu VMs for a few
# minutes); FABCHECK_LAB_CACHE (default <repo>/.lab-cache) holds the image
# and the downloaded packages; FABCHECK_LAB_ACCEL=kvm to use KVM where it works.
# Exit status: 0 passed, 1 failed, 77 skipped (printed reason: not root, no qemu,
# no kernel package), which ctest reports as a skip.
set -euo pipefail
here=$(cd "$(dirname "$0")" && pwd)
repo=$(cd "$here/../.." && pwd)
readonly kSkip=77

layout=one suites="" fabcheck="" timeout_s=600 params=()
while (($#)); do
  case $1 in
    --layout) layout=$2; shift 2 ;;
    --suites) suites=$2; shift 2 ;;
    --fabcheck) fabcheck=$2; shift 2 ;;
    --param) params+=("fc.$2"); shift 2 ;;
    --timeout) timeout_s=$2; shift 2 ;;
    -h|--help) sed -n '2,20p' "$0" | sed 's/^# \{0,1\}//'; exit 0 ;;
    *) echo "lab: unknown option $1 (see --help)" >&2; exit 64 ;;
  esac
done
case $layout in
  one) suites=${suites:-devices,perftest,fabcheck,kv,faults,kill} ;;
  two) suites=${suites:-devices,two,ladder} ;;
  *) echo "lab: --layout must be one or two, not '$layout'" >&2; exit 64 ;;
esac

log() { echo "lab: $*" >&2; }
skip() { echo "lab: SKIPPED: $*"; exit $kSkip; }
now() { date +%s.%N; }
secs() { awk -v a="$1" -v b="$2" 'BEGIN {printf "%.1f", b - a}'; }

# Preconditions: every one that fails is a skip with the reason, never a pass.
[[ ${FABCHECK_LAB:-1} != 0 ]] || skip "FABCHECK_LAB=0: the soft-RoCE lab was turned off for this run"
[[ $(id -u) == 0 ]] || skip "the soft-RoCE lab needs root (apt-get download, chroot, qemu); run as root"
need_pkgs=()
command -v qemu-system-x86_64 >/dev/null || need_pkgs+=(qemu-system-x86)
[[ -x /bin/busybox ]] || need_pkgs+=(busybox-static)
command -v cpio >/dev/null || need_pkgs+=(cpio)
command -v depmod >/dev/null || need_pkgs+=(kmod)
if ((${#need_pkgs[@]})); then
  log "installing host packages: ${need_pkgs[*]}"
  t0=$(now)
  DEBIAN_FRONTEND=noninteractive apt-get -o DPkg::Lock::Timeout=300 install -y --no-install-recommends \
    "${need_pkgs[@]}" >/tmp/fabcheck-lab-apt.log 2>&1 ||
    skip "cannot install ${need_pkgs[*]} with apt-get: $(tail -1 /tmp/fabcheck-lab-apt.log)"
  log "host packages installed in $(secs "$t0" "$(now)") s"
fi

cache=${FABCHECK_LAB_CACHE:-$repo/.lab-cache}
mkdir -p "$cache"
t0=$(now)
image=$("$here/image.sh" "$cache") || {
  rc=$?
  [[ $rc == "$kSkip" ]] && skip "the VM image cannot be built (kernel or packages unavailable); see above"
  log "image build failed"; exit 1
}
t_image=$(secs "$t0" "$(now)")
log "image ready in $t_image s: $image"

# The payload archive: the suites, and the fabcheck binary with the libraries
# it links (the guest has its own libc and rdma-core of the same Debian release).
work=$(mktemp -d /tmp/fabcheck-lab.XXXXXX)
pids=()
cleanup() {
  for p in "${pids[@]}"; do kill "$p" 2>/dev/null || true; done
  rm -rf "$work"
}
trap cleanup EXIT
mkdir -p "$work/p/payload" "$work/p/opt/fabcheck/bin" "$work/p/opt/fabcheck/lib"
cp "$here"/payload/*.sh "$work/p/payload/"
chmod +x "$work/p/payload/main.sh"
if [[ -n $fabcheck ]]; then
  [[ -x $fabcheck ]] || { log "--fabcheck $fabcheck is not an executable (build it: cmake --build BUILD --target fabcheck)"; exit 1; }
  strip -o "$work/p/opt/fabcheck/bin/fabcheck.real" "$fabcheck" 2>/dev/null || cp "$fabcheck" "$work/p/opt/fabcheck/bin/fabcheck.real"
  ldd "$fabcheck" | awk '$3 ~ /^\// {print $3}' | while read -r lib; do
    case ${lib##*/} in libc.so*|libm.so*|libpthread*|libdl.so*|librt.so*|ld-linux*) continue ;; esac
    cp -L "$lib" "$work/p/opt/fabcheck/lib/"
  done
  printf '#!/bin/sh\nLD_LIBRARY_PATH=/opt/fabcheck/lib exec /opt/fabcheck/bin/fabcheck.real "$@"\n' \
    >"$work/p/opt/fabcheck/bin/fabcheck"
  chmod +x "$work/p/opt/fabcheck/bin/fabcheck"
fi
(cd "$work/p" && find . | cpio -o -H newc --quiet | gzip -1) >"$work/payload.cpio.gz"
# The kernel unpacks concatenated archives in order: the payload lands on top.
cat "$image/initrd.img" "$work/payload.cpio.gz" >"$work/initrd.img"

accel=${FABCHECK_LAB_ACCEL:-tcg}
[[ $accel == tcg ]] && accel="tcg,thread=multi"
# -smp 2 with multi-threaded TCG: with one vCPU latency tests jump to ~4 ms.
qemu_cmd() {  # NAME EXTRA_APPEND [QEMU ARGS...]
  local name=$1 append=$2; shift 2
  echo timeout --kill-after=10 "$timeout_s" qemu-system-x86_64 -accel "$accel" -cpu max -smp 2 -m 1024M \
    -nographic -no-reboot -nodefaults -serial "file:$work/$name.log" \
    -device isa-debug-exit,iobase=0xf4,iosize=0x04 -kernel "$image/vmlinuz" -initrd "$work/initrd.img" "$@" \
    -append "'console=ttyS0 panic=-1 softlockup_panic=1 loglevel=1 edd=off fc.layout=$layout fc.suites=$suites ${params[*]} $append'"
}
# qemu's exit status -> the payload's: 2*status+1 through isa-debug-exit;
# 0 means the guest stopped without reporting (panic); 124 the timeout.
guest_status() {
  local rc=$1
  if ((rc == 124 || rc == 137)); then echo "timeout"; elif ((rc % 2 == 1)); then echo $(((rc - 1) / 2)); else echo "died($rc)"; fi
}

# One boot of the layout; sets status (0: every suite passed) and guest_died
# (a VM ended without its payload's status: a kernel panic or lockup, or the
# timeout).
boot_layout() {
  status=1 guest_died=0
  rm -f "$work"/*.log
  if [[ $layout == one ]]; then
    set +e
    eval "$(qemu_cmd vm "")" &
    pids=($!)
    while [[ ! -f $work/vm.log ]]; do sleep 0.1; done
    tail -n +1 -f "$work/vm.log" & tail_pid=$!
    wait "${pids[0]}"; rc=$?
    sleep 0.2; kill "$tail_pid" 2>/dev/null
    set -e
    g=$(guest_status "$rc")
    log "VM finished in $(secs "$t0" "$(now)") s, payload status: $g"
    [[ $g == 0 ]] && status=0
    [[ $g == timeout || $g == died* ]] && guest_died=1
    cat "$work/vm.log" >"$work/all.log"
  else
    # Two VMs on one UDP "wire": each sends to the other's port.
    base=$((20000 + RANDOM % 20000))
    set +e
    eval "$(qemu_cmd server "fc.role=server fc.self=10.0.1.1 fc.peer=10.0.1.2" \
      -netdev "socket,id=n0,udp=127.0.0.1:$((base + 1)),localaddr=127.0.0.1:$base" \
      -device virtio-net-pci,netdev=n0,mac=52:54:00:fc:00:01)" &
    pids=($!)
    eval "$(qemu_cmd client "fc.role=client fc.self=10.0.1.2 fc.peer=10.0.1.1" \
      -netdev "socket,id=n0,udp=127.0.0.1:$base,localaddr=127.0.0.1:$((base + 1))" \
      -device virtio-net-pci,netdev=n0,mac=52:54:00:fc:00:02)" &
    pids+=($!)
    while [[ ! -f $work/client.log ]]; do sleep 0.1; done
    tail -n +1 -f "$work/client.log" & tail_pid=$!
    wait "${pids[1]}"; rc_client=$?
    wait "${pids[0]}"; rc_server=$?
    sleep 0.2; kill "$tail_pid" 2>/dev/null
    set -e
    echo "----- server VM log -----"; cat "$work/server.log"
    gc=$(guest_status "$rc_client"); gs=$(guest_status "$rc_server")
    log "VMs finished in $(secs "$t0" "$(now)") s, payload status: client $gc, server $gs"
    [[ $gc == 0 && $gs == 0 ]] && status=0
    for g in "$gc" "$gs"; do [[ $g == timeout || $g == died* ]] && guest_died=1; done
    cat "$work/client.log" "$work/server.log" >"$work/all.log"
  fi
}

t0=$(now)
boot_layout
# rxe under emulation on a loaded host can lock up the guest kernel
# (softlockup_panic turns that into a prompt stop). That is the emulated
# machine failing, not a result about fabcheck: boot once more, saying so. A
# suite that fails or hangs in user space reports its status and is never
# retried.
if ((guest_died)) && [[ ${FABCHECK_LAB_REBOOT:-1} != 0 ]]; then
  log "the guest kernel stopped without the payload's status (panic, lockup or timeout; its console is above): booting once more"
  t0=$(now)
  boot_layout
fi
t_vm=$(secs "$t0" "$(now)")

# Summary: timings, results, and the fabcheck/perftest ratios of one boot.
echo "===== lab summary (layout $layout) ====="
echo "image ready: $t_image s; VM run (boot + suites): $t_vm s"
grep -ao 'layout .* up after [0-9.]* s' "$work/all.log" | sed 's/^/  /' || true
grep -a '^LAB-RESULT' "$work/all.log" | awk '{printf "  %-44s %s\n", $2, $3}' || true
grep -a '^LAB-RESULT' "$work/all.log" | awk '
  {v[$2] = $3}
  END {
    for (k in v) if (k ~ /^fabcheck\./) {
      p = k; sub(/^fabcheck\./, "perftest.", p)
      if ((p in v) && v[p] + 0 > 0) printf "  ratio %-38s %.2f (fabcheck %s / perftest %s)\n", substr(k, 10), v[k] / v[p], v[k], v[p]
    }
  }' | sort || true
# kv (suite kv, fc.kv_reps): the median over the reps of kv/L3 and of kv/perftest, per page size.
grep -a '^LAB-RESULT' "$work/all.log" | awk '
  function median(list,   n, a, i, j, t) {
    n = split(list, a, " ")
    for (i = 2; i <= n; i++) for (j = i; j > 1 && a[j - 1] + 0 > a[j] + 0; j--) { t = a[j]; a[j] = a[j - 1]; a[j - 1] = t }
    return n % 2 ? a[(n + 1) / 2] : (a[n / 2] + a[n / 2 + 1]) / 2
  }
  {v[$2] = $3}
  END {
    for (k in v) {
      if (k !~ /^kv\.ratio_to_l3\./) continue
      rest = substr(k, 16); size = rest; sub(/\..*/, "", size)
      l3[size] = l3[size] " " v[k]; n[size]++
      f = "fabcheck.kv_write_bw." rest; p = "perftest.kv_write_bw." rest
      if ((f in v) && (p in v) && v[p] + 0 > 0) pt[size] = pt[size] " " v[f] / v[p]
    }
    for (size in l3) {
      printf "  kv %s B pages, %d run(s): kv/L3 median %.2f (%s)", size, n[size], median(substr(l3[size], 2)), substr(l3[size], 2)
      if (size in pt) printf "; kv/perftest median %.2f (%s)", median(substr(pt[size], 2)), substr(pt[size], 2)
      printf "\n"
    }
  }' || true
echo "  passed: $(grep -ac '^LAB-PASS' "$work/all.log"), failed: $(grep -ac '^LAB-FAIL' "$work/all.log"), skipped: $(grep -ac '^LAB-SKIP' "$work/all.log")"
grep -a -e '^LAB-FAIL' -e '^LAB-SKIP' "$work/all.log" | sed 's/^/  /' || true
exit $status
