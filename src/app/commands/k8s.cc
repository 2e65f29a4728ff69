// `fabcheck k8s lint|render|rules`: lint Kubernetes manifests for the RDMA
// stack (Multus, SR-IOV, RDMA device plugins, Network Operator, Topology
// Manager) and render the manifests fabcheck itself runs as.
#include <fmt/ranges.h>
#include <nlohmann/json.hpp>

#include <filesystem>
#include <fstream>
#include <iostream>
#include <iterator>

#include "app/command.h"
#include "app/tunables.h"
#include "base/exit_codes.h"
#include "base/input.h"
#include "base/json_text.h"
#include "base/log.h"
#include "k8s/lint.h"
#include "k8s/output.h"
#include "k8s/render.h"

namespace {

namespace k8s = fabcheck::k8s;

struct LintOptions {
  std::vector<std::string> paths;
  std::string config;
  std::string profile;
  std::string format = "text";
  std::string fail_on;
  bool verbose = false;
  bool json = false;
};

struct RenderOptions {
  std::string profile;
  std::string out_dir;
  std::string image;
  bool json = false;
};

int RunLint(const LintOptions& o) {
  k8s::LintConfig config;
  if (!o.config.empty()) {
    auto loaded = k8s::LoadLintConfig(o.config);
    if (!loaded.ok()) {
      std::cerr << "fabcheck k8s lint: " << loaded.status().message() << "\n";
      // A config that does not parse is a usage error; one that cannot be read is "could not run".
      return loaded.status().code() == fabcheck::StatusCode::kInvalidArgument ? fabcheck::kExitUsage
                                                                              : fabcheck::kExitError;
    }
    config = std::move(*loaded);
    if (auto st = k8s::ValidateConfig(config); !st.ok()) {
      std::cerr << "fabcheck k8s lint: " << st.message() << "\n";
      return fabcheck::kExitUsage;
    }
  }
  std::string profile_name = !o.profile.empty() ? o.profile : (!config.profile.empty() ? config.profile : "generic");
  auto profile = k8s::FindProfile(profile_name);
  if (!profile.ok()) {
    std::cerr << "fabcheck k8s lint: " << profile.status().message() << "\n";
    return fabcheck::kExitUsage;
  }
  k8s::Level fail_on = config.fail_on.value_or(k8s::Level::kError);
  if (!o.fail_on.empty()) fail_on = *k8s::ParseLevel(o.fail_on);

  auto result = k8s::LintPaths(o.paths, config, *profile);
  if (!result.ok()) {
    std::cerr << "fabcheck k8s lint: " << result.status().message() << "\n";
    return fabcheck::kExitError;
  }
  const std::string format = o.json ? "json" : o.format;
  if (format == "json") {
    std::cout << fabcheck::ToJsonText(k8s::FormatJson(*result), 2) << "\n";
  } else if (format == "sarif") {
    std::cout << fabcheck::ToJsonText(k8s::FormatSarif(*result), 2) << "\n";
  } else {
    std::cout << k8s::FormatText(*result, o.verbose);
  }
  if (result->FailsAt(fail_on)) return fabcheck::kExitFailures;
  // No Kubernetes object: nothing was judged, which must not read as a pass.
  if (result->set->objects.empty()) {
    std::cerr << "fabcheck k8s lint: nothing to lint: "
              << (result->set->files.empty() ? "no YAML file (*.yaml, *.yml)" : "no Kubernetes object in the YAML")
              << " in " << fmt::format("{}", fmt::join(o.paths, ", "))
              << " (give manifests, or the output of 'helm template' / 'kustomize build')\n";
    return fabcheck::kExitError;
  }
  return result->FailsAt(k8s::Level::kWarning) ? fabcheck::kExitWarnings : fabcheck::kExitOk;
}

int RunRender(const RenderOptions& o) {
  auto text = fabcheck::ReadFileBounded(o.profile, 4 << 20);
  if (!text.ok()) {
    std::cerr << "fabcheck k8s render: cannot read profile: " << text.status().message() << "\n";
    return fabcheck::kExitError;
  }
  auto profile = k8s::ParseRenderProfile(*text, o.profile);
  if (!profile.ok()) {
    std::cerr << "fabcheck k8s render: " << profile.status().message() << "\n";
    return fabcheck::kExitUsage;
  }
  if (!o.image.empty()) {
    if (auto st = k8s::ValidateImageReference(o.image); !st.ok()) {
      std::cerr << "fabcheck k8s render: --image " << st.message() << "\n";
      return fabcheck::kExitUsage;
    }
    profile->image = o.image;
  }
  // An image without a digest renders, but is a warning (exit 1): the same
  // judgement as the lint rule image.unpinned.
  std::vector<std::string> warnings;
  if (!k8s::ImagePinned(profile->image)) {
    warnings.push_back(fmt::format(
        "image {} is not pinned by digest: nodes may run different builds under one tag; pass --image "
        "NAME:TAG@sha256:... (scripts/build-image.sh writes it to build/image/fabcheck-VERSION.oci.tar.ref)",
        profile->image));
    LOG_WARN("k8s", "{}", warnings.back());
  }
  const int code = warnings.empty() ? fabcheck::kExitOk : fabcheck::kExitWarnings;
  auto files = k8s::Render(*profile);
  nlohmann::json doc = {{"schema", "fabcheck.k8s-render/v1"},
                        {"image", profile->image},
                        {"image_pinned", warnings.empty()},
                        {"warnings", warnings},
                        {"files", nlohmann::json::array()}};
  if (o.out_dir.empty()) {
    if (o.json) {
      for (const auto& f : files) doc["files"].push_back({{"name", f.name}, {"content", f.content}});
      std::cout << fabcheck::ToJsonText(doc, 2) << "\n";
      return code;
    }
    bool first = true;
    for (const auto& f : files) {
      std::cout << (first ? "" : "---\n") << "# " << f.name << "\n" << f.content;
      first = false;
    }
    return code;
  }
  std::error_code ec;
  std::filesystem::create_directories(o.out_dir, ec);
  if (ec) {
    std::cerr << "fabcheck k8s render: cannot create " << o.out_dir << ": " << ec.message() << "\n";
    return fabcheck::kExitError;
  }
  for (const auto& f : files) {
    std::string path = (std::filesystem::path(o.out_dir) / f.name).string();
    std::ofstream out(path, std::ios::binary | std::ios::trunc);
    out << f.content;
    if (!out) {
      std::cerr << "fabcheck k8s render: cannot write " << path << "\n";
      return fabcheck::kExitError;
    }
    std::cerr << "wrote " << path << "\n";
    doc["files"].push_back({{"name", f.name}, {"path", path}});
  }
  if (o.json) std::cout << fabcheck::ToJsonText(doc, 2) << "\n";
  return code;
}

fabcheck::app::RunFn Setup(CLI::App& root) {
  auto* cmd = root.add_subcommand("k8s", "Lint Kubernetes manifests for the RDMA stack; render fabcheck's manifests");
  cmd->require_subcommand(1);

  auto lint_opts = std::make_shared<LintOptions>();
  auto* lint = cmd->add_subcommand("lint", "Lint manifests (files, folders, - for stdin) as one set");
  lint->add_option("paths", lint_opts->paths,
                   "YAML files or folders (*.yaml, *.yml, recursively; in folders, YAML that is not a Kubernetes "
                   "object, such as Helm values or kustomize patches, is skipped and counted); - reads stdin")
      ->required();
  fabcheck::app::Tunables lt(lint, "k8s lint");
  lt.Path("--config", lint_opts->config, "Config file: rules include/exclude, ignorePaths, severity, params");
  lt.Text("--platform", lint_opts->profile, "Platform: generic (default), gke, aks, coreweave, openshift",
          "generic|gke|aks|coreweave|openshift")
      ->check(CLI::IsMember({"generic", "gke", "aks", "coreweave", "openshift"}));
  lt.Text("--format", lint_opts->format, "text (default), json (fabcheck.k8s-lint/v1) or sarif (2.1.0)",
          "text|json|sarif")
      ->check(CLI::IsMember({"text", "json", "sarif"}));
  lt.Flag("--json", lint_opts->json, "The same as --format json");
  lt.Text("--fail-on", lint_opts->fail_on, "Exit 2 when a finding is at or above: error (default) or warning",
          "error|warning")
      ->check(CLI::IsMember({"error", "warning"}));
  lt.Flag("-v,--verbose", lint_opts->verbose, "Text output: also say why each finding matters");
  lint->footer(
      "Examples:\n"
      "  fabcheck k8s lint deploy/ manifests/job.yaml\n"
      "  helm template charts/train | fabcheck k8s lint - --platform coreweave\n"
      "  fabcheck k8s lint k8s/ --format sarif > fabcheck.sarif\n"
      "  fabcheck k8s lint k8s/ --config fabcheck-lint.yaml --fail-on warning\n"
      "  fabcheck k8s lint ~/src/network-operator/example --platform openshift\n"
      "Suppress one rule on one object: metadata.annotations fabcheck.io/ignore-<ID>: \"<reason>\".\n"
      "Templates (Helm, Go) are not YAML until rendered: lint the output of 'helm template'.\n"
      "Exit codes: 0 no finding at warning or above, 1 warnings below --fail-on, 2 findings at or above\n"
      "--fail-on, 3 a path could not be read or held no Kubernetes object (nothing to lint), 64 usage or\n"
      "config error. Rules: fabcheck k8s rules; docs/k8s-rules.md.");

  auto render_opts = std::make_shared<RenderOptions>();
  auto* render = cmd->add_subcommand("render", "Render the manifests fabcheck needs from a cluster profile");
  fabcheck::app::Tunables rt(render, "k8s render");
  rt.Path("--cluster-profile", render_opts->profile, "Cluster profile YAML (see deploy/kubernetes/render-examples/)")
      ->required();
  rt.Path("-o,--output", render_opts->out_dir, "Write one file per part into this folder (default: stdout)");
  rt.Text("--image", render_opts->image,
          "Image to run, best pinned: REPO:TAG@sha256:DIGEST (default: the profile's image, else " +
              k8s::DefaultImage() + ", the name scripts/build-image.sh gives its image)",
          "image reference");
  rt.Flag("--json", render_opts->json,
          "Print JSON (schema fabcheck.k8s-render/v1): the image, whether it is pinned, warnings, and each file "
          "(its content, or its path with -o)");
  render->footer(
      "Profile keys: rdmaResource (required); image, name, namespace, nadName, networkType (sriov, ib-sriov,\n"
      "host-device, macvlan, ipvlan), master, subnet, mtu, vlan, gpusPerNode, nicsPerNode, nodes, agentPort,\n"
      "exporterPort, sweepPort, nodeSelector.\n"
      "Example:\n"
      "  fabcheck k8s render --cluster-profile deploy/kubernetes/render-examples/sriov-roce/profile.yaml -o out/\n"
      "  fabcheck k8s render --cluster-profile p.yaml --image \"$(cat build/image/fabcheck-*.oci.tar.ref)\" | kubectl apply -f -\n"
      "  fabcheck k8s render --cluster-profile p.yaml --image registry.example.com/fabcheck:0.1.0@sha256:$DIGEST\n"
      "      # $DIGEST: the image's 64-hex sha256 digest\n"
      "Exit codes: 0 rendered, 1 rendered with warnings (the image is not pinned by digest), 3 the profile\n"
      "could not be read or a file not written, 64 usage or a bad profile.");

  auto markdown = std::make_shared<bool>(false);
  auto json = std::make_shared<bool>(false);
  auto* rules = cmd->add_subcommand("rules", "List the lint rules (text, --json, or --markdown for docs/k8s-rules.md)");
  fabcheck::app::Tunables kt(rules, "k8s rules");
  kt.Flag("--markdown", *markdown, "Print the rule catalog as Markdown (docs/k8s-rules.md)");
  kt.Flag("--json", *json, "Print the rule catalog as JSON (fabcheck.k8s-rules/v1)");

  return [=] {
    if (lint->parsed()) return RunLint(*lint_opts);
    if (render->parsed()) return RunRender(*render_opts);
    if (rules->parsed()) {
      if (*markdown) {
        std::cout << k8s::RulesMarkdown();
      } else if (*json) {
        std::cout << fabcheck::ToJsonText(k8s::RulesJson(), 2) << "\n";
      } else {
        std::cout << k8s::RulesText();
      }
      return fabcheck::kExitOk;
    }
    return fabcheck::kExitUsage;
  };
}

const bool kRegistered = fabcheck::app::RegisterCommand({"k8s", 900, &Setup});

}  // namespace
