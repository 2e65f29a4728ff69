// The host-tuning findings of a scrape: doctor's host checks (IRQ affinity,
// CPU governor, HugePages, PCIe device control) run by the exporter on its
// inventory schedule, so a node that drifts (irqbalance restarted, a
// governor reset by a BIOS update) raises an alert instead of waiting for
// someone to run `fabcheck doctor`.
//
// Telemetry does not know the checks: the command injects a loader that runs
// them (app/commands/exporter.cc), and this only renders model::Finding.
#pragma once

#include <functional>
#include <string>
#include <vector>

#include "base/status.h"
#include "fabcheck/model/finding.h"
#include "sys/sysroot.h"
#include "telemetry/metrics.h"

namespace fabcheck::telemetry {

// Runs the host checks on a sysroot; an error means they could not run at
// all (not that a check found something).
using HostFindingsLoader = std::function<Result<std::vector<model::Finding>>(const sys::SysRoot&)>;

// One fabcheck_host_finding{check,severity,object} = 1 per finding (passes
// included, so "the check ran and found nothing" is a series too), and
// fabcheck_host_findings{severity} counts. `up` is false when the last run
// failed: then the findings of the last good run are shown, and
// fabcheck_exporter_host_checks_up says 0.
void AddHostFindingMetrics(const std::vector<model::Finding>& findings, bool up, const Labels& node,
                           MetricSet& out);

}  // namespace fabcheck::telemetry
