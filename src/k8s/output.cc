#include "k8s/output.h"

#include <fmt/format.h>

#include <map>
#include <utility>
#include <sstream>

#include "base/strings.h"
#include "fabcheck/version.h"
#include "k8s/registry.h"

namespace fabcheck::k8s {
namespace {

using nlohmann::json;

json FindingJson(const LintedFinding& lf) {
  json j = lf.finding;
  j["level"] = std::string(LevelName(lf.level));
  if (lf.rule) {
    j["title"] = lf.rule->info.title;
    j["why"] = lf.rule->info.why;
  }
  if (!lf.suppressed_by.empty()) j["suppressed_by"] = lf.suppressed_by;
  return j;
}

// Anchor of a rule in docs/k8s-rules.md (GitHub style: lower case, dots dropped).
std::string Anchor(const std::string& id) {
  std::string a;
  for (char c : id) {
    if (c == '.') continue;
    a += c;
  }
  return a;
}

// Text for Markdown: "<reason>" would be read as an HTML tag and vanish.
std::string Md(const std::string& text) {
  std::string out;
  for (char c : text) {
    if (c == '<') {
      out += "&lt;";
    } else if (c == '>') {
      out += "&gt;";
    } else if (c == '|') {
      out += "\\|";
    } else {
      out += c;
    }
  }
  return out;
}

}  // namespace

std::string SarifLevel(Level level) {
  switch (level) {
    case Level::kError: return "error";
    case Level::kWarning: return "warning";
    case Level::kInfo: return "note";
  }
  return "note";
}

std::string FileUri(const std::string& path) {
  std::string p = path;
  if (StartsWith(p, "./")) p = p.substr(2);
  std::string out;
  for (unsigned char c : p) {
    if (std::isalnum(c) || c == '-' || c == '.' || c == '_' || c == '~' || c == '/') {
      out += static_cast<char>(c);
    } else {
      out += fmt::format("%{:02X}", c);
    }
  }
  return StartsWith(path, "/") ? "file://" + out : out;
}

std::string FormatText(const LintResult& result, bool verbose) {
  std::ostringstream os;
  std::string file, object;
  for (const auto& lf : result.findings) {
    const auto& f = lf.finding;
    std::string ffile = f.location ? f.location->file : "";
    if (ffile != file) {
      if (!file.empty()) os << "\n";
      os << ffile << "\n";
      file = ffile;
      object.clear();
    }
    if (f.object != object) {
      os << "  " << f.object << "\n";
      object = f.object;
    }
    os << fmt::format("    {:<7} {}  line {}\n", LevelName(lf.level), f.id, f.location ? f.location->line : 0);
    os << "            " << f.message << "\n";
    if (verbose && lf.rule) os << "            why: " << lf.rule->info.why << "\n";
    for (const auto& e : f.evidence) os << "            evidence: " << e << "\n";
    os << "            fix: " << f.remedy << "\n";
  }
  if (!result.findings.empty()) os << "\n";
  const ManifestSet& set = *result.set;
  os << fmt::format("{} error(s), {} warning(s), {} info in {} object(s) from {} file(s); profile {}",
                    result.Count(Level::kError), result.Count(Level::kWarning), result.Count(Level::kInfo),
                    set.objects.size(), set.files.size(), result.profile);
  if (!result.suppressed.empty()) os << fmt::format("; {} suppressed by annotation", result.suppressed.size());
  if (!set.skipped_documents.empty()) {
    os << fmt::format("; {} non-Kubernetes document(s) skipped (first: {}:{})", set.skipped_documents.size(),
                      set.skipped_documents[0].file, set.skipped_documents[0].line);
  }
  os << "\n";
  return os.str();
}

namespace {

json SkippedJson(const ManifestSet& set) {
  json out = json::array();
  for (const auto& d : set.skipped_documents) out.push_back({{"file", d.file}, {"line", d.line}, {"reason", d.message}});
  return out;
}

}  // namespace

json FormatJson(const LintResult& result) {
  json findings = json::array();
  for (const auto& lf : result.findings) findings.push_back(FindingJson(lf));
  json suppressed = json::array();
  for (const auto& lf : result.suppressed) suppressed.push_back(FindingJson(lf));
  const ManifestSet& set = *result.set;
  return json{{"schema", kLintSchema},
              {"fabcheck_version", kVersion},
              {"profile", result.profile},
              {"config", result.config_file},
              {"files", set.files},
              {"documents", set.documents},
              {"objects", set.objects.size()},
              {"skipped_documents", SkippedJson(set)},
              {"rules_run", result.rules_run},
              {"summary",
               {{"error", result.Count(Level::kError)},
                {"warning", result.Count(Level::kWarning)},
                {"info", result.Count(Level::kInfo)},
                {"suppressed", result.suppressed.size()}}},
              {"findings", findings},
              {"suppressed", suppressed}};
}

namespace {

// The rule catalog of a SARIF log, and each rule's index in it: the same for
// every log, so built once.
struct SarifCatalog {
  json rules = json::array();
  std::map<std::string, int> index;
};

const SarifCatalog& Catalog() {
  static const SarifCatalog catalog = [] {
    SarifCatalog c;
    for (const auto& rule : AllRules()) {
      const RuleInfo& info = rule.info;
      c.index[info.id] = static_cast<int>(c.rules.size());
      c.rules.push_back({{"id", info.id},
                         {"name", info.id},
                         {"shortDescription", {{"text", info.title}}},
                         {"fullDescription", {{"text", info.why}}},
                         {"help", {{"text", info.remedy}, {"markdown", "**Fix:** " + info.remedy}}},
                         {"defaultConfiguration", {{"level", SarifLevel(info.level)}}},
                         {"properties", {{"tags", json::array({info.scope, "kubernetes", "rdma"})}}}});
    }
    return c;
  }();
  return catalog;
}

}  // namespace

SarifFindings FormatSarifFindings(const LintResult& result) {
  const SarifCatalog& catalog = Catalog();
  SarifFindings out;
  out.results = json::array();
  // Suppressed findings stay in the log, marked as suppressed in source
  // (the annotation) with its reason, as SARIF viewers expect.
  std::vector<const LintedFinding*> all;
  for (const auto& lf : result.findings) all.push_back(&lf);
  for (const auto& lf : result.suppressed) all.push_back(&lf);
  for (const LintedFinding* lfp : all) {
    const LintedFinding& lf = *lfp;
    const auto& f = lf.finding;
    std::string text = f.object + ": " + f.message + ". Fix: " + f.remedy;
    auto index = catalog.index.find(f.id);
    json r = {{"ruleId", f.id},
              {"ruleIndex", index != catalog.index.end() ? index->second : -1},
              {"level", SarifLevel(lf.level)},
              {"message", {{"text", text}}}};
    if (f.location && !f.location->file.empty()) {
      json physical = {{"artifactLocation", {{"uri", FileUri(f.location->file)}}}};
      if (f.location->line > 0) {
        json region = {{"startLine", f.location->line}};
        if (f.location->column > 0) region["startColumn"] = f.location->column;
        physical["region"] = region;
      }
      r["locations"] = json::array({{{"physicalLocation", physical},
                                     {"logicalLocations", json::array({{{"name", f.object}, {"kind", "object"}}})}}});
    }
    if (!f.evidence.empty()) r["properties"] = {{"evidence", f.evidence}};
    if (!lf.suppressed_by.empty()) {
      r["suppressions"] = json::array({{{"kind", "inSource"}, {"justification", lf.suppressed_by}}});
    }
    out.results.push_back(std::move(r));
  }
  out.artifacts = json::array();
  for (const auto& file : result.set->files) out.artifacts.push_back({{"location", {{"uri", FileUri(file)}}}});
  return out;
}

json FormatSarif(const LintResult& result) {
  SarifFindings findings = FormatSarifFindings(result);
  json run = {{"tool",
               {{"driver",
                 {{"name", "fabcheck"},
                  {"semanticVersion", kVersion},
                  {"rules", Catalog().rules}}}}},
              {"artifacts", std::move(findings.artifacts)},
              {"columnKind", "unicodeCodePoints"},
              {"invocations", json::array({{{"executionSuccessful", true}}})},
              {"results", std::move(findings.results)}};
  return json{{"$schema", "https://json.schemastore.org/sarif-2.1.0.json"}, {"version", "2.1.0"}, {"runs", json::array({std::move(run)})}};
}

std::string RulesMarkdown() {
  std::ostringstream os;
  os << "# fabcheck Kubernetes lint rules\n\n"
     << "<!-- Generated by `fabcheck k8s rules --markdown`; a test checks that this file is up to date. -->\n\n"
     << "`fabcheck k8s lint` reads manifests (files, folders, `-` for stdin) as one set, so rules can cross "
        "objects. Phases: YAML validity (`yaml.*`), field types (`schema.invalid`), then the rules below.\n\n"
     << "In a folder, YAML that is not a Kubernetes object (Helm values, kustomize patches, CI files: no kind and "
        "no Kubernetes apiVersion, or a list) is skipped and counted; a file named on the command line is checked "
        "strictly. Files with `{{ ... }}` template markup are not manifests yet: lint what `helm template` "
        "renders. `tests/k8s/manifests/public/` holds fixtures modelled on public manifests (Network Operator, "
        "RDMA shared device plugin, SR-IOV, Multus, MPI Operator, Volcano, JobSet, LeaderWorkerSet, GPU "
        "Operator, CoreWeave, AKS, GKE), each with the exact findings expected.\n\n"
     << "Budgets (hostile or broken YAML ends with a `yaml.syntax` error naming the file, never a hang or an "
        "exhausted memory): a file over 64 MiB is not read; a document nesting deeper than 512 levels is not "
        "linted; aliases and merge keys (`<<`) may add at most 100,000 nodes to a document beyond the nodes it "
        "writes out, since every reader walks an alias as if it were written out (a 10 KB \"billion laughs\" "
        "file stands for billions of nodes). Real manifests repeat an env block or a container through an "
        "anchor, hundreds of nodes. Merge keys are resolved through a hash of the keys already set: a map "
        "merging thousands of maps costs their entries, not their square. The same budgets hold for "
        "`--config` and `--profile` files.\n\n"
     << "Levels: **error**, **warning**, **info** (`--fail-on error|warning` sets the exit code: 0 when nothing "
        "is at or above it, 2 otherwise; 3 when a file cannot be read; 64 for a usage error).\n\n"
     << "Suppress a rule for one object with an annotation that gives the reason, on the object or its pod "
        "template: `fabcheck.io/ignore-<ID>: \"<reason>\"`. An empty reason does not suppress.\n\n"
     << "Config file (`--config FILE`):\n\n"
     << "```yaml\nprofile: generic          # generic, gke, aks, coreweave, openshift\nfailOn: error\n"
        "rules:\n  include: []            # rule IDs or globs; empty = all\n  exclude: [k8s.rails.*]\n"
        "ignorePaths: [\"charts/*\"]\nseverity:\n  k8s.privileged: error\nrdmaResources: [\"example.com/roce*\"]\n"
        "params:\n  kubelet.topology.unsatisfiable: {gpusPerNumaNode: 4, nicsPerNumaNode: 4}\n"
        "  cluster.nad.mtu: {fabricMtu: 9000}\n```\n\n";
  os << "## Profiles\n\n| profile | what the platform does |\n|---|---|\n";
  for (const auto& p : AllProfiles()) os << "| `" << p.name << "` | " << Md(p.description) << " |\n";
  os << "\n## Rules\n\n| ID | level | scope | title |\n|---|---|---|---|\n";
  for (const auto& r : AllRules()) {
    os << "| [`" << r.info.id << "`](#" << Anchor(r.info.id) << ") | " << LevelName(r.info.level) << " | "
       << r.info.scope << " | " << Md(r.info.title) << " |\n";
  }
  for (const auto& r : AllRules()) {
    const RuleInfo& i = r.info;
    os << "\n### " << i.id << "\n\n"
       << "**" << Md(i.title) << "** — level " << LevelName(i.level) << ", scope " << i.scope << ".\n\n"
       << "**Why it matters.** " << Md(i.why) << "\n\n"
       << "**Fix.** " << Md(i.remedy) << "\n\n"
       << "**Evidence.** " << Md(i.evidence) << "\n\n"
       << "Suppress: `fabcheck.io/ignore-" << i.id << ": \"<reason>\"`. Tests: `tests/k8s/manifests/" << i.id
       << "/positive.yaml` (fires), `negative.yaml` (quiet).\n";
    if (!i.params.empty()) {
      os << "\n| parameter | type | default | meaning |\n|---|---|---|---|\n";
      for (const auto& p : i.params) {
        os << "| `" << p.name << "` | " << p.type << " | " << Md(p.default_value) << " | " << Md(p.doc) << " |\n";
      }
    }
  }
  return os.str();
}

json RulesJson() {
  json rules = json::array();
  for (const auto& r : AllRules()) {
    json params = json::array();
    for (const auto& p : r.info.params) {
      params.push_back({{"name", p.name}, {"type", p.type}, {"default", p.default_value}, {"doc", p.doc}});
    }
    rules.push_back({{"id", r.info.id},
                     {"level", std::string(LevelName(r.info.level))},
                     {"scope", r.info.scope},
                     {"title", r.info.title},
                     {"why", r.info.why},
                     {"remedy", r.info.remedy},
                     {"evidence", r.info.evidence},
                     {"params", params}});
  }
  return json{{"schema", kRulesSchema}, {"rules", rules}};
}

std::string RulesText() {
  std::ostringstream os;
  for (const auto& r : AllRules()) {
    os << fmt::format("{:<36} {:<8} {:<9} {}\n", r.info.id, LevelName(r.info.level), r.info.scope, r.info.title);
  }
  return os.str();
}

}  // namespace fabcheck::k8s
