// `fabcheck fabric`: build a fabcheck.fabric/v1 file from what the cluster
// already has (Kubernetes node labels, ibnetdiscover, lldpcli), or check one.
// Parsing and wiring only: fabric/ does the work.
#include <filesystem>
#include <fstream>
#include <iostream>
#include <map>

#include "app/command.h"
#include "app/tunables.h"
#include "base/exit_codes.h"
#include "base/input.h"
#include "base/json_text.h"
#include "base/strings.h"
#include "fabric/importers.h"

namespace {

using namespace fabcheck;

struct Options {
  std::string from;
  std::vector<std::string> inputs;
  std::string leaf_label;
  int rails = 0;
  std::vector<std::string> ifaces;
  std::string output;
  bool json = false;
  std::string check;
};

int Fail(const std::string& message, int code) {
  std::cerr << "fabcheck fabric: " << message << "\n";
  return code;
}

// A summary a person can check against the racks: members, leaves, spines per rail.
void PrintSummary(const fabric::Fabric& f, std::ostream& out) {
  fabric::FabricIndex index(f);
  out << "fabric from " << f.source << ": " << f.members.size() << " members, " << f.rails << " rail(s)\n";
  for (int r = 0; r < f.rails; ++r) {
    size_t smallest = SIZE_MAX, largest = 0;
    for (int l = 0; l < index.leaf_count(r); ++l) {
      smallest = std::min(smallest, index.leaf_members(r, l).size());
      largest = std::max(largest, index.leaf_members(r, l).size());
    }
    out << "  rail " << r << ": " << index.leaf_count(r) << " leaves (" << smallest << ".." << largest
        << " members each), " << (index.spines(r).empty() ? std::string("spines unknown")
                                                           : std::to_string(index.spines(r).size()) + " spines")
        << (index.cores(r).empty() ? std::string() : ", " + std::to_string(index.cores(r).size()) + " cores")
        << (index.knows_routers(r) ? " with router addresses (flow paths can be traced" : "")
        << (index.knows_routers(r) && index.knows_core_routers(r) ? ", through the cores)"
            : index.knows_routers(r)                               ? ")"
                                                                   : "")
        << "\n";
  }
}

int Run(const Options& o) {
  if (!o.check.empty()) {
    auto f = fabric::LoadFabric(o.check);
    if (!f.ok()) return Fail(f.status().message(), kExitError);
    if (o.json) {
      std::cout << ToJsonText(fabric::ToJson(*f), 2) << "\n";
    } else {
      PrintSummary(*f, std::cout);
    }
    return kExitOk;
  }
  if (o.from.empty()) return Fail("give --from k8s|ibnetdiscover|lldp with its input files, or --check FILE", kExitUsage);
  if (o.inputs.empty()) return Fail("--from " + o.from + " needs input files (see --help)", kExitUsage);
  Result<fabric::Imported> imported = InvalidArgumentError("");
  if (o.from == "k8s") {
    if (o.inputs.size() != 1) return Fail("--from k8s takes one file: kubectl get nodes -o json > nodes.json", kExitUsage);
    auto text = ReadFileBounded(o.inputs[0]);
    if (!text.ok()) return Fail(text.status().message(), kExitError);
    imported = fabric::ImportK8sNodes(*text, {o.leaf_label, o.rails == 0 ? 1 : o.rails});
  } else if (o.from == "ibnetdiscover") {
    if (o.inputs.size() != 1) return Fail("--from ibnetdiscover takes one file: ibnetdiscover > fabric.txt", kExitUsage);
    auto text = ReadFileBounded(o.inputs[0]);
    if (!text.ok()) return Fail(text.status().message(), kExitError);
    imported = fabric::ImportIbnetdiscover(*text, {o.rails});
  } else if (o.from == "lldp") {
    std::vector<fabric::LldpHost> hosts;
    for (const std::string& in : o.inputs) {
      // HOST=FILE, or FILE whose name without .json is the host.
      size_t eq = in.find('=');
      std::string host = eq == std::string::npos ? std::filesystem::path(in).stem().string() : in.substr(0, eq);
      std::string path = eq == std::string::npos ? in : in.substr(eq + 1);
      auto text = ReadFileBounded(path);
      if (!text.ok()) return Fail(text.status().message(), kExitError);
      hosts.push_back({host, *text});
    }
    imported = fabric::ImportLldp(hosts, o.ifaces);
  } else {
    return Fail("--from must be k8s, ibnetdiscover or lldp", kExitUsage);
  }
  if (!imported.ok()) return Fail(imported.status().message(), kExitError);
  for (const std::string& note : imported->notes) std::cerr << "fabcheck fabric: note: " << note << "\n";
  const std::string text = o.json ? ToJsonText(fabric::ToJson(imported->fabric), 2) + "\n"
                                  : fabric::ToYaml(imported->fabric);
  if (!o.output.empty()) {
    std::ofstream out(o.output);
    out << text;
    if (!out) return Fail("cannot write " + o.output, kExitError);
    PrintSummary(imported->fabric, std::cerr);
  } else {
    std::cout << text;
  }
  return kExitOk;
}

app::RunFn Setup(CLI::App& root) {
  auto* cmd = root.add_subcommand("fabric", "Build or check the fabric file (which leaf each NIC is cabled to)");
  auto o = std::make_shared<Options>();
  app::Tunables t(cmd, "fabric");
  t.Text("--from", o->from, "Import from: k8s (kubectl get nodes -o json), ibnetdiscover, or lldp "
                            "(lldpcli -f json show neighbors, one file per host)", "k8s|ibnetdiscover|lldp");
  cmd->add_option("inputs", o->inputs, "Input files; for lldp HOST=FILE or HOST.json");
  t.Text("--leaf-label", o->leaf_label, "k8s: the node label naming the leaf switch (default: the first known one "
                                        "present)", "label");
  t.Integer("--rails", o->rails, "k8s: rails sharing the labelled leaf; ibnetdiscover: CA ports per host (0 = what "
                                 "most hosts have)", 0, 64);
  t.List("--iface", o->ifaces, "lldp: the data-plane interfaces in rail order (repeat, or a,b,c)", "interface")
      ->delimiter(',');
  t.Path("-o,--output", o->output, "Write the fabric file here (stdout otherwise)");
  t.Flag("--json", o->json, "JSON instead of YAML");
  t.Path("--check-file", o->check, "Check a fabric file and summarise it");
  std::string labels;
  for (const auto& l : fabric::KnownLeafLabels()) labels += "  " + std::string(l.label) + "  (" + std::string(l.who) + ")\n";
  cmd->footer("Known leaf labels, tried in this order:\n" + labels + R"(
Examples:
  kubectl get nodes -o json > nodes.json && fabcheck fabric --from k8s nodes.json -o fabric.yaml
  ibnetdiscover > ib.txt && fabcheck fabric --from ibnetdiscover ib.txt -o fabric.yaml
  fabcheck fabric --from lldp gpu01=gpu01.json gpu02=gpu02.json --iface ens1f0np0,ens2f0np0 -o fabric.yaml
  fabcheck fabric --check-file fabric.yaml
  fabcheck sweep --agents-file nodes.txt --topology fabric.yaml --strategy adaptive
Exit code: 0 written or valid, 3 the input or the file is wrong or unreadable (the message says where), 64 usage.
See docs/fabric.md for the schema and each source.)");
  return [o] { return Run(*o); };
}

const bool kRegistered = app::RegisterCommand({"fabric", 590, &Setup});

}  // namespace
