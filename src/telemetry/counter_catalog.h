// What the exporter knows about each RDMA port counter: the file name the
// kernel uses, the metric it becomes, its help text and its width.
//
// Sources: drivers/infiniband/core/sysfs.c (PORT_PMA_ATTR widths),
// drivers/infiniband/hw/mlx5/counters.c and sw/rxe/rxe_hw_counters.c (names),
// summarised in reference/rdma-facts.md §1.3, §1.4, §2.1, §2.2. A name missing
// here is still exported, under a metric derived from its file name.
#pragma once

#include <string>
#include <string_view>

namespace fabcheck::telemetry {

struct CounterSpec {
  std::string_view file;    // name under counters/ or hw_counters/
  std::string_view metric;  // full metric name, without the node/device labels
  std::string_view help;
  int bits;                 // field width in the legacy PMA table; 0 = 64-bit or unknown
  bool octets_div4;         // counts octets / 4 ("data" counters): multiplied by 4
};

// counters/ (IB PMA PortCounters). nullptr for an unknown file.
const CounterSpec* FindPmaCounter(std::string_view file);
// hw_counters/ (mlx5, rxe, other drivers). nullptr for an unknown file.
const CounterSpec* FindHwCounter(std::string_view file);
// counters_ext/: the 64-bit PortCountersExtended set that kernels before v4.5
// show next to the legacy 32-bit counters/ (rdma-facts §1.2, §5.1). Exported
// as their own fabcheck_rdma_port_ext_* families, never merged into the
// counters/ ones: both directories exist on such a kernel, and one name for
// two sources would be a duplicate series. nullptr for an unknown file.
const CounterSpec* FindExtCounter(std::string_view file);

// Metric names for files the catalog does not know.
std::string PmaCounterMetricName(std::string_view file);
std::string HwCounterMetricName(std::string_view file);
std::string ExtCounterMetricName(std::string_view file);

}  // namespace fabcheck::telemetry
