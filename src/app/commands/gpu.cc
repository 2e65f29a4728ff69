// `fabcheck gpu`: copy bandwidth per GPU (like nvbandwidth) against its PCIe link.
#include <nlohmann/json.hpp>

#include <iostream>

#include "app/command.h"
#include "app/tunables.h"
#include "base/exit_codes.h"
#include "base/json_text.h"
#include "base/units.h"
#include "coll/gpu_copy.h"
#include "fabcheck/version.h"
#include "report/coll_text.h"
#include "sys/sysroot.h"

namespace {

struct Options {
  std::string size = "256M";
  int iterations = 10;
  std::string gpus;
  bool no_peer = false;
  bool json = false;
};

int Run(const Options& o) {
  using namespace fabcheck;
  coll::GpuCopyOptions options;
  auto size = ParseSize(o.size);
  if (!size.ok() || *size == 0) {
    std::cerr << "fabcheck gpu: --size: " << (size.ok() ? "must be > 0" : size.status().message()) << "\n";
    return kExitUsage;
  }
  options.bytes = *size;
  options.iterations = o.iterations;
  options.peer = !o.no_peer;
  if (!o.gpus.empty()) {
    auto gpus = ParseCpuList(o.gpus);
    if (!gpus.ok()) {
      std::cerr << "fabcheck gpu: --gpus: " << gpus.status().message() << "\n";
      return kExitUsage;
    }
    options.gpus = *gpus;
  }
  auto report = coll::MeasureGpuCopies(sys::SysRoot::Live(), options);
  if (!report.ok()) {
    std::cerr << "fabcheck gpu: " << report.status().message() << "\n";
    return report.status().code() == StatusCode::kInvalidArgument ? kExitUsage : kExitError;
  }
  report->fabcheck_version = kVersion;
  if (o.json) {
    std::cout << ToJsonText(nlohmann::json(*report), 2) << "\n";
  } else {
    std::cout << report::FormatGpuCopyReport(*report);
  }
  model::Severity worst = model::Severity::kPass;
  for (const auto& f : report->findings) worst = std::max(worst, f.severity);
  if (worst == model::Severity::kFail) return kExitFailures;
  return worst == model::Severity::kWarn ? kExitWarnings : kExitOk;
}

fabcheck::app::RunFn Setup(CLI::App& root) {
  auto* cmd = root.add_subcommand("gpu", "Measure GPU copy bandwidth (host<->device, device, peer) against the links");
  auto o = std::make_shared<Options>();
  fabcheck::app::Tunables t(cmd, "gpu");
  t.Text("--size", o->size, "Bytes per copy (e.g. 256M, 1G)", "size");
  t.Integer("--iterations", o->iterations, "Timed copies per measurement (the median is reported)", 1, 1'000'000);
  t.Text("--gpus", o->gpus, "CUDA devices to measure, e.g. 0-3 (default: all)", "device list");
  t.Flag("--no-peer", o->no_peer, "Skip GPU->GPU peer copies");
  t.Flag("--json", o->json, "Print JSON (schema fabcheck.gpu/v1)");
  cmd->footer(
      "Copies run on the copy engines (cudaMemcpyAsync) and are timed with CUDA events, as nvbandwidth does.\n"
      "h2d/d2h use pinned host memory, placed on each NUMA node when there are several (* = remote node);\n"
      "each is compared with the PCIe link in sysfs (current speed x width after encoding); a copy below 70%\n"
      "of its link, or a link running below its maximum, is flagged.\n\n"
      "Examples:\n"
      "  fabcheck gpu\n"
      "  fabcheck gpu --size 1G --gpus 0,1 --json\n\n"
      "Exit: 0 pass, 1 a GPU far below its link, 3 no CUDA/GPU, 64 bad flags.");
  return [o] { return Run(*o); };
}

const bool kRegistered = fabcheck::app::RegisterCommand({"gpu", 390, &Setup});

}  // namespace
