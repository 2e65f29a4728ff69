# Suite "devices": the live rxe devices as verbs and sysfs see them, and
# fabcheck's inventory/doctor on them when those commands exist.
for dev in $(ls /sys/class/infiniband); do
  ibv_devinfo -d "$dev" -v >/tmp/devinfo.$dev 2>&1 || { fail "ibv_devinfo -d $dev: $(tail -1 /tmp/devinfo.$dev)"; continue; }
  state=$(awk '/state:/ {print $2; exit}' /tmp/devinfo.$dev)
  mtu=$(awk '/active_mtu:/ {print $2; exit}' /tmp/devinfo.$dev)
  gid=$(ipv4_gid_index "$dev")
  say "$dev: state $state active_mtu $mtu ipv4 RoCE v2 GID index $gid ($(cat /sys/class/infiniband/$dev/ports/1/gids/$gid 2>/dev/null))"
  [ "$state" = PORT_ACTIVE ] && pass "$dev port ACTIVE" || fail "$dev port not ACTIVE ($state)"
  [ "$gid" -ge 0 ] && pass "$dev has an IPv4 RoCE v2 GID" || fail "$dev has no IPv4 RoCE v2 GID"
  result "device.$dev.active_mtu" "$mtu"
done
$RDMA link show
if fabcheck_has inventory; then
  "$FABCHECK" inventory --json >/tmp/inventory.json 2>/tmp/inventory.err; rc=$?
  # 1 and 2 mean warnings/findings about the node, not that inventory failed.
  if [ $rc -le 2 ] && [ -s /tmp/inventory.json ]; then
    for dev in $(ls /sys/class/infiniband); do
      grep -q "\"$dev\"" /tmp/inventory.json && pass "inventory lists $dev" || fail "inventory does not list $dev"
    done
    "$FABCHECK" inventory 2>&1 | head -40
  else
    fail "fabcheck inventory failed (exit $rc): $(tail -3 /tmp/inventory.err | tr '\n' ' ')"
  fi
else
  skip "fabcheck inventory: this build has no inventory command yet"
fi
if fabcheck_has doctor; then
  "$FABCHECK" doctor 2>&1 | head -40; rc=$?
  say "fabcheck doctor exit status $rc"
else
  skip "fabcheck doctor: this build has no doctor command yet"
fi
